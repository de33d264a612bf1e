// The policy-gradient loss of train_step (docs/semantics.md §4-§6) over GLOBAL denominators.
//
// Every reduction is sum_i w_i * sum_k m[i][k] * x[i][k] with a per-sequence weight w_i that
// depends only on the whole optimizer step's counts (the `denominators` of the request). The
// weights come from the reference registry in src/rl/policy-loss.ts (evaluated on a one-token
// part), so this trainer cannot disagree with it about what a reduction means. A microbatch's
// loss is its own weighted sum; microbatch losses (and gradients) add up to the whole step's.
//
// The same per-token terms exist twice: as a TensorFlow.js graph (train_step, float32, with
// autograd) and in float64 JavaScript (eval_op, where the conformance vectors need 1e-6),
// built from the reference's tokenSurrogate and KL estimators; tests hold the graph to the
// float64 twin.
import { klEstimators, type KlEstimatorName } from "../../rl/kl.js";
import {
  reductions,
  tokenSurrogate,
  type ClipOptions,
  type Reduction,
  type ReductionDenominators,
} from "../../rl/policy-loss.js";
import { tf } from "./backend.js";
import { at, defined } from "../../contracts/checked.js";

export interface StepDenominators {
  readonly tokens: number;
  readonly sequences: number;
  readonly groups: number;
  readonly groupTokens: ArrayLike<number>;
  readonly sequenceTokens: ArrayLike<number>;
  /** Group index of each sequence. */
  readonly groupOf: ArrayLike<number>;
}

export class LossInputError extends Error {}

const REDUCTION_MODES = [
  "token_mean",
  "seq_mean_token_mean",
  "seq_mean_token_sum",
  "constant",
  "group_token_mean",
] as const;
export const reductionModes: readonly string[] = REDUCTION_MODES;
export const klEstimatorNames: readonly KlEstimatorName[] = ["k1", "k2", "k3"];

export function toReduction(r: { readonly mode: string; readonly constant?: number }): Reduction {
  if (!(REDUCTION_MODES as readonly string[]).includes(r.mode))
    throw new LossInputError(`unknown reduction '${r.mode}' (known: ${REDUCTION_MODES.join(", ")})`);
  if (r.mode === "constant") {
    if (!(typeof r.constant === "number" && r.constant > 0))
      throw new LossInputError("reduction 'constant' needs a positive constant");
    return { mode: "constant", constant: r.constant };
  }
  return { mode: r.mode } as Reduction;
}

/** w_i for every sequence of the step: its share of reduce(x) per unit of sum_k m*x. */
export function sequenceWeights(reduction: Reduction, d: StepDenominators): Float64Array {
  const N = d.sequences;
  if (d.sequenceTokens.length !== N)
    throw new LossInputError(`denominators: ${d.sequenceTokens.length} sequence_tokens for ${N} sequences`);
  if (reduction.mode === "group_token_mean" && d.groupOf.length !== N)
    throw new LossInputError("group_token_mean needs the group of every sequence");
  const den = {
    tokens: d.tokens,
    sequences: N,
    sequenceTokens: Array.from(d.sequenceTokens),
    groups: d.groups,
    groupTokens: Array.from(d.groupTokens),
    groupOf: Array.from(d.groupOf),
  } as unknown as ReductionDenominators;
  const reduce = reductions.get(reduction.mode);
  const w = new Float64Array(N);
  for (let i = 0; i < N; i++) {
    if (reduction.mode === "group_token_mean") {
      const g = d.groupOf[i];
      if (!(g !== undefined && g >= 0 && g < d.groupTokens.length))
        throw new LossInputError(`sequence ${i}: group ${g} has no entry in denominators.group_tokens`);
    }
    w[i] = reduce({ indices: [i], contributions: [[1]], mask: [[1]] }, den, reduction);
  }
  return w;
}

function checkClip(clip: ClipOptions): void {
  if (!(clip.low >= 0 && clip.low <= 1)) throw new LossInputError(`clip.low must be in [0, 1], got ${clip.low}`);
  if (!(clip.high >= 0)) throw new LossInputError(`clip.high must be >= 0, got ${clip.high}`);
  if (clip.dual !== null && !(clip.dual > 1))
    throw new LossInputError(`clip.dual must be > 1 or null, got ${clip.dual}`);
}

// ---------------------------------------------------------------------------------------------
// float64 twin (eval_op)

export interface F64Batch {
  readonly logp: readonly (readonly number[])[];
  readonly logpOld: readonly (readonly number[])[];
  readonly mask: readonly (readonly number[])[];
  /** One per sequence, or one per token. */
  readonly advantages: readonly (number | readonly number[])[];
  readonly logpRef?: readonly (readonly number[])[];
  /** Importance weight per token (mask.tis, docs/semantics.md §12); absent: 1. */
  readonly isWeights?: readonly (readonly number[])[];
}

