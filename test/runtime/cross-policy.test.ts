// Cross-policy sampling (rollout.cross_policy, AgentRL): which turns a pool model generates (a
// seeded stream per episode and turn), how its text enters the policy's context (encoded once
// by the policy's tokenizer as an assistant turn), that its tokens are never training targets on
// any path, and end to end: pool turns in the buffer, masked in train_step, runs that repeat.
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { row } from "../../src/contracts/trainer-protocol.js";
import { envKinds } from "../../src/envs/registry.js";
import type { Plan } from "../../src/plan/schema.js";
import { computeAdvantages, type ScoredTrajectory } from "../../src/runtime/advantage.js";
import { readBuffer, Role, type TrajectoryRecord } from "../../src/episode/buffer.js";
import { poolChoice, ReplyEncodingError, replyIds } from "../../src/episode/cross-policy.js";
import { executePlan, RunError } from "../../src/runtime/orchestrator.js";
import type { Policy } from "../../src/episode/policy.js";
import { RunDirectory } from "../../src/runtime/run-dir.js";
import { lossMask, trainStepParams, type TrainSequence } from "../../src/runtime/update/train-batches.js";
import { EOS, WordTokenizer } from "../../src/trainer/embedded/tokenizer.js";
import { compilePlans, countingExperiment, scriptedTrainerScript } from "../helpers/plans.js";

const repo = fileURLToPath(new URL("../..", import.meta.url));
const POOL = "scripted:skill=0.95";

const spec = (pool: string[], probability: number, extra = "") =>
  countingExperiment({
    name: "crossing",
    seed: 11,
    rollout: `iterations: 2, cross_policy { pool: [${pool.map((m) => JSON.stringify(m)).join(", ")}], probability: ${probability} }`,
    evaluation: "eval { every: 10, tasks: 2, k: [1] }",
    extra,
  });

/** The embedded model's tokenizer as a Policy (encode and decode only). */
function tokenizerPolicy(tok: WordTokenizer): Policy {
  return {
    encode: async (messages, prompt) => tok.encodeMessages(messages, prompt).map((ids) => Int32Array.from(ids)),
    decode: async (ids) => tok.decode(ids),
    generate: () => Promise.reject(new Error("not a generating policy")),
  };
}

/** Maximal runs of generated or pool tokens: one per turn, in order. */
function turnSpans(r: TrajectoryRecord): { role: number; from: number; to: number }[] {
  const spans: { role: number; from: number; to: number }[] = [];
  r.roles.forEach((role, k) => {
    if (role !== Role.generated && role !== Role.pool) return;
    const last = spans[spans.length - 1];
    if (last && last.role === role && last.to === k) last.to = k + 1;
    else spans.push({ role, from: k, to: k + 1 });
  });
  return spans;
}

