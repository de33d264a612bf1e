// train_step (docs/protocol.md): the batch cut into microbatches, each microbatch's target tokens
// gathered, the policy's (and critic's) gradient of each microbatch's share of the loss summed
// over the microbatches (gradient accumulation), then one AdamW step. The loss maths is in
// losses.ts, the pooling of the statistics in stats.ts.
import type { KlEstimatorName } from "../../rl/kl.js";
import type { TrainStepParams, TrainStepResult } from "../../contracts/trainer-protocol.js";
import { tf } from "./backend.js";
import { chunksByCost, rows, timeMajor, type ChunkBudget } from "./batching.js";
import { invalidOnInputError } from "./errors.js";
import { LossInputError, policyTerms, sequenceWeights, toReduction, valueTerms } from "./losses.js";
import { criticValues, gruStates, readoutLogits, type ModelShape, type ParamSet, type Query } from "./model.js";
import { checkTargets, checkTrainStep } from "./requests.js";
import { keepMask, temperatureOf, truncates, type SamplingParams } from "./sampling.js";
import { chunkBudget, type TrainerState } from "./state.js";
import { StatsPool, type MicrobatchStats, type StepStats } from "./stats.js";
import { currentWeightsChanged } from "./weights.js";
import { at, defined, InternalError } from "../../contracts/checked.js";

/** Gradients by parameter name, summed over microbatches in float64. */
type GradientSums = Map<string, Float64Array>;

export interface Gradients {
  readonly loss: number;
  readonly policy: GradientSums;
  readonly critic: GradientSums | null;
  readonly stats: StepStats;
}

/** The request's sequences as row views. */
interface StepBatch {
  readonly ids: Int32Array[];
  readonly masks: Uint8Array[];
  readonly advantages: Float32Array[];
  /** null: the on-policy step (old log-probs = the current weights' own). */
  readonly old: Float32Array[] | null;
  readonly ref: Float32Array[] | null;
  /** Importance weight per token (is_weights), or null: 1 everywhere. */
  readonly isWeights: Float32Array[] | null;
  readonly returns: Float32Array[] | null;
  readonly oldValues: Float32Array[] | null;
  /** w_i: sequence i's weight under the step's reduction and global denominators. */
  readonly weights: Float64Array;
}

/** One microbatch in the time-major layout, with its target tokens flattened. */
interface Microbatch {
  readonly tm: Int32Array;
  readonly T: number;
  readonly B: number;
  /** Read-out rows (position k-1 of sequence j) that predict a target token k. */
  readonly where: Query[];
  /** Per target k, the flat row of the [T*B] states whose value `values[k]` reports (score.ts). */
  readonly valueWhere: number[];
  readonly targets: number[];
  /** null: the on-policy step. */
  readonly oldLogp: number[] | null;
  readonly advantages: number[];
  readonly refLogp: number[];
  readonly isWeights: number[];
  readonly weights: number[];
  readonly returns: number[];
  readonly oldValues: number[];
}

function stepWeights(p: TrainStepParams): Float64Array {
  const d = p.denominators;
  return invalidOnInputError(
    () =>
      sequenceWeights(toReduction(p.reduction), {
        tokens: d.tokens,
        sequences: d.sequences,
        groups: d.groups,
        groupTokens: d.group_tokens,
        sequenceTokens: d.sequence_tokens,
        groupOf: p.groups,
      }),
    LossInputError,
  );
}

/**
 * The declared microbatches (a partition of the sequences, in order), each split further when
 * its padded size exceeds the chunk budget: every part divides by the same global denominators,
 * so neither split changes the loss or the gradient.
 */
function microbatchParts(
  ids: readonly Int32Array[],
  masks: readonly Uint8Array[],
  microbatches: number,
  budget: ChunkBudget,
): number[][] {
  const n = ids.length;
  const m = Math.max(1, Math.min(n, microbatches));
  const parts: number[][] = [];
  for (let j = 0; j < m; j++) {
    const idx: number[] = [];
    for (let i = Math.floor((j * n) / m); i < Math.floor(((j + 1) * n) / m); i++) idx.push(i);
    parts.push(
      ...chunksByCost(
        idx,
        (i) => at(ids, i).length,
        (i) => targetCount(at(masks, i)),
        budget,
      ),
    );
  }
  return parts;
}

/** The read-out queries of a sequence: its targets (loss_mask 1 after position 0), as gather() takes them. */
function targetCount(mask: Uint8Array): number {
  let n = 0;
  for (let k = 1; k < mask.length; k++) if (mask[k] === 1) n++;
  return n;
}

