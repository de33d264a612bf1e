// `arl run` of the agent examples (experiments/agents/): support.py and summarizing.py, plain
// Python on the official openai SDK, trained in one small experiment on builtin:tiny through
// the run's gateway. The summarizing agent rewrites its history, so the batch is step-wise: its
// calls are records of their own with their step and `rendered` context, the support agent's
// episodes one record each, and metrics.jsonl counts the gateway's calls and rewrites. A program
// that cannot start its Python (a missing module) stops the run at the first batch, saying why.
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { readBuffer, Role } from "../../src/episode/buffer.js";
import { runArl } from "../helpers/cli.js";
import { embeddedTrainerFlag } from "../helpers/plans.js";

const examples = fileURLToPath(new URL("../../experiments/agents/", import.meta.url));
// The repository's Python, which has the openai SDK, named explicitly as a user names theirs.
const python = fileURLToPath(new URL("../../.venv/bin/python", import.meta.url));

/** The examples' programs and task files in a folder of their own, with `spec` beside them. */
function workspace(spec: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), "arl-agent-run-"));
  mkdirSync(path.join(dir, "data"));
  for (const f of ["support.py", "summarizing.py", "data/support-tasks.jsonl", "data/summarizing-tasks.jsonl"])
    copyFileSync(path.join(examples, f), path.join(dir, f));
  writeFileSync(path.join(dir, "spec.arl"), spec);
  return dir;
}

const spec = (supportCommand: string) => `import "std/algorithms" as algo
import "std/envs/agent" as agent
experiment agents {
  seed: 2
  policy { model: "builtin:tiny?hidden=24&embed=16&heads=2&key=8", sampling { max_new_tokens: 8 } }
  env support extends agent.program {
    command: ${supportCommand}
    task_file: "./data/support-tasks.jsonl"
    signals {
      resolved { scope: outcome, type: bool }
      found_order { scope: outcome, type: bool }
    }
  }
  env rivers extends agent.program {
    command: ["${python}", "summarizing.py"]
    task_file: "./data/summarizing-tasks.jsonl"
    signals {
      correct { scope: outcome, type: bool }
      mentions_city { scope: outcome, type: bool }
    }
  }
  harness { max_turns: 6, max_response_tokens: 32 }
  reward { success: support.resolved + rivers.correct }
  algorithm extends algo.rloo { group_size: 2 }
  rollout { tasks_per_batch: 2, iterations: 1, concurrency: 4 }
  eval { split: test, success: support.resolved + rivers.correct > 0, every: 1, before_training: false, tasks: 1, k: [1] }
  resources { backend: local }
}
`;

describe("arl run of the agent examples", () => {
  it("trains both agents through the gateway; the rewriting one step-wise, with its rewrites counted", async () => {
    const dir = workspace(spec(`["${python}", "support.py"]`));
    const run = await runArl(["run", "spec.arl", "--out", "runs", ...embeddedTrainerFlag], { cwd: dir });
    expect(run.code, run.stderr).toBe(0);
    const runDir = path.join(
      dir,
      "runs",
      "agents",
      "default",
      readdirSync(path.join(dir, "runs", "agents", "default"))[0]!,
    );
    const metrics = JSON.parse(readFileSync(path.join(runDir, "metrics.jsonl"), "utf8").trim()) as Record<
      string,
      unknown
    >;
    expect(metrics.agent_errors).toBe(0);
    expect(metrics.end_reasons).toMatchObject({ env_error: 0 });
    const { records } = readBuffer(path.join(runDir, "buffer.arlbuf"));
    const rivers = records.filter((r) => r.env === "rivers");
    const support = records.filter((r) => r.env === "support");
    expect(rivers.length).toBeGreaterThan(2);
    expect(support.length).toBe(2);
    // The summarizing agent's calls after its rewrite are samples of their own, with their step
    // and the earlier replies as rendered context (never trained on).
    expect(rivers.every((r) => r.step !== undefined)).toBe(true);
    expect(rivers.some((r) => (r.step ?? 0) > 0 && Array.from(r.roles).includes(Role.rendered))).toBe(true);
    expect(metrics.gateway_rewrites).toBeGreaterThan(0);
    const episodes = new Map(records.map((r) => [`${r.env}/${r.group}/${r.sample}`, r.turns]));
    expect(metrics.gateway_calls).toBe([...episodes.values()].reduce((s, n) => s + n, 0));
    // Every record trains on tokens the policy generated, with their versions and log-probs.
    for (const r of records) expect(Array.from(r.roles).includes(Role.generated), `${r.env} ${r.sample}`).toBe(true);
  }, 120_000);

  it("a program whose Python lacks a module stops the run at the first batch, naming the module and the fix", async () => {
    const dir = workspace(
      spec('["python3", "-c", "import arl_missing_agent_module"]').replace(
        `["${python}", "summarizing.py"]`,
        '["python3", "-c", "import arl_missing_agent_module"]',
      ),
    );
    const run = await runArl(["run", "spec.arl", "--out", "runs", ...embeddedTrainerFlag], { cwd: dir });
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain(
      "every episode of the first batch (4) ended in an env error, so the run stops rather than train on nothing",
    );
    expect(run.stderr).toContain("pip install arl_missing_agent_module");
  }, 60_000);
});
