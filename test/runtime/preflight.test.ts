// The preflight checks as pure functions on hand-made batches (docs/semantics.md §11): each one
// passes on a well-formed batch and fails, with its numbers, on the fault it is for.
import { describe, expect, it } from "vitest";
import { surrogateSlope } from "../../src/rl/policy-loss.js";
import { Role } from "../../src/episode/buffer.js";
import type { PreflightSequence } from "../../src/runtime/preflight/batch.js";
import { checkBoundaries } from "../../src/runtime/preflight/boundaries.js";
import { checkLogprobsReproduce } from "../../src/runtime/preflight/logprobs.js";
import { checkSigns } from "../../src/runtime/preflight/signs.js";
import { lossMask } from "../../src/runtime/update/train-batches.js";
import { compilePlans, countingExperiment } from "../helpers/plans.js";

const EOT = 0;
const { system, prompt, generated, observation, padding } = Role;

/** One episode: prompt, a two-token turn ended by EOT, a tool result, a one-token turn ended by EOT, then padding. */
function sequence(o: Partial<PreflightSequence> & { readonly advantage?: number } = {}): PreflightSequence {
  const roles = Uint8Array.from([
    system,
    prompt,
    generated,
    generated,
    generated,
    observation,
    observation,
    generated,
    generated,
    padding,
  ]);
  const ids = Int32Array.from([5, 6, 20, 21, EOT, 30, 31, 22, EOT, 2]);
  const sampled = Float32Array.from([0, 0, -0.7, -1.2, -0.1, 0, 0, -2.3, -0.05, 0]);
  const mask = lossMask(roles, "generated");
  const advantage = o.advantage ?? 0.5;
  return {
    ids,
    roles,
    lossMask: mask,
    sampled,
    advantages: Float32Array.from(mask, (m) => m * advantage),
    group: "1:0",
    env: "counter",
    task: "counter/3",
    reward: 1,
    label: "counter task 3, group 0, sample 0",
    ...o,
  };
}

describe("logprobs_reproduce", () => {
  it("passes within the tolerance and reports max |log ratio| over the generated targets only", () => {
    const s = sequence();
    const again = s.sampled.map((x, k) => (s.roles[k] === generated ? x + 2e-4 : 99)); // untrained positions do not count
    const r = checkLogprobsReproduce([s], [again], 1e-3);
    expect(r.status).toBe("passed");
    expect(r.numbers).toMatchObject({ targets: 5, above_tolerance: 0, tolerance: 1e-3 });
    expect(r.numbers.max_abs_log_ratio).toBeCloseTo(2e-4, 6);
    expect(r.summary).toBe("max |log ratio| 2.00e-4 over 5 generated targets (tolerance 0.001)");
  });

  it("fails above it with the worst token, the count, the usual causes, and recognises a one-token shift", () => {
    const s = sequence();
    // The trainer's log-prob of token k comes from position k+1: the classic shift.
    const shifted = new Float32Array(s.ids.length);
    for (let k = 1; k < s.ids.length - 1; k++) shifted[k] = s.sampled[k + 1]!;
    const r = checkLogprobsReproduce([s], [shifted], 1e-3);
    expect(r.status).toBe("failed");
    expect(r.numbers.above_tolerance).toBe(5);
    expect(r.failures[0]).toMatch(
      /^max \|log ratio\| 2\.25 at token 7 of sequence 0 \(counter task 3, group 0, sample 0\): sampled -2\.3, recomputed -0\.05$/,
    );
    expect(r.failures).toContain(
      "the recomputed log-probs are one position early (recomputed[k-1] matches sampled[k], max |log ratio| 0): a token shift",
    );
    for (const cause of ["token shift", "chat template", "context", "padding", "dropout", "keep_sampling_mask"])
      expect(r.hint).toContain(cause);
  });

  it("bounds the mean gap with an inference engine: one rare token's engine gap passes, a shift still fails", () => {
    const s = sequence();
    const targets = [...s.roles.keys()].filter((k) => s.roles[k] === generated && k > 0);
    const rare = targets[2]!;
    const again = s.sampled.map((x, k) => (k === rare ? x + 0.2 : x + 1e-3));
    expect(checkLogprobsReproduce([s], [again], 0.05).status).toBe("failed");
    const r = checkLogprobsReproduce([s], [again], 0.05, "engine", "mean");
    expect(r.status).toBe("passed");
    expect(r.numbers).toMatchObject({ measure: "mean", above_tolerance: 1 });
    expect(r.summary).toBe("mean |log ratio| 0.0408 over 5 generated targets (tolerance 0.05; max 0.2); engine");
    const shifted = new Float32Array(s.ids.length);
    for (let k = 1; k < s.ids.length - 1; k++) shifted[k] = s.sampled[k + 1]!;
    expect(checkLogprobsReproduce([s], [shifted], 0.05, undefined, "mean").status).toBe("failed");
  });

  it("counts a non-finite recomputed log-prob as a failure", () => {
    const s = sequence();
    const again = Float32Array.from(s.sampled);
    again[3] = -Infinity;
    const r = checkLogprobsReproduce([s], [again], 1e-3);
    expect(r.status).toBe("failed");
    expect(r.numbers.max_abs_log_ratio).toBeNull();
  });
});

