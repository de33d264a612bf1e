// Small numeric helpers shared by the RL formulas.

/** The epsilon of every `/(std + eps)` in docs/semantics.md. */
export const STD_EPS = 1e-6;

export function sum(values: readonly number[]): number {
  let s = 0;
  for (const v of values) s += v;
  return s;
}

export function mean(values: readonly number[]): number {
  if (values.length === 0) throw new RangeError("mean of an empty list");
  return sum(values) / values.length;
}

/** Population standard deviation (divide by n), two-pass for accuracy. */
export function populationStd(values: readonly number[], mu: number = mean(values)): number {
  let ss = 0;
  for (const v of values) ss += (v - mu) * (v - mu);
  return Math.sqrt(ss / values.length);
}

/** Every entry identical (exactly): such a group carries no comparison signal. */
export function allEqual(values: readonly number[]): boolean {
  return values.every((v) => v === values[0]);
}

export function assertFinite(values: readonly number[], what: string): void {
  for (let i = 0; i < values.length; i++) {
    if (!Number.isFinite(values[i])) throw new RangeError(`${what}[${i}] is not a finite number`);
  }
}
