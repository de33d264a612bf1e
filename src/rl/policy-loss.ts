// Clipped policy-gradient loss (docs/semantics.md §4) and its reductions (§5).
//
// Every reduction is linear in the per-sequence sums s_i = sum_k m[i][k]*u[i][k], with weights
// that depend only on the whole optimizer step's counts. So the API takes those counts
// (`ReductionDenominators`, computed once over the whole step) and each microbatch contributes
// its own numerator divided by the GLOBAL denominator: the microbatch contributions sum to the
// whole-batch loss, and a "mean of microbatch means" cannot be expressed.
import { klEstimators, type KlEstimatorName } from "./kl.js";
import { Registry } from "./registry.js";

export interface ClipOptions {
  /** Ratios below 1 - low are clipped (for positive advantages the gain stops there). */
  readonly low: number;
  /** Ratios above 1 + high are clipped; high > low is DAPO's Clip-Higher. */
  readonly high: number;
  /** Dual clip c > 1: for A < 0, u = max(u, c*A); null: off. */
  readonly dual: number | null;
}

export type Reduction =
  | { readonly mode: "token_mean" }
  | { readonly mode: "seq_mean_token_mean" }
  | { readonly mode: "seq_mean_token_sum" }
  | { readonly mode: "group_token_mean" }
  | { readonly mode: "constant"; readonly constant: number };

/** One optimizer step's sequences. Rows are sequences, columns token positions (targets aligned). */
export interface PolicyBatch {
  /** log pi_theta of each target token. */
  readonly logp: readonly (readonly number[])[];
  /** log pi_old (behaviour policy), stored at collection: a constant of the update. */
  readonly logpOld: readonly (readonly number[])[];
  /** 1 where the token is a training target, 0 otherwise. */
  readonly mask: readonly (readonly number[])[];
  /** One advantage per sequence (applied to all its targets) or one per token. */
  readonly advantages: readonly number[] | readonly (readonly number[])[];
  /** Group (prompt) of each sequence; needed by group_token_mean. */
  readonly groups?: readonly string[];
  /** log pi_ref per token; needed when a KL term is added to the loss. */
  readonly logpRef?: readonly (readonly number[])[];
  /**
   * Importance weight per token (truncated importance sampling against the sampling engine,
   * docs/semantics.md §12): multiplies the token's surrogate u, a constant of the update; the KL
   * term is not weighted. Absent: 1.
   */
  readonly isWeights?: readonly (readonly number[])[];
}

export interface PolicyLossOptions {
  readonly clip: ClipOptions;
  readonly reduction: Reduction;
  /** beta * reduce(k) added to the loss, with the same reduction; omitted or coef 0: off. */
  readonly kl?: { readonly coef: number; readonly estimator: KlEstimatorName };
}

declare const wholeStep: unique symbol;

/** Counts of the WHOLE optimizer step (all microbatches, all ranks). Only `reductionDenominators` makes one. */
export interface ReductionDenominators {
  /** Total target tokens, sum_i L_i. */
  readonly tokens: number;
  /** N, the number of sequences (those without targets included). */
  readonly sequences: number;
  /** L_i per sequence. */
  readonly sequenceTokens: readonly number[];
  /** Number of distinct groups (0 when the batch names none). */
  readonly groups: number;
  /** Target tokens per group, by group index. */
  readonly groupTokens: readonly number[];
  /** Group index of each sequence (in order of first appearance); empty when the batch names none. */
  readonly groupOf: readonly number[];
  readonly [wholeStep]: true;
}

export function reductionDenominators(batch: Pick<PolicyBatch, "mask" | "groups">): ReductionDenominators {
  const sequenceTokens = batch.mask.map((row, i) => {
    let L = 0;
    row.forEach((m, k) => {
      if (m !== 0 && m !== 1) throw new RangeError(`mask[${i}][${k}] must be 0 or 1, got ${m}`);
      L += m;
    });
    return L;
  });
  const groupOf: number[] = [];
  const groupTokens: number[] = [];
  if (batch.groups) {
    if (batch.groups.length !== batch.mask.length)
      throw new RangeError(`${batch.mask.length} sequences but ${batch.groups.length} group labels`);
    const index = new Map<string, number>();
    batch.groups.forEach((name, i) => {
      let g = index.get(name);
      if (g === undefined) {
        g = index.size;
        index.set(name, g);
        groupTokens.push(0);
      }
      groupOf.push(g);
      groupTokens[g] = (groupTokens[g] as number) + (sequenceTokens[i] as number);
    });
  }
  const tokens = sequenceTokens.reduce((a, b) => a + b, 0);
  return {
    tokens,
    sequences: sequenceTokens.length,
    sequenceTokens,
    groups: groupTokens.length,
    groupTokens,
    groupOf,
  } as unknown as ReductionDenominators;
}