describe("boundaries", () => {
  it("passes when the targets are exactly the generated tokens, end-of-turn tokens included", () => {
    const r = checkBoundaries([sequence(), sequence({ reward: 0 })], [EOT], "generated");
    expect(r.status).toBe("passed");
    expect(r.numbers).toMatchObject({
      targets: 10,
      targets_generated: 10,
      end_of_turn_tokens: 4,
      untrained_end_of_turn_tokens: 0,
      groups: 1,
      mixed_groups: 0,
    });
  });

  it("fails on a target off a generated token, on an untrained end-of-turn token and on a group of two tasks", () => {
    const s = sequence();
    const mask = Uint8Array.from(s.lossMask);
    mask[5] = 1; // a tool result
    mask[9] = 1; // padding
    mask[8] = 0; // the second turn's end-of-turn token
    const r = checkBoundaries([{ ...s, lossMask: mask }, sequence({ task: "counter/4" })], [EOT], "generated");
    expect(r.status).toBe("failed");
    expect(r.failures).toEqual([
      "token 5 of sequence 0 (counter task 3, group 0, sample 0) is a target with role observation",
      "token 9 of sequence 0 (counter task 3, group 0, sample 0) is a target with role padding",
      "the generated end-of-turn token 0 at token 8 of sequence 0 (counter task 3, group 0, sample 0) is not a target",
      "group 1:0 compares 2 tasks (counter/3, counter/4)",
    ]);
    expect(r.numbers).toMatchObject({ misplaced_targets: 2, untrained_end_of_turn_tokens: 1, mixed_groups: 1 });
  });

  it("accepts prompt and observation targets under mask.loss: all, never padding or a target at token 0", () => {
    const s = sequence();
    const all = lossMask(s.roles, "all");
    expect(checkBoundaries([{ ...s, lossMask: all }], [EOT], "all").status).toBe("passed");
    const first = Uint8Array.from(all);
    first[0] = 1;
    first[9] = 1;
    const r = checkBoundaries([{ ...s, lossMask: first }], [EOT], "all");
    expect(r.failures).toEqual([
      "token 0 of sequence 0 (counter task 3, group 0, sample 0) is a target: nothing predicts it",
      "token 9 of sequence 0 (counter task 3, group 0, sample 0) is a target with role padding",
    ]);
  });
});

describe("signs", () => {
  const plan = (extra: string) =>
    compilePlans(countingExperiment({ name: "signs", seed: 1, rollout: "iterations: 1", evaluation: "", extra }))[0]!;
  const looPlan = plan("");

  it("past the clip a positive-advantage token is flat and a negative one still pulled back; below 1 - low the reverse", () => {
    const clip = { low: 0.2, high: 0.28, dual: null };
    expect(surrogateSlope(1.5, 1, clip)).toBe(0);
    expect(surrogateSlope(1.5, -1, clip)).toBe(-1.5);
    expect(surrogateSlope(0.5, 1, clip)).toBe(0.5);
    expect(surrogateSlope(0.5, -1, clip)).toBe(0);
    expect(surrogateSlope(1, 0, clip)).toBe(0);
    // The dual clip c flattens a negative advantage again once the ratio passes c.
    expect(surrogateSlope(4, -1, { ...clip, dual: 3 })).toBe(0);
    expect(surrogateSlope(2, -1, { ...clip, dual: 3 })).toBe(-2);
  });

  it("passes on a batch with both signs: equal rewards give exactly zero gradient, the clip stops only the positive side", () => {
    const r = checkSigns(looPlan, [sequence({ advantage: 1, reward: 1 }), sequence({ advantage: -1, reward: 0 })]);
    expect(r.status).toBe("passed");
    expect(r.numbers).toMatchObject({
      targets: 10,
      positive_advantage_targets: 5,
      negative_advantage_targets: 5,
      equal_rewards_max_gradient: 0,
      positive_past_clip_max_gradient: 0,
    });
    expect(r.numbers.negative_past_clip_min_gradient).toBeGreaterThan(0);
    expect(r.summary).toMatch(
      /^equal rewards: gradient 0; past the clip \(ratio 1\.4\): 5 positive-advantage targets get 0, 5 negative-advantage ones at least /,
    );
  });

  it("says what it could not check: equal rewards under baseline none, signs the batch does not have", () => {
    const r = checkSigns(plan("algorithm.advantage.baseline: none"), [sequence({ advantage: 0 })]);
    expect(r.status).toBe("passed");
    expect(r.numbers.equal_rewards_max_gradient).toBeNull();
    expect(r.summary).toContain("equal rewards not checked: baseline none keeps a constant reward's signal");
    expect(r.summary).toContain("no positive-advantage target in the batch: checked with A = +1");
  });

  it("reads a batch with more targets than a function call takes arguments", () => {
    const n = 150_000;
    const roles = new Uint8Array(n).fill(generated);
    roles[0] = prompt;
    const mask = lossMask(roles, "generated");
    const big = sequence({
      ids: new Int32Array(n).fill(7),
      roles,
      lossMask: mask,
      sampled: new Float32Array(n),
      advantages: Float32Array.from(mask, (m) => -m),
    });
    const r = checkSigns(looPlan, [big, sequence({ advantage: 1 })]);
    expect(r.status).toBe("passed");
    expect(r.numbers.negative_advantage_targets).toBe(n - 1);
  });

  it("fails when a dual clip leaves a negative-advantage token past the clip without a gradient", () => {
    const r = checkSigns(plan("algorithm.clip.high: 0.28\n  algorithm.clip.dual: 1.1"), [
      sequence({ advantage: -1, reward: 0 }),
      sequence({ advantage: 1 }),
    ]);
    expect(r.status).toBe("failed");
    expect(r.failures).toEqual([
      "clip.dual 1.1 is not above 1 + clip.high (1.28): a negative-advantage token whose ratio is past the clip gets no gradient at all",
    ]);
  });
});