describe("cross-policy turns", () => {
  it("are drawn from a seeded stream per episode and turn, at the plan's rate, uniformly over the pool", () => {
    const draws = Array.from({ length: 4000 }, (_, i) => poolChoice(1000 + (i >> 3), i & 7, 0.3, 3));
    expect(Array.from({ length: 4000 }, (_, i) => poolChoice(1000 + (i >> 3), i & 7, 0.3, 3))).toEqual(draws);
    const chosen = draws.filter((d) => d !== undefined);
    expect(chosen.length / draws.length).toBeGreaterThan(0.27);
    expect(chosen.length / draws.length).toBeLessThan(0.33);
    for (const m of [0, 1, 2]) expect(chosen.filter((d) => d === m).length / chosen.length).toBeGreaterThan(0.28);
    expect(draws.some((d, i) => d !== poolChoice(2000 + (i >> 3), i & 7, 0.3, 3))).toBe(true);
    expect(poolChoice(5, 0, 0, 3)).toBeUndefined();
    expect(Array.from({ length: 50 }, (_, t) => poolChoice(5, t, 1, 1))).toEqual(Array(50).fill(0));
  });

  it("enter the policy's context as the ids of an assistant turn, ended like a sampled one", async () => {
    const tok = new WordTokenizer(["take", "key", "go", "north"]);
    const policy = tokenizerPolicy(tok);
    // Exactly what the model would have generated for this text: the words, then end-of-turn.
    expect(Array.from(await replyIds(policy, "take key", [EOS], true))).toEqual([...tok.encodeText("take key"), EOS]);
    // A pool turn that ran out of tokens has no end-of-turn token, like a sampled one.
    expect(Array.from(await replyIds(policy, "go north", [EOS], false))).toEqual(tok.encodeText("go north"));
    // A template that rewrites the generation prompt cannot place the turn: a clear error.
    const unstable: Policy = {
      ...policy,
      encode: async (messages, prompt) =>
        prompt ? [Int32Array.from([9, 9])] : messages.map(() => Int32Array.from([1])),
    };
    await expect(replyIds(unstable, "take key", [EOS], true)).rejects.toBeInstanceOf(ReplyEncodingError);
  });

  it("get zero loss mask and zero advantage on every path (both mask modes, group and GAE advantages)", () => {
    const { prompt, generated, observation, pool } = Role;
    // prompt | policy turn | observation | pool turn | observation | policy turn | pool turn (last)
    const roles = Uint8Array.from([
      prompt,
      prompt,
      generated,
      generated,
      observation,
      pool,
      pool,
      pool,
      observation,
      generated,
      generated,
      pool,
      pool,
    ]);
    const isPool = (k: number) => roles[k] === pool;
    for (const mode of ["generated", "all"] as const) {
      const mask = lossMask(roles, mode);
      roles.forEach((_, k) => isPool(k) && expect(mask[k], `${mode} ${k}`).toBe(0));
      expect(mask[2]).toBe(1);
    }
    const [grpo] = compilePlans(spec([POOL], 0.5));
    const trajectory = (reward: number, values?: Float32Array): ScoredTrajectory => ({
      group: "g",
      env: "counter",
      roles,
      reward,
      perTurn: [0, 0.25, 0, reward - 0.25],
      turnEnds: [3, 7, 10, 12],
      end: "finished",
      oldLogprobs: new Float32Array(roles.length),
      ...(values ? { values } : {}),
    });
    const group = computeAdvantages(grpo!, [trajectory(1), trajectory(0)]);
    for (const adv of group.advantages) roles.forEach((_, k) => isPool(k) && expect(adv[k]).toBe(0));
    expect(group.advantages[0]![2]).not.toBe(0);

    // GAE: the last (pool) turn's reward is credited to the policy's last token before it.
    const gae: Plan = {
      ...grpo!,
      algorithm: {
        ...grpo!.algorithm,
        advantage: { ...grpo!.algorithm.advantage, estimator: "gae", normalize: "none", gamma: 1, lambda: 1 },
      },
    };
    const values = new Float32Array(roles.length);
    const critic = computeAdvantages(gae, [trajectory(1, values)]);
    const a = critic.advantages[0]!;
    roles.forEach((_, k) => isPool(k) && expect(a[k]).toBe(0));
    expect(a[10]).toBeCloseTo(0.75, 6); // rewards 0.75 (turn 4, moved back from the pool turn)...
    expect(a[3]).toBeCloseTo(1, 6); // ...and 0.25 (turn 2, a pool turn) reach the policy's tokens

    // The train_step request: pool tokens are never targets, the denominators count targets only.
    const seq: TrainSequence = {
      ids: Int32Array.from(roles, (_, k) => 10 + k),
      roles,
      advantages: group.advantages[0]!,
      oldLogprobs: new Float32Array(roles.length),
      group: "g",
    };
    for (const mode of ["generated", "all"] as const) {
      const params = trainStepParams({ ...grpo!, mask: { ...grpo!.mask, loss: mode } }, [seq]);
      const mask = row(params.loss_mask, 0);
      roles.forEach((_, k) => isPool(k) && expect(mask[k]).toBe(0));
      expect(params.denominators.tokens).toBe(mask.reduce((s, m) => s + m, 0));
      roles.forEach((_, k) => isPool(k) && expect(row(params.advantages, 0)[k]).toBe(0));
    }
  });
});

