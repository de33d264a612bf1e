// `arl run --backend torch` on a small spec: the runtime drives the PyTorch trainer
// (runtime-gpu, on CPU here) through the protocol for a whole iteration.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { fileURLToPath } from "node:url";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { skipTitle } from "../helpers/skip-reporter.js";
import { runArl } from "../helpers/cli.js";
import { counterSubprocessEnv } from "../helpers/plans.js";
import { killThenResume } from "../helpers/kill-resume.js";
import { readBuffer } from "../../src/episode/buffer.js";
import { RunDirectory } from "../../src/runtime/run-dir.js";
import { pythonWithTorch } from "../../src/trainer/launch.js";

const withoutTimes = (lines: Record<string, unknown>[]) => lines.map(({ time: _time, ...rest }) => rest);

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

describe.skipIf(!hasTorch)(
  skipTitle("arl run --backend torch", !hasTorch, "needs torch in .venv: npm run setup:python"),
  () => {
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

    it("runs asynchronous rollout with cross-policy turns through PyTorch trainers (behaviour snapshot, a pool model's process)", async () => {
      const dir = mkdtempSync(path.join(tmpdir(), "arl-torch-"));
      const pipelined = spec
        .replace(
          "iterations: 1, concurrency: 4",
          'iterations: 3, concurrency: 4, async { max_policy_lag: 1 }, cross_policy { pool: ["builtin:tiny"], probability: 0.2 }',
        )
        .replace("eval { every: 1,", "eval { every: 3,");
      writeFileSync(path.join(dir, "async.arl"), pipelined);
      const run = await runArl(["run", "async.arl", "--out", "runs"], { cwd: dir });
      expect(run.stderr).toBe("");
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(/cross-policy: 1 pool model trainer started \(builtin:tiny\)/);
      expect(run.stdout).toMatch(/finished after 3 iterations/);
      const runDir = run.stdout.match(/run directory: (.*)$/m)![1]!;
      const records = readBuffer(path.join(runDir, "buffer.arlbuf")).records;
      // Rollouts 1 and 2 from version 0, rollout 3 from version 1 (the snapshot before update 2).
      // (Every episode has a first turn, and who generates it depends on the seeds alone.)
      const versions = (i: number) =>
        new Set(records.filter((r) => r.iteration === i).flatMap((r) => Array.from(r.versions).filter((v) => v >= 0)));
      expect([versions(1), versions(2), versions(3)]).toEqual([new Set([0]), new Set([0]), new Set([1])]);
      expect(records.some((r) => r.generators.includes("builtin:tiny"))).toBe(true);
    }, 300_000);

    it("generates the batches on a PyTorch generation replica, given the trainer's weights at each snapshot: the run's buffer is the one without it", async () => {
      const dir = mkdtempSync(path.join(tmpdir(), "arl-torch-"));
      const pipelined = (generation: string) =>
        spec
          .replace(
            "iterations: 1, concurrency: 4",
            `iterations: 4, concurrency: 4, async { max_staleness: 2, max_policy_lag: 2, generation: ${generation} }`,
          )
          .replace("eval { every: 1,", "eval { every: 4,");
      writeFileSync(path.join(dir, "trainer.arl"), pipelined("trainer"));
      writeFileSync(path.join(dir, "replica.arl"), pipelined("replica"));
      const [alone, replica] = await Promise.all([
        runArl(["run", "trainer.arl", "--out", "runs"], { cwd: dir }),
        runArl(["run", "replica.arl", "--out", "runs"], { cwd: dir }),
      ]);
      for (const run of [alone, replica]) {
        expect(run.stderr).toBe("");
        expect(run.code).toBe(0);
      }
      expect(replica.stdout).toMatch(/generation replica started \(pid \d+\)/);
      const records = (run: { stdout: string }) =>
        readBuffer(path.join(run.stdout.match(/run directory: (.*)$/m)![1]!, "buffer.arlbuf")).records.map((r) => [
          r.iteration,
          r.group,
          r.sample,
          Array.from(r.ids),
          Array.from(r.versions),
        ]);
      const sampled = records(replica);
      // Batches 1-3 from the snapshot of version 0, batch 4 from version 2's.
      expect(
        new Set(sampled.filter((r) => r[0] === 4).flatMap((r) => (r[4] as number[]).filter((v) => v >= 0))),
      ).toEqual(new Set([2]));
      expect(sampled).toEqual(records(alone));
    }, 300_000);

    it("writes each checkpoint while the next rollout generates, and after kill -9 --resume ends with the uninterrupted run's buffer and metrics", async () => {
      const dir = mkdtempSync(path.join(tmpdir(), "arl-torch-"));
      const text = spec
        .replace("iterations: 1, concurrency: 4", "iterations: 5, concurrency: 4")
        .replace("eval { every: 1,", "eval { every: 5,");
      writeFileSync(path.join(dir, "smoke.arl"), text);
      const reference = await runArl(["run", "smoke.arl", "--out", "reference"], { cwd: dir });
      expect(reference.stderr).toBe("");
      expect(reference.code).toBe(0);
      const referenceDir = RunDirectory.open(reference.stdout.match(/run directory: (.*)$/m)![1]!);
      const metrics = referenceDir.readMetrics();
      // Each iteration after the first waited, after its rollout, for the one before's checkpoint,
      // which the trainer wrote in the background: the line says how long.
      expect(metrics.map((m) => (m.time as { commit_before_s?: number }).commit_before_s === undefined)).toEqual([
        true,
        false,
        false,
        false,
        false,
      ]);
      expect(readdirSync(path.join(referenceDir.dir, "checkpoints"))).toEqual([
        path.basename(referenceDir.checkpointDir(5)),
      ]);
      // Killed once iteration 2 is committed: iteration 3's checkpoint may be being written.
      const { runDir, killedAt, resumed } = await killThenResume(
        path.join(dir, "smoke.arl"),
        path.join(dir, "runs"),
        "torch_smoke",
        undefined,
        2,
      );
      expect(killedAt).toBeGreaterThanOrEqual(2);
      expect(resumed.stderr).toBe("");
      expect(resumed.exitCode).toBe(0);
      const after = RunDirectory.open(runDir);
      expect(withoutTimes(after.readMetrics())).toEqual(withoutTimes(metrics));
      // Ids and versions, not the sampled log-probs: which episodes' turns share a generate batch
      // follows when their envs answer, and PyTorch's CPU kernels round a batch of another shape
      // differently (about 1e-7), in two uninterrupted runs alike.
      const records = (d: RunDirectory) =>
        readBuffer(d.bufferPath).records.map((r) => [
          r.iteration,
          r.group,
          r.sample,
          Array.from(r.ids),
          Array.from(r.versions),
        ]);
      expect(records(after)).toEqual(records(referenceDir));
    }, 600_000);

    it("passes the conformance suite through the PyTorch trainer: arl conformance --trainer torch", async () => {
      const repo = fileURLToPath(new URL("../..", import.meta.url));
      const run = await runArl(["conformance", "--trainer", "torch", "test/conformance"], { cwd: repo });
      expect(run.stderr).toBe("");
      expect(run.code).toBe(0);
      expect(run.stdout.trim().split("\n").at(-1)).toMatch(/^\d+ passed, 0 failed$/);
    }, 300_000);
  },
);
