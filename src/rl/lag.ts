// Policy lag (docs/semantics.md §7): each sample carries the policy versions that generated it; at an
// update, a sample's lag is the trainer's policy version minus the oldest of those versions, and
// samples older than `max_policy_lag` versions are dropped and counted. Pure functions, shared by
// the runtime (the filter) and the lint stage (how old a pipelined batch is bound to be).
import { at } from "../contracts/checked.js";

/** Version of `versions[k]` where no policy generated token k (prompt, observation, a pool turn). */
const NOT_GENERATED = -1;

/** The oldest policy version among a sample's generated tokens; null when the policy generated none. */
export function oldestVersion(versions: ArrayLike<number>): number | null {
  let oldest: number | null = null;
  for (let k = 0; k < versions.length; k++) {
    const v = at(versions, k);
    if (v !== NOT_GENERATED && (oldest === null || v < oldest)) oldest = v;
  }
  return oldest;
}

/** A sample's lag at an update that starts at `currentVersion`: 0 when the policy generated none of it. */
export function sampleLag(versions: ArrayLike<number>, currentVersion: number): number {
  const oldest = oldestVersion(versions);
  return oldest === null ? 0 : currentVersion - oldest;
}

export interface LagFilterResult<T> {
  /** The groups whose every sample is within the limit, in their order. */
  readonly kept: T[][];
  /** The groups with a sample older than the limit, in their order (dropped, or kept to be corrected). */
  readonly past: T[][];
  /** Samples dropped (every sample of a dropped group, the fresh ones included). */
  readonly droppedSamples: number;
  readonly droppedGroups: number;
  /** Largest lag seen in the batch (kept or dropped); 0 for an empty batch. */
  readonly maxLag: number;
  /** Mean lag over the batch's samples (kept or dropped); 0 for an empty batch. */
  readonly meanLag: number;
}

/**
 * Drops stale samples by group: a group with any sample older than `maxLag` versions is dropped
 * whole. The group is the unit of the baseline (mean, leave-one-out, std over G samples of one
 * task): computing it over the survivors would change the estimator (its (G-1)/G shrinkage, its
 * variance) from group to group, so a group is used complete or not at all. `maxLag` null: no
 * limit (synchronous rollout).
 */
export function filterByLag<T>(
  groups: readonly (readonly T[])[],
  versionsOf: (sample: T) => ArrayLike<number>,
  currentVersion: number,
  maxLag: number | null,
): LagFilterResult<T> {
  const kept: T[][] = [];
  const past: T[][] = [];
  let droppedSamples = 0;
  let worst = 0;
  let total = 0;
  let samples = 0;
  for (const group of groups) {
    const lags = group.map((s) => sampleLag(versionsOf(s), currentVersion));
    const groupMax = Math.max(0, ...lags);
    worst = Math.max(worst, groupMax);
    for (const lag of lags) total += lag;
    samples += lags.length;
    if (maxLag !== null && groupMax > maxLag) {
      droppedSamples += group.length;
      past.push([...group]);
    } else kept.push([...group]);
  }
  return {
    kept,
    past,
    droppedSamples,
    droppedGroups: past.length,
    maxLag: worst,
    meanLag: samples ? total / samples : 0,
  };
}

/**
 * Optimizer steps one update takes over a batch of `sequences`: `epochs` passes, each cut into at
 * most `minibatches` non-empty parts of ceil(sequences / minibatches). With rollout pipelined one
 * batch ahead, this is how many versions old every sample is when its own update starts.
 */
export function updateSteps(epochs: number, minibatches: number, sequences: number): number {
  if (sequences <= 0) return 0;
  const size = Math.ceil(sequences / minibatches);
  return epochs * Math.min(minibatches, Math.ceil(sequences / size));
}
