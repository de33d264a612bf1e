// Sampling arithmetic: how often a group carries signal (DAPO dynamic sampling,
// docs/semantics.md §3) and importance weights for off-policy samples (§7).

/** P(a group of G binary outcomes with success probability p is mixed) = 1 - p^G - (1-p)^G. */
export function mixedGroupProbability(p: number, groupSize: number): number {
  if (!(p >= 0 && p <= 1)) throw new RangeError(`p must be in [0, 1], got ${p}`);
  if (!Number.isInteger(groupSize) || groupSize < 1)
    throw new RangeError(`group size must be a positive integer, got ${groupSize}`);
  return 1 - p ** groupSize - (1 - p) ** groupSize;
}

/** pi(a)/mu(a). The support condition mu(a) > 0 wherever pi(a) > 0 is checked, not assumed. */
export function importanceWeight(pi: number, mu: number): number {
  if (!(pi >= 0 && pi <= 1) || !(mu >= 0 && mu <= 1))
    throw new RangeError(`probabilities must be in [0, 1], got pi=${pi} mu=${mu}`);
  if (mu === 0) {
    if (pi > 0)
      throw new RangeError("support violated: mu(a) = 0 where pi(a) > 0; no sample can correct for that action");
    return 0;
  }
  return pi / mu;
}

export interface Action {
  /** Behaviour (sampling) probability. */
  readonly mu: number;
  /** Target-policy probability. */
  readonly pi: number;
  /** f(a), e.g. the expected reward of the action. */
  readonly value: number;
}

/** E_{a~mu}[(pi/mu) f(a)], exactly (a sum over the actions): equals E_{a~pi}[f(a)]. */
export function importanceWeightedExpectation(actions: readonly Action[]): number {
  let s = 0;
  for (const a of actions) s += a.mu * importanceWeight(a.pi, a.mu) * a.value;
  return s;
}

/** E_{a~pi}[f(a)], directly. */
export function expectation(actions: readonly Action[]): number {
  let s = 0;
  for (const a of actions) s += a.pi * a.value;
  return s;
}

/** Expected rollouts per accepted group when only mixed groups are kept: G / P(mixed). */
export function expectedRolloutsPerMixedGroup(p: number, groupSize: number): number {
  const alpha = mixedGroupProbability(p, groupSize);
  return alpha === 0 ? Infinity : groupSize / alpha;
}
