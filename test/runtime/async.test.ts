// Asynchronous rollout (rollout.async): the episodes of iteration t+1 are generated from the
// behaviour snapshot taken just before the update of iteration t, so every span records the
// version that produced it, runs repeat exactly, old log-probs are the behaviour policy's, plans
// that would drop every sample stop with a clear error, a trainer without the capability is
// refused, and a run killed with SIGKILL resumes to the metrics of an uninterrupted one.
import { execa } from "execa";
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { envKinds } from "../../src/envs/registry.js";
import { planHash } from "../../src/plan/hash.js";
import type { Plan } from "../../src/plan/schema.js";
import { oldestVersion } from "../../src/rl/lag.js";
import { readBuffer, Role } from "../../src/episode/buffer.js";
import { executePlan, RunError } from "../../src/runtime/orchestrator.js";
import { RunDirectory } from "../../src/runtime/run-dir.js";
import { killThenResume } from "../helpers/kill-resume.js";
import { compilePlans, countingExperiment, scriptedTrainerScript } from "../helpers/plans.js";

const repo = fileURLToPath(new URL("../..", import.meta.url));
const trainer = { file: process.execPath, args: [scriptedTrainerScript] };
const embedded = { file: process.execPath, args: [path.join(repo, "dist", "trainer", "embedded", "main.js")] };
/** A small embedded model, named in the plan (its shape is part of the model's name). */
const smallTiny = (text: string) =>
  text.replace('model: "builtin:tiny"', 'model: "builtin:tiny?hidden=16&embed=8&key=8"');

const spec = (
  iterations: number,
  rollout = "async { max_policy_lag: 1 }",
  extra = "",
  evaluation = "eval { every: 10, tasks: 2, k: [1] }",
) =>
  countingExperiment({
    name: "counting",
    seed: 5,
    rollout: `iterations: ${iterations}, ${rollout}`,
    evaluation,
    extra,
  });

const withoutTimes = (lines: Record<string, unknown>[]) => lines.map(({ time: _time, ...rest }) => rest);

async function run(plan: Plan, command: typeof trainer = trainer): Promise<RunDirectory> {
  const runDir = RunDirectory.create(mkdtempSync(path.join(tmpdir(), "arl-async-")), plan);
  await executePlan({ plan, runDir, trainer: command, envs: envKinds, log: () => undefined });
  return runDir;
}

/** The version that generated each record's policy tokens, by iteration (one value per iteration: one snapshot). */
function versionsByIteration(runDir: RunDirectory): Map<number, number[]> {
  const out = new Map<number, Set<number>>();
  for (const r of readBuffer(runDir.bufferPath).records) {
    const v = oldestVersion(r.versions);
    const generated = Array.from(r.versions).filter((x, k) => r.roles[k] === Role.generated);
    expect(new Set(generated).size).toBe(1); // every span of a trajectory from the same weights
    if (v !== null) (out.get(r.iteration) ?? out.set(r.iteration, new Set()).get(r.iteration)!).add(v);
  }
  return new Map([...out].map(([i, s]) => [i, [...s].sort()]));
}

