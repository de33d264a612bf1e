// The RL update's single on-policy step. When the update is one optimizer step on a batch the
// current weights sampled themselves (synchronous rollout, one epoch of one minibatch, sampled by
// the trainer, with nothing that reads the old log-probs before the step), the old log-probs are
// the current weights' own: the trainer takes them from the step's forward pass
// (`old_logprobs: null`, docs/protocol.md "train_step"). The step is the same one (ratio exactly 1,
// the gradient of log-probs), with two gains: without the keep-sampling mask the `logprobs` pass
// that would recompute them is saved, and with it the update no longer reads the log-probs that
// generation reported, whose last bits depend on which prompts shared a generate request (a
// timing matter: episodes join requests as their turns come), so a seed's run does not drift with
// the machine's load.
import type { HandshakeResult } from "../../contracts/trainer-protocol.js";
import type { Plan } from "../../plan/schema.js";
import { measuresMismatch } from "./mismatch-correction.js";

/** Whether this plan's updates are single on-policy steps that `trainer` can take without old log-probs. */
export function takesOnPolicyStep(plan: Plan, trainer: HandshakeResult | undefined): boolean {
  const a = plan.algorithm;
  return (
    trainer?.capabilities.on_policy_step === true &&
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