/** The sequences of one microbatch (or the whole batch), with their per-token contributions. */
interface ReductionPart {
  /** Indices of the sequences in the whole batch. */
  readonly indices: readonly number[];
  /** Per-token contributions of those sequences (u, or a KL estimate); read only where mask is 1. */
  readonly contributions: readonly (readonly number[])[];
  readonly mask: readonly (readonly number[])[];
}

/** This part's share of reduce(contributions) over the whole step. */
type ReductionFn = (part: ReductionPart, d: ReductionDenominators, reduction: Reduction) => number;

// x / 0 only happens when there is nothing to count (no targets, no sequences): contributes 0.
function over(numerator: number, denominator: number): number {
  return denominator === 0 ? 0 : numerator / denominator;
}

function sequenceSums(part: ReductionPart): number[] {
  return part.indices.map((_, j) => {
    const u = part.contributions[j] as readonly number[];
    const m = part.mask[j] as readonly number[];
    let s = 0;
    for (let k = 0; k < m.length; k++) if (m[k] === 1) s += u[k] as number;
    return s;
  });
}

function weighted(weight: (index: number, d: ReductionDenominators, reduction: Reduction) => number): ReductionFn {
  return (part, d, reduction) => {
    const sums = sequenceSums(part);
    let total = 0;
    part.indices.forEach((i, j) => {
      total += (sums[j] as number) * weight(i, d, reduction);
    });
    return total;
  };
}

export const reductions = new Registry<ReductionFn>("reduction", {
  // sum_i sum_k m*u / sum_i L_i, over the whole step.
  token_mean: weighted((_, d) => over(1, d.tokens)),
  // Original GRPO: (1/N) sum_i (sum_k m*u) / L_i.
  seq_mean_token_mean: weighted((i, d) => over(over(1, d.sequenceTokens[i] as number), d.sequences)),
  // (1/N) sum_i sum_k m*u.
  seq_mean_token_sum: weighted((_, d) => over(1, d.sequences)),
  // Dr. GRPO: (1/(N*L)) sum_i sum_k m*u.
  constant: weighted((_, d, r) => {
    if (r.mode !== "constant" || !(r.constant > 0))
      throw new RangeError("reduction 'constant' needs a positive constant L");
    return over(1, d.sequences * r.constant);
  }),
  // DAPO per prompt: mean over groups of (group's token sum / group's token count).
  group_token_mean: weighted((i, d) => {
    const g = d.groupOf[i];
    if (g === undefined) throw new RangeError("reduction 'group_token_mean' needs the group of every sequence");
    return over(over(1, d.groupTokens[g] as number), d.groups);
  }),
});

export interface PolicyLossStats {
  /** Target tokens in this part. */
  readonly tokens: number;
  /** Targets where the PPO clip was active (the clipped term was strictly smaller). */
  readonly clipped: number;
  /** Targets where the dual clip c*A was taken. */
  readonly dualClipped: number;
  readonly ratioSum: number;
  readonly ratioMin: number;
  readonly ratioMax: number;
  readonly clipFraction: number;
  readonly dualClipFraction: number;
  readonly ratioMean: number;
}

export interface PolicyLossResult {
  /** What the optimizer minimises: -reduce(u) + beta*reduce(k); this part's share of it. */
  readonly loss: number;
  /** -reduce(u). */
  readonly policyLoss: number;
  /** reduce(k), before beta; 0 without a KL term. */
  readonly kl: number;
  readonly stats: PolicyLossStats;
}

export interface TokenSurrogate {
  readonly u: number;
  readonly clipped: boolean;
  readonly dualClipped: boolean;
}

/** u = min(rho*A, clip(rho, 1-low, 1+high)*A), then max(u, c*A) for A < 0 with a dual clip. */
export function tokenSurrogate(ratio: number, advantage: number, clip: ClipOptions): TokenSurrogate {
  const unclipped = ratio * advantage;
  const clippedTerm = Math.min(Math.max(ratio, 1 - clip.low), 1 + clip.high) * advantage;
  let u = Math.min(unclipped, clippedTerm);
  const clipped = clippedTerm < unclipped;
  let dualClipped = false;
  if (clip.dual !== null && advantage < 0 && clip.dual * advantage > u) {
    u = clip.dual * advantage;
    dualClipped = true;
  }
  return { u, clipped, dualClipped };
}