describe("asynchronous rollout", () => {
  it("generates iteration t+1 from the snapshot taken before update t, and repeats exactly", async () => {
    const [plan] = compilePlans(spec(5));
    const a = await run(plan!);
    // One optimizer step per update: rollouts 1 and 2 come from version 0, rollout t from t-2.
    expect(Object.fromEntries(versionsByIteration(a))).toEqual({ 1: [0], 2: [0], 3: [1], 4: [2], 5: [3] });
    const metrics = a.readMetrics();
    expect(metrics.map((m) => [m.policy_lag, m.lag_drops, m.policy_version])).toEqual([
      [0, 0, 1],
      [1, 0, 2],
      [1, 0, 3],
      [1, 0, 4],
      [1, 0, 5],
    ]);
    for (const m of metrics) expect(m.time).toHaveProperty("wait_s");
    const manifest = JSON.parse(readFileSync(a.manifestPath, "utf8"));
    expect(manifest.capabilities.behaviour_policy).toBe(true);

    // Timing never decides which weights generate: a second run is identical.
    const b = await run(plan!);
    expect(withoutTimes(b.readMetrics())).toEqual(withoutTimes(metrics));
    const strip = (d: RunDirectory) =>
      readBuffer(d.bufferPath).records.map((r) => [
        r.iteration,
        r.group,
        r.sample,
        Array.from(r.ids),
        Array.from(r.versions),
        Array.from(r.logprobs),
      ]);
    expect(strip(b)).toEqual(strip(a));

    // The synchronous run of the same spec samples every batch from the current policy.
    const [sync] = compilePlans(spec(3, ""));
    expect(Object.fromEntries(versionsByIteration(await run(sync!)))).toEqual({ 1: [0], 2: [1], 3: [2] });
  });

  it("takes old log-probs from the behaviour policy, masks stale sequences, and resumes the embedded trainer's pipeline exactly", async () => {
    // The embedded model: without the keep-sampling mask the behaviour log-probs are recomputed
    // under the full distribution. Synchronously the first step's ratio is exactly 1; with the
    // pipeline the samples of iteration t >= 2 come from older weights, and the recompute must
    // keep that staleness (a recompute under the current weights would give ratio 1 again).
    // Off-policy sequence masking measures the same staleness (the brevity term gives the random
    // model's episodes different rewards, so some advantages are negative).
    const knobs =
      'mask { keep_sampling_mask: false, off_policy_sequence_threshold: 0.001 }\n  policy.sampling.top_p: 0.9\n  policy.sampling.max_new_tokens: 6\n  algorithm.optimizer.lr: 0.05\n  allow { top-p-without-keep-mask: "testing the recompute path" }\n  reward.brevity: -0.01 * episode.tokens';
    const [asyncPlan] = compilePlans(smallTiny(spec(3, "async { max_policy_lag: 1 }", knobs)));
    const [syncPlan] = compilePlans(smallTiny(spec(2, "", knobs)));
    const ratios = (d: RunDirectory) =>
      d
        .readMetrics()
        .map((m) => Math.max(Math.abs((m.ratio_min as number) - 1), Math.abs((m.ratio_max as number) - 1)));
    const synchronous = await run(syncPlan!, embedded);
    const sync = ratios(synchronous);
    expect(synchronous.readMetrics().map((m) => m.off_policy_masked)).toEqual([0, 0]);
    const reference = await run(asyncPlan!, embedded);
    const pipelined = ratios(reference);
    for (const r of sync) expect(r).toBeLessThan(1e-4);
    expect(pipelined[0]).toBeLessThan(1e-4); // iteration 1: sampled and updated at version 0
    for (const r of pipelined.slice(1)) expect(r).toBeGreaterThan(1e-3);
    const masked = reference.readMetrics().map((m) => m.off_policy_masked as number);
    expect(masked[0]).toBe(0);
    expect(masked[1]! + masked[2]!).toBeGreaterThan(0);

    // Stopped after iteration 2 (rollout 3 in flight, discarded), then resumed: the same run.
    const runDir = RunDirectory.create(mkdtempSync(path.join(tmpdir(), "arl-async-")), asyncPlan!);
    const stop = new AbortController();
    const first = await executePlan({
      plan: asyncPlan!,
      runDir,
      trainer: embedded,
      envs: envKinds,
      log: () => undefined,
      stop: stop.signal,
      progress: (p) => p.iteration === 2 && stop.abort(),
    });
    expect(first).toMatchObject({ iterations: 2, stopped: true });
    await executePlan({ plan: asyncPlan!, runDir, trainer: embedded, envs: envKinds, log: () => undefined });
    expect(withoutTimes(runDir.readMetrics())).toEqual(withoutTimes(reference.readMetrics()));
    const strip = (d: RunDirectory) =>
      readBuffer(d.bufferPath).records.map((r) => [
        r.iteration,
        r.group,
        r.sample,
        Array.from(r.ids),
        Array.from(r.versions),
        Array.from(r.logprobs),
      ]);
    expect(strip(runDir)).toEqual(strip(reference));
  });

  it("refuses a trainer without the behaviour-policy capability", async () => {
    const [plan] = compilePlans(spec(2));
    const runDir = RunDirectory.create(mkdtempSync(path.join(tmpdir(), "arl-async-")), plan!);
    const error = (await executePlan({
      plan: plan!,
      runDir,
      trainer: { ...trainer, env: { DOUBLE_NO_BEHAVIOUR: "1" } },
      envs: envKinds,
      log: () => undefined,
    }).catch((e: unknown) => e)) as RunError;
    expect(error).toBeInstanceOf(RunError);
    expect(error.message).toMatch(
      /rollout\.async needs a trainer that keeps a behaviour-policy snapshot.*'scripted-double'/,
    );
  });

  it("stops with a located error, before any rollout, on a plan file that would drop every sample", async () => {
    // `arl check` reports such a spec (policy-lag-below-update-steps); a plan file skips the
    // linter, so the limit is lowered in the plan itself.
    const [compiled] = compilePlans(spec(3, "async { max_policy_lag: 2 }", "algorithm.minibatches: 2"));
    const dir = mkdtempSync(path.join(tmpdir(), "arl-async-"));
    const edited = {
      ...compiled!,
      rollout: { ...compiled!.rollout, async: { ...compiled!.rollout.async!, max_policy_lag: 1 } },
      hash: "",
    };
    const file = path.join(dir, "plan.json");
    writeFileSync(file, JSON.stringify({ ...edited, hash: planHash(edited) }));
    const cli = await execa(
      process.execPath,
      [
        path.join(repo, "bin/arl.js"),
        "run",
        file,
        "--out",
        path.join(dir, "runs"),
        "--trainer-command",
        `${process.execPath} ${scriptedTrainerScript}`,
      ],
      { reject: false },
    );
    expect(cli.exitCode).toBe(1);
    expect(cli.stderr).toContain(
      "plan field rollout.async.max_policy_lag is 1, but with rollout pipelined one batch ahead every sample is 2 policy versions old",
    );
    expect(cli.stderr).toContain("Raise max_policy_lag to 2");
    expect(cli.stderr).not.toMatch(/\n\s+at /); // no stack trace
    const runs = path.join(dir, "runs", "counting", "default");
    const [runDir] = readdirSync(runs);
    expect(existsSync(path.join(runs, runDir!, "buffer.arlbuf"))).toBe(false); // nothing was played
  });

  it("after kill -9 mid-run (with cross-policy turns), --resume ends with metrics identical to an uninterrupted run", async () => {
    const iterations = 6;
    const text = spec(
      iterations,
      'async { max_policy_lag: 1 }, cross_policy { pool: ["scripted:skill=0.9"], probability: 0.3 }',
      "",
      "eval { every: 2, tasks: 4, k: [1, 2] }",
    );
    const [plan] = compilePlans(text);
    const reference = await run(plan!);

    const dir = mkdtempSync(path.join(tmpdir(), "arl-async-"));
    const file = path.join(dir, "counting.arl");
    writeFileSync(file, text);
    const command = `${process.execPath} ${scriptedTrainerScript}`;
    // Killed while iteration 4's rollout (pipelined during update 3) is in flight.
    const { runDir, killedAt, resumed } = await killThenResume(file, path.join(dir, "runs"), "counting", command, 3);
    expect(killedAt).toBeGreaterThanOrEqual(3);
    expect(killedAt).toBeLessThan(iterations);
    expect(resumed.stderr).toBe("");
    expect(resumed.exitCode).toBe(0);
    expect(resumed.stdout).toContain(`resumed after iteration ${killedAt}`);
    const after = RunDirectory.open(runDir);
    expect(withoutTimes(after.readMetrics())).toEqual(withoutTimes(reference.readMetrics()));
    expect(reference.readMetrics().some((m) => (m.cross_policy_turns as number) > 0)).toBe(true);
    const strip = (d: RunDirectory) =>
      readBuffer(d.bufferPath).records.map((r) => [
        r.iteration,
        r.group,
        r.sample,
        Array.from(r.ids),
        Array.from(r.versions),
        r.generators,
      ]);
    expect(strip(after)).toEqual(strip(reference));
    expect(readBuffer(after.bufferPath).partialBytes).toBe(0);
  });
});
