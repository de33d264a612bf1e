// `arl run --backend torch` on a small spec: the runtime drives the PyTorch trainer
// (runtime-gpu, on CPU here) through the protocol for a whole iteration.
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { fileURLToPath } from "node:url";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runArl } from "../helpers/cli.js";
import { counterSubprocessEnv } from "../helpers/plans.js";
import { pythonWithTorch } from "../../src/runtime/trainer-command.js";

const hasTorch = spawnSync(pythonWithTorch(), ["-c", "import torch"], { stdio: "ignore" }).status === 0;

const spec = `
experiment torch_smoke {
  seed: 1
  policy {
    model: "builtin:tiny"
    sampling { temperature: 1.0, max_new_tokens: 24 }
  }
  ${counterSubprocessEnv(10)}
  harness { max_turns: 2, max_response_tokens: 24 }
  reward { success: outcome.success }
  algorithm { group_size: 2, advantage { baseline: leave_one_out } }
  rollout { tasks_per_batch: 2, iterations: 1, concurrency: 4 }
  eval { every: 1, tasks: 2, k: [1], before_training: false }
  resources { backend: torch }
}
`;

describe.skipIf(!hasTorch)("arl run --backend torch", () => {
  it("finishes an iteration on CPU through the PyTorch trainer", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "arl-torch-"));
    writeFileSync(path.join(dir, "smoke.arl"), spec);
    const run = await runArl(["run", "smoke.arl", "--out", "runs"], { cwd: dir });
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/finished after 1 iterations/);
    expect(run.stdout).toMatch(/iteration 1\/1: success/);
    // It ends with the summary table and the path of its report.
    expect(run.stdout).toMatch(/iteration\s+train success\s+reward\s+eval pass@1 \[95% CI\]/);
    expect(run.stdout).toMatch(/^report: .*report\.html$/m);
  }, 300_000);

  it("passes the conformance suite through the PyTorch trainer: arl conformance --trainer torch", async () => {
    const repo = fileURLToPath(new URL("../..", import.meta.url));
    const run = await runArl(["conformance", "--trainer", "torch", "test/conformance"], { cwd: repo });
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout.trim().split("\n").at(-1)).toMatch(/^\d+ passed, 0 failed$/);
  }, 300_000);
});
