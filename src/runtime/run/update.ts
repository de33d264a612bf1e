// Update: algorithm.epochs passes over the scored batch, each cut into algorithm.minibatches in
// a seeded order; every minibatch is one train_step, one optimizer step whose reductions divide
// by denominators over the whole step (update.ts). Off-policy-masked sequences train with
// advantage 0; with mask.tis each sequence carries its importance weights. In a step-wise batch
// (score.ts) each sample is a sequence of its own. A single on-policy step goes without old
// log-probs (on-policy-update.ts).
import { at } from "../../contracts/checked.js";
import { shuffled } from "../../contracts/random.js";
import { trainStepParams, type TrainSequence } from "../update/train-batches.js";
import { takesOnPolicyStep } from "../update/on-policy.js";
import type { RunContext } from "./context.js";
import { sequenceAdvantages, type ScoredBatch } from "./score.js";

export interface PolicyUpdate {
  /** Each optimizer step's statistics, in order (a trainer may leave some out). */
  readonly stepStats: readonly Record<string, number>[];
  /** The trainer's policy version after the last step (the input version when no step was taken). */
  readonly version: number;
}

/** The train_step sequences of a scored batch. */
function trainSequences(scored: ScoredBatch): TrainSequence[] {
  const { ids, advantages: adv } = scored;
  const advantages = sequenceAdvantages(scored);
  const isWeights = scored.mismatch?.tis?.weights;
  return scored.scored.map((s, i) => ({
    ids: at(ids, i),
    roles: s.roles,
    advantages: at(advantages, i),
    oldLogprobs: s.oldLogprobs,
    ...(s.refLogprobs ? { refLogprobs: s.refLogprobs } : {}),
    ...(isWeights ? { isWeights: at(isWeights, i) } : {}),
    group: s.group,
    ...(adv.returns && s.values ? { returns: at(adv.returns, i), oldValues: s.values } : {}),
  }));
}

/** Updates the policy on `scored` (iteration `iteration`), starting at policy version `version`. */
export async function updatePolicy(
  ctx: RunContext,
  iteration: number,
  scored: ScoredBatch,
  version: number,
): Promise<PolicyUpdate> {
  const { plan } = ctx;
  const sequences = trainSequences(scored);
  const stepStats: Record<string, number>[] = [];
  let current = version;
  const onPolicy = takesOnPolicyStep(plan, ctx.trainer.handshakeResult);
  for (let epoch = 0; epoch < plan.algorithm.epochs && sequences.length > 0; epoch++) {
    const order = shuffled(
      sequences.map((_, i) => i),
      ctx.streams.minibatches(iteration, epoch),
    );
    const size = Math.ceil(order.length / plan.algorithm.minibatches);
    for (let m = 0; m < plan.algorithm.minibatches; m++) {
      const part = order.slice(m * size, (m + 1) * size).map((i) => at(sequences, i));
      if (part.length === 0) continue;
      const params = trainStepParams(plan, part);
      const result = await ctx.trainer.request("train_step", onPolicy ? { ...params, old_logprobs: null } : params);
      current = result.policy_version;
      stepStats.push(result as unknown as Record<string, number>);
    }
  }
  return { stepStats, version: current };
}