/** sum over `indices` of w_i * sum_k m * (-u + coef * k): a microbatch's share of the loss. */
export function microbatchLossF64(
  batch: F64Batch,
  indices: readonly number[],
  weights: Float64Array,
  clip: ClipOptions,
  kl?: { coef: number; estimator: KlEstimatorName },
): { loss: number; policyLoss: number; kl: number } {
  checkClip(clip);
  const k = kl && kl.coef !== 0 ? klEstimators.get(kl.estimator) : null;
  let policy = 0;
  let klSum = 0;
  for (const i of indices) {
    const m = at(batch.mask, i);
    const a = at(batch.advantages, i);
    const logps = at(batch.logp, i);
    const logpsOld = at(batch.logpOld, i);
    const logpsRef = k ? at(defined(batch.logpRef, "logp_ref (the KL term is on)"), i) : undefined;
    const isWeights = batch.isWeights ? at(batch.isWeights, i) : undefined;
    let su = 0;
    let sk = 0;
    for (let t = 0; t < m.length; t++) {
      if (m[t] !== 1) continue;
      const logp = at(logps, t);
      const ratio = Math.exp(logp - at(logpsOld, t));
      su += (isWeights ? at(isWeights, t) : 1) * tokenSurrogate(ratio, typeof a === "number" ? a : at(a, t), clip).u;
      if (k && logpsRef) sk += k(at(logpsRef, t) - logp);
    }
    const w = at(weights, i);
    policy -= w * su;
    klSum += w * sk;
  }
  const policyLoss = policy + 0; // never -0
  return { loss: policyLoss + (kl?.coef ?? 0) * klSum, policyLoss, kl: klSum };
}

// ---------------------------------------------------------------------------------------------
// TensorFlow.js graph (train_step)

/** One microbatch's target tokens, flattened (only tokens with loss_mask 1 ever get here). */
export interface TargetTokens {
  /** log pi_theta of each target under the (tempered, truncated) distribution: a graph tensor [n]. */
  readonly logp: tf.Tensor1D;
  /** Log-probabilities of every token at each target position [n, V] (for the entropy). */
  readonly logpAll: tf.Tensor2D;
  readonly oldLogp: Float32Array;
  readonly advantages: Float32Array;
  readonly refLogp: Float32Array | null;
  /** w_i of each target's sequence. */
  readonly weights: Float32Array;
  /**
   * Importance weight of each target (train_step's is_weights): multiplies its surrogate, a
   * constant (no gradient flows through it); not the KL term, not the statistics. Null: 1.
   */
  readonly isWeights: Float32Array | null;
}

export interface GraphTerms {
  /** sum w * (-u) + coef * sum w * k: what the optimizer minimises (this microbatch's share). */
  readonly loss: tf.Scalar;
  readonly policyLoss: tf.Scalar;
  readonly kl: tf.Scalar;
  /** Summed over targets (not weighted): entropy, clipped count, ratio sum/min/max. */
  readonly entropySum: tf.Scalar;
  readonly clipped: tf.Scalar;
  readonly ratioSum: tf.Scalar;
  readonly ratioMin: tf.Scalar;
  readonly ratioMax: tf.Scalar;
}

export function policyTerms(
  t: TargetTokens,
  clip: ClipOptions,
  kl: { coef: number; estimator: KlEstimatorName },
): GraphTerms {
  const n = t.oldLogp.length;
  const adv = tf.tensor1d(t.advantages);
  const w = tf.tensor1d(t.weights);
  const ratio = tf.exp(tf.sub(t.logp, tf.tensor1d(t.oldLogp)));
  const unclipped = tf.mul(ratio, adv);
  const clippedTerm = tf.mul(tf.clipByValue(ratio, 1 - clip.low, 1 + clip.high), adv);
  let u = tf.minimum(unclipped, clippedTerm);
  if (clip.dual !== null) u = tf.where(tf.less(adv, 0), tf.maximum(u, tf.mul(adv, clip.dual)), u);
  if (t.isWeights) u = tf.mul(tf.tensor1d(t.isWeights), u);
  const policyLoss = tf.neg(tf.sum(tf.mul(w, u))) as tf.Scalar;
  let klSum: tf.Scalar = tf.scalar(0);
  if (t.refLogp) {
    const logR = tf.sub(tf.tensor1d(t.refLogp), t.logp);
    let k: tf.Tensor;
    if (kl.estimator === "k1") k = tf.neg(logR);
    else if (kl.estimator === "k2") k = tf.mul(0.5, tf.square(logR));
    else k = tf.sub(tf.sub(tf.exp(logR), 1), logR);
    klSum = tf.sum<tf.Scalar>(tf.mul(w, k));
  }
  const loss = kl.coef !== 0 && t.refLogp ? tf.add<tf.Scalar>(policyLoss, tf.mul(kl.coef, klSum)) : policyLoss;
  // Statistics: no gradient flows through them (they are not part of `loss`).
  const p = tf.exp(t.logpAll);
  const entropySum = tf.neg(tf.sum(tf.where(tf.greater(p, 0), tf.mul(p, t.logpAll), tf.zerosLike(p)))) as tf.Scalar;
  const clipped = tf.sum<tf.Scalar>(tf.cast(tf.less(clippedTerm, unclipped), "float32"));
  return {
    loss,
    policyLoss,
    kl: klSum,
    entropySum,
    clipped,
    ratioSum: tf.sum<tf.Scalar>(ratio),
    ratioMin: n > 0 ? tf.min(ratio) : tf.scalar(Infinity),
    ratioMax: n > 0 ? tf.max(ratio) : tf.scalar(-Infinity),
  };
}

/** Per-token value loss 0.5*(V-R)^2, with value clipping c: 0.5*max((V-R)^2, (old+clip(V-old,-c,c)-R)^2); weighted sum. */
export function valueTerms(
  v: tf.Tensor1D,
  oldValues: Float32Array,
  returns: Float32Array,
  weights: Float32Array,
  valueClip: number | null,
): tf.Scalar {
  const R = tf.tensor1d(returns);
  let err = tf.square(tf.sub(v, R));
  if (valueClip !== null) {
    const old = tf.tensor1d(oldValues);
    const vc = tf.add(old, tf.clipByValue(tf.sub(v, old), -valueClip, valueClip));
    err = tf.maximum(err, tf.square(tf.sub(vc, R)));
  }
  return tf.sum<tf.Scalar>(tf.mul(tf.tensor1d(weights), tf.mul(0.5, err)));
}
