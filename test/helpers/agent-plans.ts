// A one-env experiment around an agent program, compiled in a folder of its own with its task
// file (one JSON object a line), and the context its episodes are played in: the real gateway
// and a policy over the embedded trainer in-process (the agent runner's and load test's).
import { ToolCallValidator } from "../../src/contracts/tool-calls.js";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Plan } from "../../src/plan/schema.js";
import { lowerModel } from "../../src/plan/lower.js";
import { Compiler } from "../../src/compiler.js";
import { DEFAULT_TEMPLATE } from "../../src/episode/conversation.js";
import type { Gateway } from "../../src/inference/gateway/contract.js";
import { startGateway } from "../../src/inference/gateway/server.js";
import { RunDirectory } from "../../src/runtime/run-dir.js";
import type { AgentEpisodeContext } from "../../src/runtime/run/agent-episode.js";
import { RunStreams } from "../../src/runtime/run/streams.js";
import { tinyPolicy } from "./tiny-policy.js";
import { EOS } from "../../src/trainer/embedded/tokenizer.js";

/** The plan of env `helper` running `command` on `tasks`, with outcome signals ok (bool) and steps (count). */
export function agentPlan(
  command: readonly string[],
  tasks: readonly object[],
  body = "",
): { dir: string; plan: Plan } {
  const dir = mkdtempSync(path.join(tmpdir(), "arl-agent-"));
  writeFileSync(path.join(dir, "tasks.jsonl"), tasks.map((t) => `${JSON.stringify(t)}\n`).join(""));
  const file = path.join(dir, "spec.arl");
  writeFileSync(
    file,
    `import "std/algorithms" as algo
import "std/envs/agent" as agent
experiment agents {
  policy { model: "builtin:tiny", sampling { max_new_tokens: 8 } }
  env helper extends agent.program {
    command: ${JSON.stringify(command)}
    task_file: "./tasks.jsonl"
    split { train: 0.5, test: 0.5 }
    signals {
      ok { scope: outcome, type: bool }
      steps { scope: outcome, type: count }
    }
  }
  harness { max_turns: 4, max_response_tokens: 16 }
  reward { ok: outcome.ok }
  algorithm extends algo.rloo {}
  eval { split: test, success: outcome.ok }
${body}
}
`,
  );
  const result = new Compiler().check(file);
  const errors = result.diagnostics.filter((d) => d.severity === "error");
  if (errors.length > 0 || !result.model)
    throw new Error(`spec does not compile:\n${errors.map((e) => `${e.range.start.line}: ${e.message}`).join("\n")}`);
  const plan = lowerModel(result.model).plans[0]?.plan;
  if (!plan) throw new Error("no plan");
  return { dir, plan };
}

/** The context agent episodes of `plan` are played in (programs run in `dir`); close its gateway after. */
export async function agentEpisodeContext(
  plan: Plan,
  dir: string,
  vocabulary: readonly string[],
): Promise<AgentEpisodeContext & { gateway: Gateway }> {
  const { policy } = await tinyPolicy(plan, vocabulary);
  const gateway = await startGateway({ log: () => undefined });
  const runDir = RunDirectory.create(mkdtempSync(path.join(tmpdir(), "arl-agent-run-")), plan);
  return {
    plan,
    runDir,
    gateway,
    policy,
    rolloutPolicy: policy,
    template: DEFAULT_TEMPLATE,
    stopIds: [EOS],
    streams: new RunStreams(0),
    dataRoot: dir,
    halt: undefined,
    validator: new ToolCallValidator(),
    modelContext: { maxContext: null, maxTokenBytes: null },
  };
}