/**
 * du/d(logp_theta) of one token's surrogate (d rho / d logp = rho): rho * A where the unclipped
 * term is the one taken, 0 where the clip or the dual clip took over (flat in rho). The loss's
 * gradient per token is -w_i times this, w_i the reduction's weight of the token's sequence.
 */
export function surrogateSlope(ratio: number, advantage: number, clip: ClipOptions): number {
  const s = tokenSurrogate(ratio, advantage, clip);
  return s.clipped || s.dualClipped ? 0 : ratio * advantage;
}

function checkClip(clip: ClipOptions): void {
  if (!(clip.low >= 0 && clip.low <= 1)) throw new RangeError(`clip.low must be in [0, 1], got ${clip.low}`);
  if (!(clip.high >= 0)) throw new RangeError(`clip.high must be >= 0, got ${clip.high}`);
  if (clip.dual !== null && !(clip.dual > 1)) throw new RangeError(`clip.dual must be > 1 or null, got ${clip.dual}`);
}

function row(
  rows: readonly (readonly number[])[] | undefined,
  i: number,
  width: number,
  what: string,
): readonly number[] {
  const r = rows?.[i];
  if (!r) throw new RangeError(`${what}: no row for sequence ${i}`);
  if (r.length !== width) throw new RangeError(`${what}[${i}] has ${r.length} entries, mask[${i}] has ${width}`);
  return r;
}

function tokenAdvantage(batch: PolicyBatch, i: number, width: number): (k: number) => number {
  const a = batch.advantages[i];
  if (a === undefined) throw new RangeError(`advantages: none for sequence ${i}`);
  if (typeof a === "number") return () => a;
  if (a.length !== width) throw new RangeError(`advantages[${i}] has ${a.length} entries, mask[${i}] has ${width}`);
  return (k) => a[k] as number;
}

/**
 * This microbatch's share of the whole step's loss: its numerators over the step's global
 * denominators. Summing over any partition of the step's sequences gives `policyLoss`.
 */
export function microbatchLoss(
  batch: PolicyBatch,
  indices: readonly number[],
  denominators: ReductionDenominators,
  options: PolicyLossOptions,
): PolicyLossResult {
  checkClip(options.clip);
  const N = batch.mask.length;
  if (denominators.sequences !== N)
    throw new RangeError(
      `the denominators count ${denominators.sequences} sequences but the batch has ${N}: compute them once over the whole optimizer step`,
    );
  if (batch.advantages.length !== N) throw new RangeError(`${N} sequences but ${batch.advantages.length} advantages`);
  const reduce = reductions.get(options.reduction.mode);
  const klCoef = options.kl?.coef ?? 0;
  const klEstimate = klCoef !== 0 && options.kl ? klEstimators.get(options.kl.estimator) : null;
  if (klEstimate && !batch.logpRef) throw new RangeError("a KL term needs the reference log-probs (logpRef)");

  const seen = new Set<number>();
  const u: number[][] = [];
  const k: number[][] = [];
  const masks: (readonly number[])[] = [];
  let tokens = 0;
  let clipped = 0;
  let dualClipped = 0;
  let ratioSum = 0;
  let ratioMin = Infinity;
  let ratioMax = -Infinity;
  for (const i of indices) {
    if (!Number.isInteger(i) || i < 0 || i >= N)
      throw new RangeError(`sequence index ${i} is outside the batch (0..${N - 1})`);
    if (seen.has(i)) throw new RangeError(`sequence ${i} appears twice in one microbatch`);
    seen.add(i);
    const m = batch.mask[i] as readonly number[];
    const width = m.length;
    const logp = row(batch.logp, i, width, "logp");
    const logpOld = row(batch.logpOld, i, width, "logp_old");
    const logpRef = klEstimate ? row(batch.logpRef, i, width, "logp_ref") : null;
    const isWeights = batch.isWeights ? row(batch.isWeights, i, width, "is_weights") : null;
    const advantage = tokenAdvantage(batch, i, width);
    const uRow = new Array<number>(width).fill(0);
    const kRow = new Array<number>(width).fill(0);
    let L = 0;
    for (let t = 0; t < width; t++) {
      if (m[t] !== 1) {
        if (m[t] !== 0) throw new RangeError(`mask[${i}][${t}] must be 0 or 1, got ${m[t]}`);
        continue; // never exponentiate padding's arbitrary log-probs
      }
      L++;
      const ratio = Math.exp((logp[t] as number) - (logpOld[t] as number));
      const s = tokenSurrogate(ratio, advantage(t), options.clip);
      if (!Number.isFinite(s.u))
        throw new RangeError(`non-finite surrogate at sequence ${i}, token ${t} (ratio ${ratio})`);
      uRow[t] = isWeights ? (isWeights[t] as number) * s.u : s.u;
      if (s.clipped) clipped++;
      if (s.dualClipped) dualClipped++;
      ratioSum += ratio;
      ratioMin = Math.min(ratioMin, ratio);
      ratioMax = Math.max(ratioMax, ratio);
      if (klEstimate && logpRef) kRow[t] = klEstimate((logpRef[t] as number) - (logp[t] as number));
    }
    if (L !== denominators.sequenceTokens[i])
      throw new RangeError(
        `sequence ${i} has ${L} targets but the denominators say ${denominators.sequenceTokens[i]}: they belong to another batch`,
      );
    tokens += L;
    u.push(uRow);
    k.push(kRow);
    masks.push(m);
  }
  const policyLoss = 0 - reduce({ indices, contributions: u, mask: masks }, denominators, options.reduction); // 0 - x: no -0
  const kl = klEstimate ? reduce({ indices, contributions: k, mask: masks }, denominators, options.reduction) : 0;
  return {
    loss: policyLoss + klCoef * kl,
    policyLoss,
    kl,
    stats: poolStats(tokens, clipped, dualClipped, ratioSum, ratioMin, ratioMax),
  };
}

