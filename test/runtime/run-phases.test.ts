// The run loop's phases (src/runtime/run/): the seeded streams keep the seeds every recorded run
// was made with, episodes run concurrently in order, every trainer process is stopped, the
// metrics line keeps its byte layout, and executePlan sends the trainer its control requests in
// the pipeline's order (snapshot before the first rollout and before each update, scoring
// before the snapshot, the next rollout overlapping the train steps, save last).
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { envKinds } from "../../src/envs/registry.js";
import type { Episode } from "../../src/episode/harness.js";
import { executePlan } from "../../src/runtime/orchestrator.js";
import { RunDirectory } from "../../src/runtime/run-dir.js";
import { mapConcurrently, type Played } from "../../src/runtime/run/episodes.js";
import { iterationMetrics } from "../../src/runtime/run/metrics.js";
import { RunStreams } from "../../src/runtime/run/streams.js";
import { RunTrainers } from "../../src/runtime/run/trainers.js";
import type { PoolTrainers } from "../../src/episode/cross-policy.js";
import { TrainerClient } from "../../src/trainer/protocol/client.js";
import { compilePlans, countingExperiment, scriptedTrainerScript } from "../helpers/plans.js";

describe("run streams", () => {
  it("derive the seeds recorded runs were made with (renaming a stream would change every resumed run)", () => {
    const streams = new RunStreams(7);
    const episode = streams.episodeSeed("train", 3, "counter", 12, 1, 2);
    expect(episode).toBe(3170281715);
    expect(streams.turnSeed(episode, 4)).toBe(4168640590);
    expect(streams.episodeSeed("test", -1, "counter", 5, 0, 0)).toBe(1243762322);
    expect(streams.tasks(3)()).toBe(0.6106486083008349);
    expect(streams.minibatches(3, 1)()).toBe(0.41721218451857567);
    expect(streams.evalTasks("counter")()).toBe(0.23736135102808475);
    expect(streams.bootstrapSeed(0, 2)).toBe(3562702559);
    expect(streams.sftDemos()()).toBe(0.39290365343913436);
    expect(streams.sftEpisodeSeed("counter", 12)).toBe(2138800341);
    expect(streams.sftEpoch(2)()).toBe(0.9524587923660874);
  });
});

describe("mapConcurrently", () => {
  it("keeps the items' order and runs at most `limit` at once", async () => {
    let running = 0;
    let peak = 0;
    const out = await mapConcurrently([30, 5, 20, 1, 10], 2, async (ms, i) => {
      running++;
      peak = Math.max(peak, running);
      await new Promise((r) => setTimeout(r, ms));
      running--;
      return `${i}:${ms}`;
    });
    expect(out).toEqual(["0:30", "1:5", "2:20", "3:1", "4:10"]);
    expect(peak).toBe(2);
  });

  it("starts no new item after a failure and rejects with it", async () => {
    const started: number[] = [];
    const result = mapConcurrently([0, 1, 2, 3, 4], 1, async (x) => {
      started.push(x);
      if (x === 1) throw new Error("episode 1 failed");
      return x;
    });
    await expect(result).rejects.toThrow("episode 1 failed");
    expect(started).toEqual([0, 1]);
  });
});

describe("run trainers", () => {
  const fake = (name: string, calls: string[]) => ({
    kill: async () => void calls.push(`${name} kill`),
    shutdown: async () => void calls.push(`${name} shutdown`),
  });

  it("shut the pool down before the policy's trainer, and kill every process started", async () => {
    const calls: string[] = [];
    const trainers = new RunTrainers(fake("main", calls) as unknown as TrainerClient);
    await trainers.kill();
    expect(calls).toEqual(["main kill"]);
    trainers.adoptPool(fake("pool", calls) as unknown as PoolTrainers);
    calls.length = 0;
    await trainers.shutdown();
    expect(calls).toEqual(["pool shutdown", "main shutdown"]);
    calls.length = 0;
    await trainers.kill();
    expect(calls.sort()).toEqual(["main kill", "pool kill"]);
  });
});

