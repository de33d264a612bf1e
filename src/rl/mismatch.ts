// Train/inference mismatch (docs/semantics.md §12): the gap d = logp_old - logp_engine between
// the trainer's log-prob of a sampled token (recomputed with the weights that sampled) and the
// one the sampling engine reported, measured over target tokens, and the truncated
// importance-sampling weights that correct for it. Pure functions; the runtime's score phase
// uses them, the conformance ops `mismatch` and `tis_weights` hold every trainer to them.
import { Registry } from "./registry.js";

/** One batch's sequences: rows are sequences, columns token positions, entries read only where mask is 1. */
export interface MismatchBatch {
  /** The trainer's log-prob of each token (recomputed with the weights that sampled). */
  readonly logpOld: readonly ArrayLike<number>[];
  /** The log-prob the sampling engine reported for each token. */
  readonly logpEngine: readonly ArrayLike<number>[];
  /** 1 where the token is a target. */
  readonly mask: readonly ArrayLike<number>[];
}

export interface MismatchStats {
  /** Mean of |d| over the target tokens (0 without targets). */
  readonly meanAbs: number;
  /** Largest |d| (0 without targets). */
  readonly maxAbs: number;
  /** Fraction of target tokens with |d| > threshold (0 without targets). */
  readonly fracOver: number;
  /** Target tokens measured. */
  readonly tokens: number;
}

export type TisLevel = "token" | "sequence";

export interface TisOptions {
  /** C > 1: no weight exceeds it. */
  readonly cap: number;
  readonly level: TisLevel;
}

function checkShape(batch: MismatchBatch): void {
  const n = batch.mask.length;
  if (batch.logpOld.length !== n || batch.logpEngine.length !== n)
    throw new RangeError(
      `mismatch: ${n} masks, ${batch.logpOld.length} trainer rows, ${batch.logpEngine.length} engine rows`,
    );
  batch.mask.forEach((m, i) => {
    const old = batch.logpOld[i] as ArrayLike<number>;
    const engine = batch.logpEngine[i] as ArrayLike<number>;
    if (old.length !== m.length || engine.length !== m.length)
      throw new RangeError(
        `mismatch: sequence ${i} has ${m.length} mask entries, ${old.length} trainer and ${engine.length} engine log-probs`,
      );
  });
}

/** d_t = logp_old - logp_engine of each target token of sequence i, with its position. */
function gaps(batch: MismatchBatch, i: number): { k: number; d: number }[] {
  const m = batch.mask[i] as ArrayLike<number>;
  const old = batch.logpOld[i] as ArrayLike<number>;
  const engine = batch.logpEngine[i] as ArrayLike<number>;
  const out: { k: number; d: number }[] = [];
  for (let k = 0; k < m.length; k++) if (m[k] === 1) out.push({ k, d: (old[k] as number) - (engine[k] as number) });
  return out;
}

/** Mean and max |d| and the fraction of target tokens over `threshold` nats. */
export function mismatchStats(batch: MismatchBatch, threshold: number): MismatchStats {
  checkShape(batch);
  let tokens = 0;
  let sum = 0;
  let max = 0;
  let over = 0;
  for (let i = 0; i < batch.mask.length; i++) {
    for (const { d } of gaps(batch, i)) {
      const a = Math.abs(d);
      tokens++;
      sum += a;
      max = Math.max(max, a);
      if (a > threshold) over++;
    }
  }
  return { meanAbs: tokens > 0 ? sum / tokens : 0, maxAbs: max, fracOver: tokens > 0 ? over / tokens : 0, tokens };
}

/** Weights of one sequence's target tokens, given their gaps; entries off target stay 0. */
type TisLevelFn = (gaps: readonly { k: number; d: number }[], cap: number, out: Float64Array) => void;

const tisLevels = new Registry<TisLevelFn>("TIS level", {
  // w_t = min(exp(d_t), C): each token's own trainer/engine ratio, capped.
  token: (g, cap, out) => {
    for (const { k, d } of g) out[k] = Math.min(Math.exp(d), cap);
  },
  // w = min(exp(sum_t d_t), C) for every target token of the sequence: the sequence's ratio.
  sequence: (g, cap, out) => {
    let s = 0;
    for (const { d } of g) s += d;
    const w = Math.min(Math.exp(s), cap);
    for (const { k } of g) out[k] = w;
  },
});

/** The truncated importance-sampling weight of every token (0 off target), per sequence. */
export function tisWeights(batch: MismatchBatch, options: TisOptions): Float64Array[] {
  if (!(options.cap > 1)) throw new RangeError(`tis cap must be > 1, got ${options.cap}`);
  checkShape(batch);
  const level = tisLevels.get(options.level);
  return batch.mask.map((m, i) => {
    const out = new Float64Array(m.length);
    level(gaps(batch, i), options.cap, out);
    return out;
  });
}

export interface TisStats {
  /** Mean weight over the target tokens (1 without targets). */
  readonly meanWeight: number;
  /** Fraction of target tokens whose weight the cap took (exp(d) > C). */
  readonly fracCapped: number;
}

/** What the metrics record of the weights: their mean and how often the cap bound. */
export function tisStats(
  weights: readonly ArrayLike<number>[],
  mask: readonly ArrayLike<number>[],
  cap: number,
): TisStats {
  let tokens = 0;
  let sum = 0;
  let capped = 0;
  weights.forEach((w, i) => {
    const m = mask[i] as ArrayLike<number>;
    for (let k = 0; k < m.length; k++) {
      if (m[k] !== 1) continue;
      const x = w[k] as number;
      tokens++;
      sum += x;
      if (x >= cap) capped++;
    }
  });
  return { meanWeight: tokens > 0 ? sum / tokens : 1, fracCapped: tokens > 0 ? capped / tokens : 0 };
}