/** A part's sequences, padded, and its target tokens (loss_mask 1) with what the loss needs of each. */
function gather(batch: StepBatch, part: readonly number[]): Microbatch {
  const { ids: tm, T, B } = timeMajor(part.map((i) => at(batch.ids, i)));
  const mb: Microbatch = {
    tm,
    T,
    B,
    where: [],
    valueWhere: [],
    targets: [],
    oldLogp: batch.old ? [] : null,
    advantages: [],
    refLogp: [],
    isWeights: [],
    weights: [],
    returns: [],
    oldValues: [],
  };
  part.forEach((i, j) => {
    const mk = at(batch.masks, i);
    const ids = at(batch.ids, i);
    const old = batch.old && at(batch.old, i);
    const advantages = at(batch.advantages, i);
    const ref = batch.ref && at(batch.ref, i);
    const isWeights = batch.isWeights && at(batch.isWeights, i);
    const weight = at(batch.weights, i);
    const returns = batch.returns && at(batch.returns, i);
    const oldValues = batch.returns && at(defined(batch.oldValues, "the old values of a batch with returns"), i);
    for (let k = 1; k < mk.length; k++) {
      if (mk[k] !== 1) continue;
      mb.where.push({ j, t: k - 1 });
      mb.valueWhere.push(k * B + j);
      mb.targets.push(at(ids, k));
      if (old && mb.oldLogp) mb.oldLogp.push(at(old, k));
      mb.advantages.push(at(advantages, k));
      if (ref) mb.refLogp.push(at(ref, k));
      if (isWeights) mb.isWeights.push(at(isWeights, k));
      mb.weights.push(weight);
      if (returns && oldValues) {
        mb.returns.push(at(returns, k));
        mb.oldValues.push(at(oldValues, k));
      }
    }
  });
  return mb;
}

/** Named gradients of `vars` out of a variableGrads result, added into `sums` (then disposed). */
function accumulate(
  sums: GradientSums,
  vars: readonly [string, tf.Variable][],
  grads: Record<string, tf.Tensor>,
): void {
  for (const [name, v] of vars) {
    const g = grads[v.name];
    if (!g) continue;
    const vals = g.dataSync();
    let a = sums.get(name);
    if (!a) sums.set(name, (a = new Float64Array(vals.length)));
    if (a.length !== vals.length)
      throw new InternalError(`gradient ${name} has ${vals.length} values, its sum ${a.length}`);
    // i < vals.length = a.length (checked above).
    for (let i = 0; i < vals.length; i++) a[i] = (a[i] as number) + (vals[i] as number);
  }
  for (const g of Object.values(grads)) g.dispose();
}

interface PolicyLossSettings {
  readonly shape: ModelShape;
  readonly sampling: SamplingParams | null;
  readonly clip: { readonly low: number; readonly high: number; readonly dual: number | null };
  readonly kl: { readonly coef: number; readonly estimator: KlEstimatorName };
  readonly withRef: boolean;
  readonly withIsWeights: boolean;
}

/** The policy's loss on one microbatch, its gradient added into `sums`, and the microbatch's statistics. */
function policyGradient(policy: ParamSet, mb: Microbatch, s: PolicyLossSettings, sums: GradientSums): MicrobatchStats {
  const V = s.shape.vocab;
  const nt = mb.where.length;
  const tau = temperatureOf(s.sampling);
  const trunc = truncates(s.sampling, V);
  const vars = [...policy.vars.entries()];
  let stats: tf.Tensor[] = [];
  let logpSum = 0;
  const { value, grads } = tf.variableGrads(
    () => {
      const hs = gruStates(policy, tf.tensor1d(mb.tm, "int32"), mb.T, mb.B, s.shape.hidden);
      const logits = readoutLogits(policy, s.shape, hs, mb.tm, mb.T, mb.B, mb.where);
      let scaled: tf.Tensor2D = tf.div(logits, tau);
      if (trunc)
        scaled = tf.add(
          scaled,
          tf.tensor2d(
            keepMask(
              logits.dataSync() as Float32Array,
              nt,
              V,
              defined(s.sampling, "the sampling parameters (truncation is on)"),
              mb.targets,
            ),
            [nt, V],
          ),
        );
      const logpAll = tf.logSoftmax(scaled);
      const logp = tf.sum<tf.Tensor1D>(tf.mul(logpAll, tf.oneHot(tf.tensor1d(mb.targets, "int32"), V)), 1);
      const current = logp.dataSync() as Float32Array;
      logpSum = current.reduce((sum, x) => sum + x, 0);
      // On-policy (old_logprobs null): the old log-probs are the current ones read out of the
      // graph, a constant, so the ratio is exactly 1 and its gradient is that of logp.
      const terms = policyTerms(
        {
          logp,
          logpAll,
          oldLogp: mb.oldLogp ? Float32Array.from(mb.oldLogp) : current.slice(),
          advantages: Float32Array.from(mb.advantages),
          refLogp: s.withRef ? Float32Array.from(mb.refLogp) : null,
          weights: Float32Array.from(mb.weights),
          isWeights: s.withIsWeights ? Float32Array.from(mb.isWeights) : null,
        },
        s.clip,
        s.kl,
      );
      stats = [
        terms.policyLoss,
        terms.kl,
        terms.entropySum,
        terms.clipped,
        terms.ratioSum,
        terms.ratioMin,
        terms.ratioMax,
      ].map((t) => tf.keep(t));
      return terms.loss;
    },
    vars.map(([, v]) => v),
  );
  const loss = scalarOf(value);
  // (`value` may be one of the statistics: read them all before disposing any.)
  const [policyLoss, kl, entropySum, clipped, ratioSum, ratioMin, ratioMax] = stats.map(scalarOf) as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  for (const t of new Set([value, ...stats])) t.dispose();
  accumulate(sums, vars, grads);
  return { loss, policyLoss, kl, tokens: nt, entropySum, logpSum, clipped, ratioSum, ratioMin, ratioMax };
}

