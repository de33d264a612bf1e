// Asynchronous rollout beyond one batch ahead (rollout.async.max_staleness k, docs/semantics.md §7):
// the snapshot is refreshed before every k-th update and the batches up to k ahead start from it,
// so a seeded run repeats exactly and a run killed mid-pipeline resumes to the same buffer and
// metrics; under in_flight_updates episodes take newer weights at their next generate request
// and each token keeps its own version; past max_policy_lag a group is dropped or corrected.
import { mkdtempSync, writeFileSync } from "node:fs";
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
import { compilePlans, countingExperiment, scriptedTrainerScript } from "../helpers/plans.js";

const trainer = { file: process.execPath, args: [scriptedTrainerScript] };
const spec = (iterations: number, async: string, extra = "") =>
  countingExperiment({
    name: "counting",
    seed: 11,
    rollout: `iterations: ${iterations}, async { ${async} }`,
    evaluation: "eval { every: 4, tasks: 2, k: [1] }",
    extra,
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

async function run(plan: Plan): Promise<RunDirectory> {
  const runDir = RunDirectory.create(mkdtempSync(path.join(tmpdir(), "arl-async-k-")), plan);
  await executePlan({ plan, runDir, trainer, envs: envKinds, log: () => undefined });
  return runDir;
}

/** The versions that generated each iteration's policy tokens. */
function versionsByIteration(runDir: RunDirectory): Record<number, number[]> {
  const out = new Map<number, Set<number>>();
  for (const r of readBuffer(runDir.bufferPath).records) {
    const generated = Array.from(r.versions).filter((_, k) => r.roles[k] === Role.generated);
    const set = out.get(r.iteration) ?? new Set();
    for (const v of generated) set.add(v);
    out.set(r.iteration, set);
  }
  return Object.fromEntries([...out].map(([i, s]) => [i, [...s].sort((a, b) => a - b)]));
}

describe("asynchronous rollout, max_staleness k", () => {
  it("starts k batches from each snapshot, refreshed before every k-th update, and repeats exactly", async () => {
    const [plan] = compilePlans(spec(8, "max_staleness: 3, max_policy_lag: 3"));
    const a = await run(plan!);
    // One optimizer step per update. Snapshot before update 1 (version 0): batches 1-4; before
    // update 4 (version 3): batches 5-7; before update 7 (version 6): batch 8.
    expect(versionsByIteration(a)).toEqual({ 1: [0], 2: [0], 3: [0], 4: [0], 5: [3], 6: [3], 7: [3], 8: [6] });
    const metrics = a.readMetrics();
    // Each batch is 1 to k updates old at its own update (the first: the starting weights).
    expect(metrics.map((m) => m.policy_lag)).toEqual([0, 1, 2, 3, 1, 2, 3, 1]);
    expect(metrics.map((m) => m.policy_lag_mean)).toEqual([0, 1, 2, 3, 1, 2, 3, 1]);
    expect(metrics.every((m) => m.lag_drops === 0 && m.lag_corrected === 0)).toBe(true);

    // Request order, not timing, decides which weights generate: a second run is identical.
    const b = await run(plan!);
    expect(withoutTimes(b.readMetrics())).toEqual(withoutTimes(metrics));
    expect(records(b)).toEqual(records(a));
  });

  it("refuses a bound that would drop whole batches, and keeps and corrects the groups past it under past_max_lag correct", async () => {
    const tis = "mask { tis { cap: 2, level: token } }";
    // Batches 3 and 4 of each snapshot would be 2 and 3 versions old, above max_policy_lag 1: the
    // plan (a plan file skips the linter, so it is run directly) stops before any rollout.
    const [dropping] = compilePlans(
      spec(
        4,
        "max_staleness: 3, max_policy_lag: 1",
        `${tis}\n  allow { staleness-beyond-policy-lag: "testing the runtime's refusal" }`,
      ),
    );
    const runDir = RunDirectory.create(mkdtempSync(path.join(tmpdir(), "arl-async-k-")), dropping!);
    const error = await executePlan({ plan: dropping!, runDir, trainer, envs: envKinds, log: () => undefined }).catch(
      (e: unknown) => e as Error,
    );
    expect((error as Error).message).toContain(
      "with rollout.async.max_staleness 3 the oldest batch of each snapshot is 3 updates of 1 optimizer steps (3 policy versions) old",
    );
    expect(runDir.readMetrics()).toEqual([]);

    const [correcting] = compilePlans(spec(4, "max_staleness: 3, max_policy_lag: 1, past_max_lag: correct", tis));
    const corrected = (await run(correcting!)).readMetrics();
    // 3 tasks x G 4 per batch: batches 3 and 4 are past the bound, kept and corrected.
    expect(corrected.map((m) => [m.lag_drops, m.lag_corrected])).toEqual([
      [0, 0],
      [0, 0],
      [0, 12],
      [0, 12],
    ]);
    // Their ratio starts at the update's own weights (proximal), and each token's truncated
    // importance weight to its sampler differs from 1 where the policy moved since.
    expect(corrected.slice(0, 2).map((m) => (m.tis as { mean_weight: number }).mean_weight)).toEqual([1, 1]);
    for (const m of corrected.slice(2)) expect((m.tis as { mean_weight: number }).mean_weight).not.toBe(1);
  });

  it("continues episodes in flight with newer weights under in_flight_updates, each token keeping its version", async () => {
    const [plan] = compilePlans(spec(6, "max_staleness: 2, in_flight_updates: true, max_policy_lag: 2"));
    const runDir = await run(plan!);
    const metrics = runDir.readMetrics();
    for (const r of readBuffer(runDir.bufferPath).records) {
      const generated = Array.from(r.versions).filter((_, k) => r.roles[k] === Role.generated);
      // Tokens are in the order sampled: an episode's weights only ever move forward.
      for (let k = 1; k < generated.length; k++) expect(generated[k]).toBeGreaterThanOrEqual(generated[k - 1]!);
      // Started no earlier than the snapshot before update r.iteration - 2 (version r.iteration - 3).
      const oldest = oldestVersion(r.versions);
      if (oldest !== null) expect(oldest).toBeGreaterThanOrEqual(Math.max(0, r.iteration - 3));
    }
    // The bound holds: at most k updates (of one step) old, so nothing is dropped.
    for (const m of metrics) {
      expect(m.policy_lag).toBeLessThanOrEqual(2);
      expect(m.lag_drops).toBe(0);
    }
  });

  it("after kill -9 with batches in flight, --resume ends with the buffer and metrics of an uninterrupted run", async () => {
    const text = spec(7, "max_staleness: 3, max_policy_lag: 3");
    const [plan] = compilePlans(text);
    const reference = await run(plan!);
    const dir = mkdtempSync(path.join(tmpdir(), "arl-async-k-"));
    const file = path.join(dir, "counting.arl");
    writeFileSync(file, text);
    // Killed after iteration 2 or later is committed: batches 3 and 4 (snapshot of version 0) or
    // later ones are in flight; the resume restarts them from the checkpoint's snapshot.
    const { runDir, killedAt, resumed } = await killThenResume(
      file,
      path.join(dir, "runs"),
      "counting",
      `${process.execPath} ${scriptedTrainerScript}`,
      2,
    );
    expect(killedAt).toBeGreaterThanOrEqual(2);
    expect(resumed.stderr).toBe("");
    expect(resumed.exitCode).toBe(0);
    const after = RunDirectory.open(runDir);
    expect(withoutTimes(after.readMetrics())).toEqual(withoutTimes(reference.readMetrics()));
    expect(records(after)).toEqual(records(reference));
    expect(readBuffer(after.bufferPath).partialBytes).toBe(0);
  });
});
