// The statistics of a train step pooled over its microbatches (docs/protocol.md "Results"). The
// losses and the clip/ratio statistics pool exactly as the reference's microbatches do
// (combineResults of src/rl/policy-loss.ts: losses add, since every part divides by the whole
// step's denominators; counts and sums add; min/max over parts with targets); the entropy and
// the value loss, which the reference has not, are summed beside them.
import { combineResults, poolStats, type PolicyLossResult } from "../../rl/policy-loss.js";
import type { TrainStepResult } from "../../contracts/trainer-protocol.js";

/** One microbatch's share of the losses and its sums over its target tokens. */
export interface MicrobatchStats {
  /** Its share of what the optimizer minimises: policy loss + coef * kl. */
  readonly loss: number;
  readonly policyLoss: number;
  readonly kl: number;
  /** Its target tokens (> 0: a part without targets contributes nothing). */
  readonly tokens: number;
  readonly entropySum: number;
  /** The target tokens' log-probs under the weights before the step, summed. */
  readonly logpSum: number;
  readonly clipped: number;
  readonly ratioSum: number;
  readonly ratioMin: number;
  readonly ratioMax: number;
}

export type StepStats = Omit<TrainStepResult, "grad_norm" | "policy_version">;

export class StatsPool {
  private readonly policy: PolicyLossResult[] = [];
  private entropySum = 0;
  private logpSum = 0;
  private valueLoss = 0;

  addPolicy(part: MicrobatchStats): void {
    // The embedded graph does not count dual clips (the protocol reports none).
    this.policy.push({
      loss: part.loss,
      policyLoss: part.policyLoss,
      kl: part.kl,
      stats: poolStats(part.tokens, part.clipped, 0, part.ratioSum, part.ratioMin, part.ratioMax),
    });
    this.entropySum += part.entropySum;
    this.logpSum += part.logpSum;
  }

  addValueLoss(loss: number): void {
    this.valueLoss += loss;
  }

  /**
   * The step's statistics: entropy, NLL, clip fraction and ratios are plain means/min/max over its
   * target tokens, 1 (ratios) or 0 without any (NaN is not JSON); `tokens` is the request's count.
   */
  result(withCritic: boolean, requestTokens: number): StepStats {
    const pooled = combineResults(this.policy);
    const { tokens } = pooled.stats;
    const any = tokens > 0;
    return {
      loss: pooled.loss,
      policy_loss: pooled.policyLoss + 0, // never -0
      kl: pooled.kl,
      entropy: any ? this.entropySum / tokens : 0,
      clip_fraction: pooled.stats.clipFraction,
      ratio_mean: any ? pooled.stats.ratioMean : 1,
      ratio_min: any ? pooled.stats.ratioMin : 1,
      ratio_max: any ? pooled.stats.ratioMax : 1,
      ...(withCritic ? { value_loss: this.valueLoss } : {}),
      nll: any ? -this.logpSum / tokens + 0 : 0, // never -0
      tokens: requestTokens,
    };
  }
}