/** The critic's value loss on one microbatch, its gradient added into `sums`. */
function criticGradient(
  critic: ParamSet,
  mb: Microbatch,
  hidden: number,
  valueClip: number | null,
  sums: GradientSums,
): number {
  const vars = [...critic.vars.entries()];
  const r = tf.variableGrads(
    () => {
      const hs = gruStates(critic, tf.tensor1d(mb.tm, "int32"), mb.T, mb.B, hidden);
      const v = criticValues(critic, tf.gather(hs, tf.tensor1d(mb.valueWhere, "int32")));
      return valueTerms(
        v,
        Float32Array.from(mb.oldValues),
        Float32Array.from(mb.returns),
        Float32Array.from(mb.weights),
        valueClip,
      );
    },
    vars.map(([, v]) => v),
  );
  const loss = scalarOf(r.value);
  r.value.dispose();
  accumulate(sums, vars, r.grads);
  return loss;
}

/** Loss, gradients (summed over microbatches) and statistics of one step, without applying it. */
export function computeGradients(state: TrainerState, p: TrainStepParams): Gradients {
  const c = state.conf;
  checkTrainStep(p, c.shape.vocab, c.critic !== null);
  const weights = stepWeights(p);
  const masks = rows(p.loss_mask);
  checkTargets(masks, p.denominators.sequence_tokens);
  const critic = p.critic && c.critic ? { params: c.critic, valueClip: p.critic.value_clip } : null;
  const batch: StepBatch = {
    ids: rows(p.ids),
    masks,
    advantages: rows(p.advantages),
    old: p.old_logprobs ? rows(p.old_logprobs) : null,
    ref: p.ref_logprobs ? rows(p.ref_logprobs) : null,
    isWeights: p.is_weights ? rows(p.is_weights) : null,
    returns: p.critic ? rows(p.critic.returns) : null,
    oldValues: p.critic ? rows(p.critic.old_values) : null,
    weights,
  };
  const settings: PolicyLossSettings = {
    shape: c.shape,
    sampling: p.sampling,
    clip: p.clip,
    kl: { coef: p.kl.coef, estimator: p.kl.estimator as KlEstimatorName },
    withRef: p.ref_logprobs !== null,
    withIsWeights: p.is_weights != null,
  };
  const policySums: GradientSums = new Map();
  const criticSums: GradientSums | null = c.critic ? new Map() : null;
  const pool = new StatsPool();
  const started = performance.now();
  let padded = 0;
  for (const part of microbatchParts(
    batch.ids,
    batch.masks,
    p.microbatches,
    chunkBudget(state.options, c.shape.vocab),
  )) {
    const mb = gather(batch, part);
    padded += mb.T * mb.B;
    if (mb.where.length === 0) continue; // no targets: no contribution to the loss or the gradient
    pool.addPolicy(policyGradient(c.policy, mb, settings, policySums));
    if (critic && criticSums)
      pool.addValueLoss(criticGradient(critic.params, mb, c.shape.hidden, critic.valueClip, criticSums));
  }
  state.timing.trainTokens = padded;
  state.timing.trainSeconds = (performance.now() - started) / 1000;
  const stats = pool.result(p.critic !== null, p.denominators.tokens);
  return { loss: stats.loss, policy: policySums, critic: criticSums, stats };
}

/** One optimizer step of the policy (and the critic, when the request trains it). */
export function trainStep(state: TrainerState, p: TrainStepParams): TrainStepResult {
  const c = state.conf;
  const g = computeGradients(state, p);
  const params = c.policy.read();
  const gradNorm = c.policyOpt.update(params, g.policy, p.lr ?? undefined);
  c.policy.write(params);
  if (c.critic && c.criticOpt && g.critic && g.critic.size > 0) {
    const cp = c.critic.read();
    c.criticOpt.update(cp, g.critic);
    c.critic.write(cp);
  }
  state.policyVersion++;
  currentWeightsChanged(state);
  return { ...g.stats, grad_norm: gradNorm, policy_version: state.policyVersion };
}

function scalarOf(t: tf.Tensor): number {
  return at(t.dataSync() as Float32Array, 0);
}

/** Starts the policy's and the critic's optimizers afresh (trainer protocol reset_optimizer): the weights stay, the next step is step 1. */
export function resetOptimizers(state: TrainerState): { step: number } {
  const c = state.conf;
  c.policyOpt.reset();
  c.criticOpt?.reset();
  return { step: c.policyOpt.step };
}