describe("cross-policy runs", () => {
  async function run(plan: Plan, env: Record<string, string> = {}): Promise<RunDirectory> {
    const runDir = RunDirectory.create(mkdtempSync(path.join(tmpdir(), "arl-cross-")), plan);
    await executePlan({
      plan,
      runDir,
      trainer: { file: process.execPath, args: [scriptedTrainerScript], env },
      envs: envKinds,
      log: () => undefined,
    });
    return runDir;
  }

  it("records pool turns in the buffer, masks them in every train_step, and repeats with the same seed", async () => {
    const [plan] = compilePlans(spec([POOL], 0.4));
    const trainLog = path.join(mkdtempSync(path.join(tmpdir(), "arl-cross-log-")), "train.jsonl");
    const runDir = await run(plan!, { DOUBLE_TRAIN_LOG: trainLog });
    const { records } = readBuffer(runDir.bufferPath);
    let poolTurns = 0;
    for (const r of records) {
      const spans = turnSpans(r);
      expect(spans.map((s) => (s.role === Role.pool ? POOL : "policy"))).toEqual(r.generators);
      for (const s of spans.filter((x) => x.role === Role.pool)) {
        poolTurns++;
        for (let k = s.from; k < s.to; k++) {
          expect(r.versions[k]).toBe(-1);
          expect(r.logprobs[k]).toBe(0);
        }
      }
    }
    expect(poolTurns).toBeGreaterThan(5);
    expect(records.some((r) => r.generators.includes("policy"))).toBe(true);
    const metrics = runDir.readMetrics();
    expect(metrics.reduce((s, m) => s + (m.cross_policy_turns as number), 0)).toBe(poolTurns);
    expect(JSON.parse(readFileSync(runDir.manifestPath, "utf8")).cross_policy).toMatchObject({
      probability: 0.4,
      pool: [{ model: POOL, trainer: { name: "scripted-double" } }],
    });

    // Every sequence the trainer trained on: targets exactly the policy's own tokens.
    const byIds = new Map(records.map((r) => [Array.from(r.ids).join(","), r]));
    const steps = readFileSync(trainLog, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { ids: number[][]; loss_mask: number[][] });
    expect(steps).toHaveLength(2);
    let maskedPool = 0;
    for (const step of steps) {
      step.ids.forEach((ids, i) => {
        const r = byIds.get(ids.join(","))!;
        expect(r).toBeDefined();
        step.loss_mask[i]!.forEach((m, k) => {
          expect(m, `token ${k}`).toBe(k > 0 && r.roles[k] === Role.generated ? 1 : 0);
          if (r.roles[k] === Role.pool) maskedPool++;
        });
      });
    }
    expect(maskedPool).toBeGreaterThan(0);

    // The same seed, the same pool turns, tokens and metrics.
    const again = await run(plan!);
    const strip = (d: RunDirectory) =>
      readBuffer(d.bufferPath).records.map((r) => [
        r.iteration,
        r.group,
        r.sample,
        Array.from(r.ids),
        Array.from(r.roles),
        r.generators,
      ]);
    expect(strip(again)).toEqual(strip(runDir));
    const withoutTimes = (lines: Record<string, unknown>[]) => lines.map(({ time: _t, ...rest }) => rest);
    expect(withoutTimes(again.readMetrics())).toEqual(withoutTimes(metrics));
  });

  it("runs with the embedded trainer: a differently seeded builtin:tiny writes pool turns in the policy's tokens", async () => {
    // A small embedded model for the policy and the pool: its shape is part of the model's name.
    const small = "builtin:tiny?hidden=16&embed=8&key=8";
    const [plan] = compilePlans(
      spec([small], 0.5, "policy.sampling.max_new_tokens: 8\n  rollout.iterations: 1").replace(
        'model: "builtin:tiny"',
        `model: "${small}"`,
      ),
    );
    const runDir = RunDirectory.create(mkdtempSync(path.join(tmpdir(), "arl-cross-")), plan!);
    const embedded = { file: process.execPath, args: [path.join(repo, "dist", "trainer", "embedded", "main.js")] };
    await executePlan({ plan: plan!, runDir, trainer: embedded, envs: envKinds, log: () => undefined });
    const { records } = readBuffer(runDir.bufferPath);
    const pools = records.flatMap((r) =>
      turnSpans(r)
        .filter((s) => s.role === Role.pool)
        .map((s) => Array.from(r.ids.subarray(s.from, s.to))),
    );
    expect(pools.length).toBeGreaterThan(0);
    // Each ended pool turn closes with the policy's end-of-turn token, as a sampled turn does.
    expect(pools.filter((ids) => ids[ids.length - 1] === EOS).length).toBeGreaterThan(0);
    for (const r of records) expect(r.generators.every((g) => g === "policy" || g === small)).toBe(true);
  });

  it("reports a pool model's trainer that dies, naming the model, with its stderr", async () => {
    const [plan] = compilePlans(spec(["scripted:crash-on-generate"], 1));
    const runDir = RunDirectory.create(mkdtempSync(path.join(tmpdir(), "arl-cross-")), plan!);
    const error = (await executePlan({
      plan: plan!,
      runDir,
      trainer: { file: process.execPath, args: [scriptedTrainerScript] },
      envs: envKinds,
      log: () => undefined,
    }).catch((e: unknown) => e)) as RunError;
    expect(error).toBeInstanceOf(RunError);
    expect(error.message).toMatch(
      /cross-policy pool model 'scripted:crash-on-generate': the trainer process exited with status 4/,
    );
    expect(error.stderrTail).toContain("double: pool model lost its GPU (simulated)");
  });

  it("reports a pool model its trainer cannot serve before any episode runs", async () => {
    const [plan] = compilePlans(spec(["hf:no/such-model"], 0.5));
    const runDir = RunDirectory.create(mkdtempSync(path.join(tmpdir(), "arl-cross-")), plan!);
    const embedded = { file: process.execPath, args: [path.join(repo, "dist", "trainer", "embedded", "main.js")] };
    const error = (await executePlan({
      plan: plan!,
      runDir,
      trainer: embedded,
      envs: envKinds,
      log: () => undefined,
    }).catch((e: unknown) => e)) as RunError;
    expect(error).toBeInstanceOf(RunError);
    expect(error.message).toContain(
      "cross-policy pool model 'hf:no/such-model': trainer configure failed (unsupported): the embedded trainer serves only 'builtin:tiny' (optionally",
    );
  });
});
