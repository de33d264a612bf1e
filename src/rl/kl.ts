// KL to the reference policy on target tokens (docs/semantics.md §6), per token, from
// log_r = logp_ref - logp_theta. k1 is unbiased but can be negative; k3 is unbiased and >= 0.
import { Registry } from "./registry.js";

export type KlEstimatorName = "k1" | "k2" | "k3";
type KlEstimator = (logRatio: number) => number;

export const klEstimators = new Registry<KlEstimator>("KL estimator", {
  k1: (logR) => -logR,
  k2: (logR) => 0.5 * logR * logR,
  // expm1 keeps precision when log_r is near 0 (the usual case).
  k3: (logR) => Math.expm1(logR) - logR,
});

/** Per-token KL estimates; `logp` under the current policy, `logpRef` under the reference. */
export function klPerToken(logp: readonly number[], logpRef: readonly number[], estimator: KlEstimatorName): number[] {
  if (logp.length !== logpRef.length)
    throw new RangeError(`kl: ${logp.length} log-probs but ${logpRef.length} reference log-probs`);
  const k = klEstimators.get(estimator);
  return logp.map((lp, i) => k((logpRef[i] as number) - lp));
}
