// A small sign analysis over the reward IR: the set of signs (-, 0, +) an expression can take,
// from constants, signal types and declared ranges, products, sums and negation. Anything it
// cannot bound is "any sign", so rules that need a sign stay silent rather than guess.
import type { RewardExpr } from "../semantics/expressions.js";

export type SignSet = number;
export const NEG = 1;
export const ZERO = 2;
export const POS = 4;
export const ANY: SignSet = NEG | ZERO | POS;

type SignalExpr = Extract<RewardExpr, { op: "signal" }>;

/** The range a signal is declared with, when known (for `number` signals). */
export type SignalRange = (s: SignalExpr) => { min?: number | undefined; max?: number | undefined } | undefined;

const signs = [NEG, ZERO, POS] as const;

function ofNumber(v: number): SignSet {
  return v > 0 ? POS : v < 0 ? NEG : ZERO;
}

/** Combines every sign of `a` with every sign of `b`. */
function pairwise(a: SignSet, b: SignSet, f: (x: number, y: number) => SignSet): SignSet {
  let out = 0;
  for (const x of signs) if (a & x) for (const y of signs) if (b & y) out |= f(x, y);
  return out;
}

const add = (x: number, y: number): SignSet => (x === ZERO ? y : y === ZERO ? x : x === y ? x : ANY);
const mul = (x: number, y: number): SignSet => (x === ZERO || y === ZERO ? ZERO : x === y ? POS : NEG);
const min = (x: number, y: number): SignSet => (x === NEG || y === NEG ? NEG : x === ZERO || y === ZERO ? ZERO : POS);
const max = (x: number, y: number): SignSet => (x === POS || y === POS ? POS : x === ZERO || y === ZERO ? ZERO : NEG);

function negate(a: SignSet): SignSet {
  return (a & ZERO) | (a & NEG ? POS : 0) | (a & POS ? NEG : 0);
}

export function signOf(e: RewardExpr, range: SignalRange = () => undefined): SignSet {
  const rec = (x: RewardExpr) => signOf(x, range);
  switch (e.op) {
    case "const":
      return typeof e.value === "number"
        ? ofNumber(e.value)
        : typeof e.value === "boolean"
          ? e.value
            ? POS
            : ZERO
          : ANY;
    case "signal": {
      if (e.type === "bool" || e.type === "count") return ZERO | POS;
      if (e.type === "string") return ANY;
      const r = range(e);
      if (r?.min !== undefined && r.min >= 0) return r.min > 0 ? POS : ZERO | POS;
      if (r?.max !== undefined && r.max <= 0) return r.max < 0 ? NEG : ZERO | NEG;
      return ANY;
    }
    case "neg":
      return negate(rec(e.args[0]));
    case "not":
    case "==":
    case "!=":
    case "<":
    case "<=":
    case ">":
    case ">=":
    case "and":
    case "or":
    case "contains":
    case "starts_with":
    case "matches":
      return ZERO | POS;
    case "+":
      return pairwise(rec(e.args[0]), rec(e.args[1]), add);
    case "-":
      return pairwise(rec(e.args[0]), negate(rec(e.args[1])), add);
    case "*":
      return pairwise(rec(e.args[0]), rec(e.args[1]), mul);
    case "/": {
      // Division by zero is guarded at run time; only the divisor's nonzero signs matter.
      const divisor = rec(e.args[1]) & ~ZERO;
      return divisor === 0 ? ANY : pairwise(rec(e.args[0]), divisor, mul);
    }
    case "%": {
      // The remainder takes the dividend's sign, or is 0.
      return rec(e.args[0]) | ZERO;
    }
    case "when":
      return rec(e.args[0]) | ZERO;
    case "min":
      return e.args.map(rec).reduce((a, b) => pairwise(a, b, min));
    case "max":
      return e.args.map(rec).reduce((a, b) => pairwise(a, b, max));
    case "abs": {
      const a = rec(e.args[0]);
      return (a & ZERO) | (a & (NEG | POS) ? POS : 0);
    }
    case "clip": {
      const [x, lo, hi] = e.args.map(rec) as [SignSet, SignSet, SignSet];
      return pairwise(pairwise(x, lo, max), hi, min);
    }
  }
}

/** Never negative and not always zero. */
export function isPositive(s: SignSet): boolean {
  return (s & POS) !== 0 && (s & NEG) === 0;
}
