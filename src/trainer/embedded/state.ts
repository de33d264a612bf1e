// The embedded trainer's explicit state: what `configure` built, the weight slots (current
// policy, reference, behaviour, critic), the policy version, and the tables and caches derived
// from the current weights. The protocol's modules (configure, weights, generate, score,
// update, checkpoint) are functions over it; trainer.ts dispatches requests to them.
import type { tf } from "./backend.js";
import { invalid } from "./errors.js";
import type { ModelShape, ParamSet, ReadoutWeights } from "./model.js";
import type { TinyShape } from "../../plan/model-name.js";
import type { AdamW } from "./optimizer.js";
import { PrefixCache } from "./prefix-cache.js";
import type { ChunkBudget } from "./batching.js";
import type { WordTokenizer } from "./tokenizer.js";

/**
 * In-process settings. The shape fields are what a plain `builtin:tiny` means to this instance
 * (the served process keeps the default shape; a plan asks for another in the model's name,
 * plan/model-name.ts). `chunkTokens` changes only how a batch is cut, never a result.
 */
export interface TinyOptions extends TinyShape {
  /** Padded tokens (T x B) per forward/backward chunk; larger batches are split (same result). */
  readonly chunkTokens: number;
  /** Read-out scores (B x Tq x T, per head) per chunk; default READOUT_SCORES_PER_CHUNK. */
  readonly chunkScores?: number;
  /** Read-out logits (B x Tq x vocabulary) per chunk; default READOUT_LOGITS_PER_CHUNK. */
  readonly chunkLogits?: number;
}

/**
 * The read-out's attention keeps about a dozen [B, heads, Tq, T] tensors alive through a
 * backward pass, and the wasm heap stops at 4 GB (past it, tfjs fails with "memory access out of
 * bounds"): 2^21 scores per head keep a chunk's peak near 0.5 GB at the default 4 heads, while a
 * quick-start batch (128 episodes of a few hundred tokens, a few dozen generated) is one chunk.
 */
export const READOUT_SCORES_PER_CHUNK = 2 ** 21;

/**
 * The read-out's logits [B x Tq, V] have about 27 copies alive through a backward pass (logits,
 * softmax, log-softmax, the targets' one-hot, their gradients; measured in
 * test/trainer/embedded-batching.test.ts): 2^22 values (16 MB each) keep a chunk's peak near
 * 0.5 GB, while a quick-start batch (a few thousand targets over a few hundred words) is one chunk.
 */
export const READOUT_LOGITS_PER_CHUNK = 2 ** 22;

/** The chunk budget of these options over a vocabulary of `vocab` tokens (batching.ts). */
export function chunkBudget(options: TinyOptions, vocab: number): ChunkBudget {
  const rows = Math.max(1, Math.floor((options.chunkLogits ?? READOUT_LOGITS_PER_CHUNK) / Math.max(1, vocab)));
  return { tokens: options.chunkTokens, scores: options.chunkScores ?? READOUT_SCORES_PER_CHUNK, rows };
}

/** When the reference policy is (re)taken: once, or again every `every` optimizer steps. */
export type ReferenceMode = { readonly kind: "initial" } | { readonly kind: "refresh"; readonly every: number };

/** What `configure` built; replaced as a whole by the next `configure`. */
export interface Configuration {
  readonly tokenizer: WordTokenizer;
  readonly shape: ModelShape;
  readonly seed: number;
  readonly policy: ParamSet;
  readonly policyOpt: AdamW;
  readonly critic: ParamSet | null;
  readonly criticOpt: AdamW | null;
  /** null: no reference policy (algorithm.kl.reference null). */
  readonly reference: ReferenceMode | null;
}

/** A frozen copy of some weights, with the policy version they carry. */
export interface FrozenSlot {
  readonly params: ParamSet;
  readonly version: number;
}

/** The behaviour slot (asynchronous rollout): a frozen policy with its own derived tables and cache. */
export interface BehaviourSlot extends FrozenSlot {
  table: tf.Tensor2D | null;
  readout: ReadoutWeights | null;
  readonly cache: PrefixCache;
}

/** Wall-clock figures of the last generate / train_step (for benchmarks). */
export interface Timing {
  generateTokens: number;
  generateSeconds: number;
  prefillTokens: number;
  trainTokens: number;
  trainSeconds: number;
}

export class TrainerState {
  configuration: Configuration | undefined = undefined;
  policyVersion = 0;
  /** The reference policy, taken at its first use (weights.ts). */
  reference: FrozenSlot | null = null;
  behaviour: BehaviourSlot | null = null;
  /** Derived from the current policy's weights; dropped whenever they change. */
  table: tf.Tensor2D | null = null;
  readout: ReadoutWeights | null = null;
  readonly cache = new PrefixCache();
  readonly timing: Timing = {
    generateTokens: 0,
    generateSeconds: 0,
    prefillTokens: 0,
    trainTokens: 0,
    trainSeconds: 0,
  };

  constructor(readonly options: TinyOptions) {}

  /** The configuration; a model method before `configure` is an invalid request. */
  get conf(): Configuration {
    if (!this.configuration) throw invalid("the trainer is not configured yet: send 'configure' first");
    return this.configuration;
  }
}
