// From scored trajectories to `train_step` requests: loss masks by the predicted token's role,
// per-token advantages, and the reduction's denominators over the WHOLE optimizer step (so the
// trainer divides every microbatch's sum by the same global counts).
import type { Denominators, TrainStepParams } from "../../contracts/trainer-protocol.js";
import { ragged } from "../../contracts/trainer-protocol.js";
import type { Plan } from "../../plan/schema.js";
import { reductionDenominators } from "../../rl/policy-loss.js";
import { Role } from "../../episode/buffer.js";

export interface TrainSequence {
  readonly ids: Int32Array;
  readonly roles: Uint8Array;
  /** Advantage of each token (0 where it is not a target). */
  readonly advantages: Float32Array;
  /** Behaviour-policy log-prob of each token (0 where not generated). */
  readonly oldLogprobs: Float32Array;
  readonly refLogprobs?: Float32Array;
  /** Importance weight of each token (mask.tis; 0 where not a target). */
  readonly isWeights?: Float32Array;
  /** The group (task instance) this sequence was sampled in. */
  readonly group: string;
  readonly returns?: Float32Array;
  readonly oldValues?: Float32Array;
}

/**
 * Target mask: token k is a target when the policy sampled it (docs/semantics.md §1: the predicted
 * token's role decides). With `mask.loss: all` every token after the first is a target — the
 * setting the `observation-in-loss` rule reports — except padding, cross-policy pool turns (the
 * policy did not sample them and has no behaviour log-probs for them) and earlier turns rendered
 * again from their text (step-wise samples): they are never targets.
 */
export function lossMask(roles: Uint8Array, loss: Plan["mask"]["loss"]): Uint8Array {
  const mask = new Uint8Array(roles.length);
  for (let k = 1; k < roles.length; k++) {
    const role = roles[k];
    mask[k] =
      role === Role.padding || role === Role.pool || role === Role.rendered
        ? 0
        : loss === "all" || role === Role.generated
          ? 1
          : 0;
  }
  return mask;
}

export function denominatorsOf(masks: readonly Uint8Array[], groups: readonly string[]): Denominators {
  const d = reductionDenominators({ mask: masks.map((m) => Array.from(m)), groups });
  return {
    tokens: d.tokens,
    sequences: d.sequences,
    groups: d.groups,
    group_tokens: Float64Array.from(d.groupTokens),
    sequence_tokens: Float64Array.from(d.sequenceTokens),
  };
}

/** `items` when every one is present (so also when there are none), else undefined. */
function allPresent<T>(items: readonly (T | undefined)[]): readonly T[] | undefined {
  return items.every((x): x is T => x !== undefined) ? items : undefined;
}

/** One optimizer step over `sequences`. */
export function trainStepParams(plan: Plan, sequences: readonly TrainSequence[]): TrainStepParams {
  const masks = sequences.map((s) => lossMask(s.roles, plan.mask.loss));
  const groups = sequences.map((s) => s.group);
  const groupIndex = new Map<string, number>();
  const groupIds = Int32Array.from(
    groups.map((g) => groupIndex.get(g) ?? (groupIndex.set(g, groupIndex.size), groupIndex.size - 1)),
  );
  const a = plan.algorithm;
  const refLogprobs = allPresent(sequences.map((s) => s.refLogprobs));
  const returns = allPresent(sequences.map((s) => s.returns));
  const oldValues = allPresent(sequences.map((s) => s.oldValues));
  const isWeights = allPresent(sequences.map((s) => s.isWeights));
  const critic = returns && oldValues ? a.critic : null;
  const keep = plan.mask.keep_sampling_mask;
  return {
    ids: ragged(
      sequences.map((s) => s.ids),
      Int32Array,
    ),
    loss_mask: ragged(masks, Uint8Array),
    advantages: ragged(
      sequences.map((s) => s.advantages),
      Float32Array,
    ),
    old_logprobs: ragged(
      sequences.map((s) => s.oldLogprobs),
      Float32Array,
    ),
    ref_logprobs: refLogprobs ? ragged(refLogprobs, Float32Array) : null,
    groups: groupIds,
    reduction: a.reduction,
    denominators: denominatorsOf(masks, groups),
    microbatches: a.microbatches,
    clip: a.clip,
    kl: { coef: a.kl.placement === "reward" ? 0 : a.kl.coef, estimator: a.kl.estimator, placement: a.kl.placement },
    sampling: {
      temperature: plan.policy.sampling.temperature,
      top_p: keep ? plan.policy.sampling.top_p : 1,
      top_k: keep ? plan.policy.sampling.top_k : 0,
    },
    critic:
      critic && returns && oldValues
        ? {
            returns: ragged(returns, Float32Array),
            old_values: ragged(oldValues, Float32Array),
            value_clip: critic.value_clip,
          }
        : null,
    // Only with mask.tis: a step without it keeps the request it always had.
    ...(plan.mask.tis && isWeights ? { is_weights: ragged(isWeights, Float32Array) } : {}),
  };
}
