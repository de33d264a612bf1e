// Train/inference mismatch of one scored batch (docs/semantics.md §12): where the sampled
// log-probs come from another process's numerics (an inference engine) or mask.tis corrects for
// them, the update divides by the trainer's own recomputation (logp_old) and the batch's gap to
// what the sampler reported is measured, and with mask.tis turned into per-token importance
// weights for train_step. The formulas are src/rl/mismatch.ts.
import { mismatchStats, tisStats, tisWeights, type MismatchStats, type TisStats } from "../../rl/mismatch.js";
import type { Plan } from "../../plan/schema.js";
import { Role } from "../../episode/buffer.js";

/** Whether the update's logp_old must be the trainer's own recomputation rather than what the sampler reported. */
export function recomputesOldLogprobs(plan: Plan): boolean {
  return !plan.mask.keep_sampling_mask || measuresMismatch(plan);
}

/** Whether the batch's engine/trainer gap is measured (and reported in the metrics line). */
export function measuresMismatch(plan: Plan): boolean {
  return plan.resources.rollout.engine !== "trainer" || plan.mask.tis !== null;
}

export interface BatchMismatch {
  readonly stats: MismatchStats;
  /** With mask.tis: each sequence's importance weights (0 off target) and what the metrics record of them. */
  readonly tis?: { readonly weights: Float32Array[]; readonly stats: TisStats };
}

/** 1 where token k is a target the policy sampled (the only ones with a sampler's log-prob). */
function sampledTargets(lossMask: Uint8Array, roles: Uint8Array): Uint8Array {
  return lossMask.map((m, k) => (m === 1 && roles[k] === Role.generated ? 1 : 0));
}

/**
 * The gap d = logp_old - logp_sampled over each sequence's generated targets and, with
 * mask.tis, its weights; a target nobody sampled (prompt and observation tokens under
 * mask.loss: all) has no sampler's log-prob and keeps weight 1. Without the keep-sampling mask, logp_old is the untruncated distribution's while the
 * sampler's is the truncated one's: d then holds the truncation too, which is what the update's
 * ratio does not see, so the weight corrects exactly what lies between the two.
 */
export function batchMismatch(
  plan: Plan,
  lossMasks: readonly Uint8Array[],
  roles: readonly Uint8Array[],
  oldLogprobs: readonly Float32Array[],
  sampledLogprobs: readonly Float32Array[],
): BatchMismatch {
  const masks = lossMasks.map((m, i) => sampledTargets(m, roles[i] as Uint8Array));
  const batch = { logpOld: oldLogprobs, logpEngine: sampledLogprobs, mask: masks };
  const stats = mismatchStats(batch, plan.resources.rollout.mismatch_threshold);
  const tis = plan.mask.tis;
  if (tis === null) return { stats };
  const weights = tisWeights(batch, tis).map((w, i) =>
    Float32Array.from(w, (x, k) =>
      (lossMasks[i] as Uint8Array)[k] === 1 && (masks[i] as Uint8Array)[k] === 0 ? 1 : x,
    ),
  );
  return { stats, tis: { weights, stats: tisStats(weights, masks, tis.cap) } };
}
