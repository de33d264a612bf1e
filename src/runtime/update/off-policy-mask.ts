// Off-policy sequence masking (DeepSeek-V3.2; docs/semantics.md §7): a sequence with a negative
// advantage whose mean per-token log-ratio logp_old - logp_theta over its target tokens exceeds
// a threshold is taken out of the policy-gradient term. Such a sequence was sampled by a policy
// that has since moved far away; pushing its tokens down with a large ratio is where stale data
// does damage (the clip does not bound the negative side). Measured at the start of the update,
// against the weights that take its first step, so under asynchronous rollout the staleness of
// the pipelined batch is what is measured.
import { at } from "../../contracts/checked.js";

export interface MaskCandidate {
  /** 1 where token k is a training target. */
  readonly mask: Uint8Array;
  /** Per-token advantages (0 off target). */
  readonly advantages: Float32Array;
  /** Behaviour log-probs (what the update's ratio divides by). */
  readonly oldLogprobs: Float32Array;
  /** Log-probs of the same tokens under the policy about to be updated. */
  readonly currentLogprobs: Float32Array;
}

/** Whether each sequence is masked: mean advantage < 0 and mean (old - current) over targets > threshold. */
export function offPolicyMasked(sequences: readonly MaskCandidate[], threshold: number): boolean[] {
  return sequences.map((s) => {
    let n = 0;
    let advantage = 0;
    let logRatio = 0;
    for (let k = 0; k < s.mask.length; k++) {
      if (!s.mask[k]) continue;
      n++;
      advantage += at(s.advantages, k);
      logRatio += at(s.oldLogprobs, k) - at(s.currentLogprobs, k);
    }
    return n > 0 && advantage < 0 && logRatio / n > threshold;
  });
}
