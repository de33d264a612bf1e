// The RL update's single on-policy step. Without the keep-sampling mask the update recomputes the
// old log-probs under the full distribution (score.ts). When the update is one optimizer step on a
// batch the current weights sampled themselves (synchronous rollout, one epoch of one minibatch,
// sampled by the trainer, with nothing that reads the old log-probs before the step), those are
// the current weights' own log-probs: the trainer can take them from the step's forward pass
// (`old_logprobs: null`, docs/protocol.md "train_step"), and the `logprobs` pass is saved. The step
// is the same one (ratio exactly 1, the gradient of log-probs); only the recompute's rounding
// (about 1e-5 in the ratio) is gone. With the keep-sampling mask (the default) the sampled
// log-probs are the old ones and there is no pass to save: the request stays as it was.
import type { HandshakeResult } from "../contracts/trainer-protocol.js";
import type { Plan } from "../plan/schema.js";
import { measuresMismatch } from "./mismatch-correction.js";

/** Whether this plan's updates are single on-policy steps that `trainer` can take without old log-probs. */
export function takesOnPolicyStep(plan: Plan, trainer: HandshakeResult | undefined): boolean {
  const a = plan.algorithm;
  return (
    trainer?.capabilities.on_policy_step === true &&
    !plan.mask.keep_sampling_mask &&
    a.epochs === 1 &&
    a.minibatches === 1 &&
    plan.rollout.async === null &&
    // The mismatch metrics and mask.tis compare the sampled log-probs with the trainer's own.
    !measuresMismatch(plan) &&
    // These read the old log-probs before the step: off-policy masking, and a KL paid in the reward.
    plan.mask.off_policy_sequence_threshold === null &&
    !(a.kl.coef > 0 && a.kl.placement !== "loss")
  );
}
