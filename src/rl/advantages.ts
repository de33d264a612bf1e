// Outcome advantages per trajectory (docs/semantics.md §3): group baselines, std normalisation,
// and AgentRL's per-task normalisation. Rewards and group statistics are constants of the update.
import { Registry } from "./registry.js";
import { allEqual, assertFinite, mean, populationStd, STD_EPS, sum } from "./stats.js";

export type Baseline = "mean" | "leave_one_out" | "none";
export type Normalize = "std" | "none";

export interface AdvantageOptions {
  readonly baseline: Baseline;
  readonly normalize: Normalize;
}

/** Advantages of one group from its returns R_1..R_G. */
type AdvantageEstimator = (rewards: readonly number[], normalize: Normalize) => number[];

// A_i = (R_i - b_i) / (std + eps) with std the group's population std, or R_i - b_i.
function withBaseline(baselines: (rewards: readonly number[]) => number[]): AdvantageEstimator {
  return (rewards, normalize) => {
    const b = baselines(rewards);
    const centred = rewards.map((r, i) => r - (b[i] ?? 0));
    if (normalize === "none") return centred;
    const std = populationStd(rewards);
    return centred.map((c) => c / (std + STD_EPS));
  };
}

// Group-relative baselines: an all-equal group (and so any G = 1 group) has no comparison
// signal; return exact zeros rather than rounding noise of (R - mean).
function groupRelative(baselines: (rewards: readonly number[]) => number[]): AdvantageEstimator {
  const estimate = withBaseline(baselines);
  return (rewards, normalize) => (allEqual(rewards) ? rewards.map(() => 0) : estimate(rewards, normalize));
}

export const advantageEstimators = new Registry<AdvantageEstimator>("advantage baseline", {
  // GRPO (normalize std) and Dr. GRPO (normalize none): the self-inclusive group mean.
  mean: groupRelative((rewards) => {
    const m = mean(rewards);
    return rewards.map(() => m);
  }),
  // RLOO: the mean of the other G-1 returns, so the baseline does not depend on the sample.
  leave_one_out: groupRelative((rewards) => {
    const total = sum(rewards);
    const others = rewards.length - 1;
    return rewards.map((r) => (total - r) / others);
  }),
  // REINFORCE without a baseline: A = R (all-equal groups keep their signal here).
  none: withBaseline((rewards) => rewards.map(() => 0)),
});

/** Advantages for every group of a batch; one array of returns per group. */
export function groupAdvantages(groups: readonly (readonly number[])[], options: AdvantageOptions): number[][] {
  const estimate = advantageEstimators.get(options.baseline);
  if (options.normalize !== "std" && options.normalize !== "none")
    throw new RangeError(`unknown normalize '${String(options.normalize)}' (known: std, none)`);
  return groups.map((rewards, g) => {
    if (rewards.length === 0) throw new RangeError(`group ${g} is empty`);
    assertFinite(rewards, `rewards of group ${g}`);
    return estimate(rewards, options.normalize);
  });
}

/**
 * AgentRL task advantage normalisation: within each task, A -> (A - mu)/(sigma + eps) over
 * that task's target-token advantages (population sigma). Each entry of `advantages` is one
 * target token; `weights` (e.g. L_i when one entry stands for the L_i tokens of a trajectory)
 * counts an entry that many times.
 */
export function taskNormalize(
  advantages: readonly number[],
  tasks: readonly string[],
  weights?: readonly number[],
): number[] {
  if (tasks.length !== advantages.length)
    throw new RangeError(`taskNormalize: ${advantages.length} advantages but ${tasks.length} tasks`);
  if (weights && weights.length !== advantages.length)
    throw new RangeError(`taskNormalize: ${advantages.length} advantages but ${weights.length} weights`);
  assertFinite(advantages, "advantages");
  if (weights?.some((w) => !(w >= 0))) throw new RangeError("taskNormalize: weights must be non-negative numbers");
  const byTask = new Map<string, number[]>();
  tasks.forEach((t, i) => {
    const list = byTask.get(t);
    if (list) list.push(i);
    else byTask.set(t, [i]);
  });
  const out = advantages.map(() => 0);
  for (const indices of byTask.values()) {
    const w = indices.map((i) => weights?.[i] ?? 1);
    const total = sum(w);
    if (total <= 0) continue; // no target tokens: nothing to normalise
    const values = indices.map((i) => advantages[i] as number);
    if (allEqual(values)) continue; // exact zeros, as for all-equal groups
    let mu = 0;
    values.forEach((v, j) => (mu += (w[j] as number) * v));
    mu /= total;
    let ss = 0;
    values.forEach((v, j) => (ss += (w[j] as number) * (v - mu) * (v - mu)));
    const sigma = Math.sqrt(ss / total);
    indices.forEach((i, j) => (out[i] = ((values[j] as number) - mu) / (sigma + STD_EPS)));
  }
  return out;
}