/** Clip and ratio statistics from their sums over `tokens` target tokens (undefined ones NaN when there are none). */
export function poolStats(
  tokens: number,
  clipped: number,
  dualClipped: number,
  ratioSum: number,
  ratioMin: number,
  ratioMax: number,
): PolicyLossStats {
  const any = tokens > 0;
  return {
    tokens,
    clipped,
    dualClipped,
    ratioSum,
    ratioMin: any ? ratioMin : NaN,
    ratioMax: any ? ratioMax : NaN,
    clipFraction: any ? clipped / tokens : 0,
    dualClipFraction: any ? dualClipped / tokens : 0,
    ratioMean: any ? ratioSum / tokens : NaN,
  };
}

/** Sums microbatch results: losses add (they share the global denominators), statistics pool. */
export function combineResults(parts: readonly PolicyLossResult[]): PolicyLossResult {
  let loss = 0;
  let policyLoss = 0;
  let kl = 0;
  let tokens = 0;
  let clipped = 0;
  let dualClipped = 0;
  let ratioSum = 0;
  let ratioMin = Infinity;
  let ratioMax = -Infinity;
  for (const p of parts) {
    loss += p.loss;
    policyLoss += p.policyLoss;
    kl += p.kl;
    tokens += p.stats.tokens;
    clipped += p.stats.clipped;
    dualClipped += p.stats.dualClipped;
    ratioSum += p.stats.ratioSum;
    if (p.stats.tokens > 0) {
      ratioMin = Math.min(ratioMin, p.stats.ratioMin);
      ratioMax = Math.max(ratioMax, p.stats.ratioMax);
    }
  }
  return {
    loss,
    policyLoss,
    kl,
    stats: poolStats(tokens, clipped, dualClipped, ratioSum, ratioMin, ratioMax),
  };
}

/** The whole step as one microbatch. */
export function policyLoss(batch: PolicyBatch, options: PolicyLossOptions): PolicyLossResult {
  return microbatchLoss(
    batch,
    batch.mask.map((_, i) => i),
    reductionDenominators(batch),
    options,
  );
}

/**
 * The step split into microbatches (a partition of the sequence indices): denominators are
 * computed once for the whole step, each microbatch is reduced against them, results summed.
 */
export function partitionedLoss(
  batch: PolicyBatch,
  microbatches: readonly (readonly number[])[],
  options: PolicyLossOptions,
): { readonly total: PolicyLossResult; readonly parts: PolicyLossResult[] } {
  const N = batch.mask.length;
  const count = new Array<number>(N).fill(0);
  for (const mb of microbatches) {
    for (const i of mb) {
      if (!Number.isInteger(i) || i < 0 || i >= N)
        throw new RangeError(`microbatch index ${i} is outside the batch (0..${N - 1})`);
      count[i] = (count[i] as number) + 1;
    }
  }
  const bad = count.findIndex((c) => c !== 1);
  if (bad >= 0)
    throw new RangeError(
      `the microbatches must be a partition of the sequences: sequence ${bad} appears ${count[bad]} times`,
    );
  const denominators = reductionDenominators(batch);
  const parts = microbatches.map((mb) => microbatchLoss(batch, mb, denominators, options));
  return { total: combineResults(parts), parts };
}
