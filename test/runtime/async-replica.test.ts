// The generation replica (rollout.async.generation: replica, run/replica.ts, docs/semantics.md
// §7), with the embedded trainer on both sides: a second trainer process generates the batches
// while the trainer trains, given the weights by a policy-only save and load wherever the
// snapshot is taken. Without in-flight updates a run with the replica is the run without it,
// token for token; in flight each token keeps the version the replica reports; a run killed with
// batches in flight resumes to the uninterrupted one, the replica restarting from the checkpoint.
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { envKinds } from "../../src/envs/registry.js";
import type { Plan } from "../../src/plan/schema.js";
import { oldestVersion } from "../../src/rl/lag.js";
import { readBuffer, Role } from "../../src/episode/buffer.js";
import { executePlan } from "../../src/runtime/orchestrator.js";
import { RunDirectory } from "../../src/runtime/run-dir.js";
import { killThenResume } from "../helpers/kill-resume.js";
import { compilePlans, countingExperiment, embeddedTrainer, embeddedTrainerCommand } from "../helpers/plans.js";
import { shareCpuThreads } from "../../src/runtime/run/replica.js";
import { availableParallelism } from "node:os";

const spec = (iterations: number, async: string) =>
  countingExperiment({
    name: "counting",
    seed: 5,
    rollout: `iterations: ${iterations}, async { ${async} }`,
    evaluation: "eval { every: 3, tasks: 2, k: [1] }",
  });

const withoutTimes = (lines: Record<string, unknown>[]) => lines.map(({ time: _time, ...rest }) => rest);
const records = (d: RunDirectory) =>
  readBuffer(d.bufferPath).records.map((r) => [
    r.iteration,
    r.group,
    r.sample,
    Array.from(r.ids),
    Array.from(r.versions),
    Array.from(r.logprobs),
  ]);

async function run(plan: Plan, log: string[] = []): Promise<RunDirectory> {
  const runDir = RunDirectory.create(mkdtempSync(path.join(tmpdir(), "arl-async-replica-")), plan);
  await executePlan({ plan, runDir, trainer: embeddedTrainer, envs: envKinds, log: (line) => log.push(line) });
  return runDir;
}

describe("asynchronous rollout with a generation replica", () => {
  it("gives the trainer and the replica half the CPU threads each, unless the user set a count", () => {
    const [alone] = compilePlans(spec(2, "max_staleness: 2, max_policy_lag: 2"));
    const [withReplica] = compilePlans(spec(2, "max_staleness: 2, max_policy_lag: 2, generation: replica"));
    expect(shareCpuThreads(alone!, embeddedTrainer)).toEqual(embeddedTrainer);
    const half = String(Math.max(1, Math.floor(availableParallelism() / 2)));
    const saved = process.env.OMP_NUM_THREADS;
    try {
      delete process.env.OMP_NUM_THREADS;
      expect(shareCpuThreads(withReplica!, embeddedTrainer)).toEqual({
        ...embeddedTrainer,
        env: { OMP_NUM_THREADS: half },
      });
      expect(shareCpuThreads(withReplica!, { ...embeddedTrainer, env: { OMP_NUM_THREADS: "3" } }).env).toEqual({
        OMP_NUM_THREADS: "3",
      });
      process.env.OMP_NUM_THREADS = "5";
      expect(shareCpuThreads(withReplica!, embeddedTrainer)).toEqual(embeddedTrainer);
    } finally {
      if (saved === undefined) delete process.env.OMP_NUM_THREADS;
      else process.env.OMP_NUM_THREADS = saved;
    }
  });

  it("without in-flight updates, samples every batch as the trainer's own snapshot would: same buffer, same metrics", async () => {
    const [alone] = compilePlans(spec(6, "max_staleness: 2, max_policy_lag: 2"));
    const [withReplica] = compilePlans(spec(6, "max_staleness: 2, max_policy_lag: 2, generation: replica"));
    // The field is part of the plan (and its hash); nothing else differs.
    expect(withReplica!.hash).not.toBe(alone!.hash);
    const log: string[] = [];
    const [a, b] = await Promise.all([run(alone!), run(withReplica!, log)]);
    expect(log.some((l) => l.startsWith("generation replica started"))).toBe(true);
    expect(records(b)).toEqual(records(a));
    expect(withoutTimes(b.readMetrics())).toEqual(withoutTimes(a.readMetrics()));
    // Iterations 1-3 from the starting weights' snapshot, 4-5 from version 2's... and the policy learnt.
    expect(b.readMetrics().map((m) => m.policy_lag)).toEqual([0, 1, 2, 1, 2, 1]);
    // The weights went through the run's replica folder, two folders in turn.
    expect(existsSync(path.join(b.dir, "replica", "0", "model.safetensors"))).toBe(true);
    expect(existsSync(path.join(b.dir, "replica", "1", "model.safetensors"))).toBe(true);
  }, 180_000);

  it("under in-flight updates, continues episodes with the weights the replica was given, each token keeping its version", async () => {
    const [plan] = compilePlans(
      spec(6, "max_staleness: 2, in_flight_updates: true, max_policy_lag: 2, generation: replica"),
    );
    const runDir = await run(plan!);
    const metrics = runDir.readMetrics();
    expect(metrics).toHaveLength(6);
    const seen = new Set<number>();
    for (const r of readBuffer(runDir.bufferPath).records) {
      const generated = Array.from(r.versions).filter((_, k) => r.roles[k] === Role.generated);
      for (const v of generated) seen.add(v);
      // An episode's weights only ever move forward.
      for (let k = 1; k < generated.length; k++) expect(generated[k]).toBeGreaterThanOrEqual(generated[k - 1]!);
      // Started no earlier than the snapshot before update r.iteration - 2.
      const oldest = oldestVersion(r.versions);
      if (oldest !== null) expect(oldest).toBeGreaterThanOrEqual(Math.max(0, r.iteration - 3));
    }
    // The replica was given newer weights as the run went: later batches were sampled by them.
    expect(Math.max(...seen)).toBeGreaterThanOrEqual(3);
    for (const m of metrics) {
      expect(m.policy_lag).toBeLessThanOrEqual(2);
      expect(m.lag_drops).toBe(0);
    }
  }, 120_000);

  it("after kill -9 with batches in flight, --resume ends with the buffer and metrics of an uninterrupted run", async () => {
    const text = spec(5, "max_staleness: 3, max_policy_lag: 3, generation: replica");
    const [plan] = compilePlans(text);
    const reference = await run(plan!);
    const dir = mkdtempSync(path.join(tmpdir(), "arl-async-replica-"));
    const file = path.join(dir, "counting.arl");
    writeFileSync(file, text);
    // Killed (trainer and replica with it) once iteration 2 is committed: batches from the
    // snapshot of version 0 are in flight; the resumed replica loads the checkpoint's snapshot.
    const { runDir, killedAt, resumed } = await killThenResume(
      file,
      path.join(dir, "runs"),
      "counting",
      embeddedTrainerCommand,
      2,
    );
    expect(killedAt).toBeGreaterThanOrEqual(2);
    expect(resumed.exitCode).toBe(0);
    const after = RunDirectory.open(runDir);
    expect(withoutTimes(after.readMetrics())).toEqual(withoutTimes(reference.readMetrics()));
    expect(records(after)).toEqual(records(reference));
  }, 300_000);
});
