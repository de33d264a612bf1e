// A one-env experiment around an agent program, compiled in a folder of its own with its task
// file (one JSON object a line): the agent runner's and the gateway load test's plan.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Plan } from "../../src/plan/schema.js";
import { lowerModel } from "../../src/plan/lower.js";
import { Compiler } from "../../src/compiler.js";

/** The plan of env `helper` running `command` on `tasks`, with outcome signals ok (bool) and steps (count). */
export function agentPlan(command: readonly string[], tasks: readonly object[], body = ""): { dir: string; plan: Plan } {
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
  if (errors.length > 0 || !result.model) throw new Error(`spec does not compile:\n${errors.map((e) => `${e.range.start.line}: ${e.message}`).join("\n")}`);
  const plan = lowerModel(result.model).plans[0]?.plan;
  if (!plan) throw new Error("no plan");
  return { dir, plan };
}