describe("iteration metrics", () => {
  const [plan] = compilePlans(
    countingExperiment({
      name: "counting",
      seed: 1,
      rollout: "iterations: 2",
      evaluation: "eval { every: 1, tasks: 2, k: [1] }",
    }),
  );
  const episode = (tokens: number, end: Episode["end"], generators: string[]): Episode => ({
    ids: new Int32Array(tokens),
    roles: new Uint8Array(tokens),
    versions: new Int32Array(tokens),
    logprobs: new Float32Array(tokens),
    samples: [],
    end,
    toolCalls: [],
    episode: {
      turns: generators.length,
      tool_calls: 2,
      invalid_calls: 1,
      tokens,
      aborted: false,
      truncated: false,
      terminated: end === "finished",
    },
    states: [],
    final: {} as Episode["final"],
    turnEnds: [],
    generators,
    messages: [],
    templateTools: null,
  });
  const played = (group: number, reward: number, success: boolean, e: Episode): Played => ({
    task: { env: "counter", id: group },
    group,
    sample: 0,
    episode: e,
    rewards: { terms: { success: reward }, perTurn: [reward], total: reward },
    success,
  });

  it("keep the metrics line's keys in their recorded order, with the pipeline's figures", () => {
    const allPlayed = [
      played(0, 1, true, episode(10, "finished", ["policy", "scripted"])),
      played(0, 0, false, episode(6, "truncated", ["policy"])),
      played(1, 0, false, episode(4, "env_error", ["policy"])),
    ];
    const metrics = iterationMetrics(
      plan!,
      {
        iteration: 1,
        rollout: {
          accepted: [allPlayed.slice(0, 2)],
          allPlayed,
          rejectedGroups: 1,
          rejectedTokens: 4,
          playedGroups: 2,
          seconds: 2,
        },
        scored: {
          batch: allPlayed.slice(0, 2),
          ids: [],
          scored: [],
          advantages: { advantages: [], effectiveGroups: 1, groups: 2 },
          masked: [true, false],
          owners: [],
          sampledLogprobs: [],
          lagged: {
            kept: [allPlayed.slice(0, 2)],
            past: [],
            droppedSamples: 0,
            droppedGroups: 0,
            maxLag: 1,
            meanLag: 1,
          },
          lagCorrected: 0,
        },
        update: {
          stepStats: [
            { loss: 1, policy_loss: 0.5, entropy: 2, ratio_min: 0.5, ratio_max: 1.5, policy_version: 4 },
            { loss: 3, policy_loss: 2.5, entropy: 4, ratio_min: 0.9, ratio_max: 1.1, policy_version: 5 },
          ],
          version: 5,
        },
        evalBase: { "pass@1": 0.1 },
        evaluation: { "pass@1": 0.5 },
        times: { begun: 1000, rolledOut: 1500, scored: 1750, updated: 2000 },
      },
      9,
    );
    expect(Object.keys(metrics)).toEqual([
      "iteration",
      "success",
      "reward",
      "reward_terms",
      "effective_group_ratio",
      "varied_group_ratio",
      "acceptance_rate",
      "rejected_groups",
      "rejected_tokens",
      "generated_length",
      "entropy",
      "ratio_mean",
      "ratio_min",
      "ratio_max",
      "clip_fraction",
      "kl",
      "grad_norm",
      "loss",
      "policy_loss",
      "env_errors",
      "lag_drops",
      "off_policy_masked",
      "policy_lag",
      "cross_policy_turns",
      "tokens",
      "tool_calls",
      "invalid_calls",
      "end_reasons",
      "policy_version",
      "eval_base",
      "eval",
      "time",
    ]);
    const { time, ...rest } = metrics;
    expect(rest).toEqual({
      iteration: 1,
      success: 0.5, // env errors are left out of success and reward
      reward: 0.5,
      reward_terms: { success: 0.5 },
      effective_group_ratio: 0.5,
      varied_group_ratio: 1, // the one group the update saw had rewards 1 and 0
      acceptance_rate: 0.5,
      rejected_groups: 1,
      rejected_tokens: 4,
      generated_length: 20 / 3,
      entropy: 3,
      ratio_mean: 1, // not reported by these steps
      ratio_min: 0.5,
      ratio_max: 1.5,
      clip_fraction: 0,
      kl: 0,
      grad_norm: 0,
      loss: 2,
      policy_loss: 1.5,
      env_errors: 1,
      lag_drops: 0,
      off_policy_masked: 1,
      policy_lag: 1,
      cross_policy_turns: 1,
      tokens: 20,
      tool_calls: 6,
      invalid_calls: 3,
      end_reasons: { finished: 1, truncated: 1, aborted: 0, env_error: 1 },
      policy_version: 5, // the last step's, not the checkpoint's
      eval_base: { "pass@1": 0.1 },
      eval: { "pass@1": 0.5 },
    });
    expect(time).toMatchObject({ rollout_s: 2, wait_s: 0.5, reward_s: 0.25, update_s: 0.25 });
  });
});

describe("executePlan's phases", () => {
  afterEach(() => vi.restoreAllMocks());

  it("send the trainer its control requests in the pipeline's order", async () => {
    const knobs =
      'mask { keep_sampling_mask: false, off_policy_sequence_threshold: 0.5 }\n  allow { top-p-without-keep-mask: "testing the recompute path" }';
    const [plan] = compilePlans(
      countingExperiment({
        name: "counting",
        seed: 5,
        rollout: "iterations: 3, async { max_policy_lag: 1 }",
        evaluation: "eval { every: 2, tasks: 2, k: [1], before_training: false }",
        extra: knobs,
      }),
    );
    const control: string[] = [];
    // eslint-disable-next-line @typescript-eslint/unbound-method -- called back with .call(this) on the spied instance
    const request = TrainerClient.prototype.request;
    vi.spyOn(TrainerClient.prototype, "request").mockImplementation(function (this: TrainerClient, method, params) {
      if (!["encode", "decode", "generate"].includes(method))
        control.push(method === "logprobs" ? `logprobs ${(params as { policy: string }).policy}` : method);
      return request.call(this, method, params);
    });
    const runDir = RunDirectory.create(mkdtempSync(path.join(tmpdir(), "arl-phases-")), plan!);
    await executePlan({
      plan: plan!,
      runDir,
      trainer: { file: process.execPath, args: [scriptedTrainerScript] },
      envs: envKinds,
      log: () => undefined,
    });
    const iteration = ["logprobs behaviour", "logprobs current", "snapshot", "train_step", "save"];
    // The first iteration's preflight recomputes the batch's log-probs before the update (and before the next rollout starts).
    const first = ["logprobs behaviour", "logprobs current", "logprobs current", "snapshot", "train_step", "save"];
    expect(control).toEqual(["handshake", "configure", "snapshot", ...first, ...iteration, ...iteration, "shutdown"]);
  });
});
