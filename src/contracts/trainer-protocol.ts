// Types of the trainer protocol's messages (docs/protocol.md, version 1).
import { at } from "./checked.js";

export const PROTOCOL_NAME = "arl-trainer";
export const PROTOCOL_VERSION = 1;

export interface Ragged<T extends Int32Array | Float32Array | Uint8Array> {
  readonly values: T;
  readonly offsets: Int32Array;
}

/** Which weights sample: the trained policy, or the behaviour snapshot of asynchronous rollout. */
export type PolicySlot = "current" | "behaviour";

export interface SamplingParams {
  readonly temperature: number;
  readonly top_p: number;
  readonly top_k: number;
}

export interface HandshakeResult {
  readonly protocol: string;
  readonly version: number;
  readonly trainer: { readonly name: string; readonly version: string };
  readonly capabilities: {
    readonly methods: readonly string[];
    readonly reductions: readonly string[];
    readonly kl_estimators: readonly string[];
    readonly value_head: boolean;
    readonly keep_sampling_mask: boolean;
    /** train_step accepts `lr` (a per-step peak learning rate). */
    readonly step_lr?: boolean;
    /** train_step accepts `is_weights` (per-token importance weights, mask.tis). */
    readonly is_weights?: boolean;
    /** train_step accepts `old_logprobs: null` (the on-policy step) and reports `nll`. */
    readonly on_policy_step?: boolean;
    readonly world_size: number;
    readonly device: string;
    /** Keeps a behaviour-policy snapshot (method `snapshot`, `policy: "behaviour"`). */
    readonly behaviour_policy?: boolean;
    /**
     * The same configure and the same requests after it give bit-identical weights, optimizer
     * state and answers in every process of this build (`versions` names the build), and `load`
     * restores weights and optimizer state while keeping the configured optimizer settings.
     */
    readonly deterministic?: boolean;
  };
  readonly versions: Readonly<Record<string, string>>;
}

export interface ConfigureParams {
  readonly seed: number;
  readonly policy: {
    readonly model: string;
    readonly chat_template: string | null;
    readonly sampling: SamplingParams & { readonly max_new_tokens: number };
    /** Storage dtype of the weights (plan policy.dtype); absent: float32. */
    readonly dtype?: "float32" | "bfloat16" | "float16";
    /** LoRA adapters (plan policy.lora): only the adapters train; null or absent: full fine-tuning. */
    readonly lora?: {
      readonly rank: number;
      readonly alpha: number;
      readonly dropout: number;
      readonly targets: readonly string[];
    } | null;
  };
  readonly algorithm: Readonly<Record<string, unknown>>;
  readonly vocabulary: readonly string[] | null;
  /** Asynchronous rollout will ask for a behaviour-policy snapshot: allocate its slot now. */
  readonly behaviour_policy?: boolean;
}

/** How a tool call is written in the model's own chat format (docs/protocol.md `configure`). */
export type ToolCallFormat = "hermes" | "llama3_json" | "deepseek_v3";

/** What the trainer found out about the model's chat template at configure time. */
export interface ChatTemplateInfo {
  /** Rendering a conversation and then one more message extends the first rendering's text. */
  readonly prefix_preserving: boolean;
  /** The template renders the `tools` of an encode request itself (else the runtime describes them in the system prompt). */
  readonly renders_tools: boolean;
  readonly tool_call_format: ToolCallFormat;
  /** The role the template gives tool results ("tool"; Llama 3.1: "ipython"). */
  readonly tool_role: string;
}

export interface ConfigureResult {
  /** `max_context`: the most tokens, prompt and generated together, one sequence may hold; absent: no known limit. */
  readonly model: { readonly name: string; readonly parameters: number; readonly max_context?: number };
  readonly tokenizer: {
    readonly vocab_size: number;
    readonly bos_id: number;
    readonly eos_id: number;
    readonly pad_id: number;
    /** Every id that ends a generated turn (eos_id and the generation config's others); absent: [eos_id]. */
    readonly stop_ids?: readonly number[];
    readonly template?: ChatTemplateInfo;
  };
  readonly policy_version: number;
}

export interface ToolCallMessage {
  readonly name: string;
  readonly arguments: Readonly<Record<string, unknown>>;
}

export interface ChatMessage {
  readonly role: "system" | "user" | "tool" | "assistant";
  readonly content: string;
  /** An assistant turn's calls, for templates that render them apart from the content. */
  readonly tool_calls?: readonly ToolCallMessage[];
}

export interface EncodeParams {
  readonly messages: readonly ChatMessage[];
  readonly add_generation_prompt: boolean;
  /** OpenAI function definitions for templates that render tools themselves; absent or null: none. */
  readonly tools?: readonly unknown[] | null;
  /**
   * How many leading messages are already in the model's context (default 0): ids are returned for
   * messages[context:] only, exactly as they follow that context. When messages[context-1] is a
   * generated assistant turn, the context ends with the end-of-turn token the model generated, and
   * the first returned sequence starts right after it (Qwen's "\n" after <|im_end|> included).
   */
  readonly context?: number;
}

export interface GenerateParams extends SamplingParams {
  readonly prompts: Ragged<Int32Array>;
  readonly max_new_tokens: number;
  readonly stop_ids: readonly number[];
  /** One per prompt, as int32 (a Uint32Array is not a bulk array of the framing). */
  readonly seeds: Int32Array;
  /** "behaviour": the weights of the last `snapshot` (asynchronous rollout). */
  readonly policy: PolicySlot;
}

export interface GenerateResult {
  readonly ids: Ragged<Int32Array>;
  readonly logprobs: Ragged<Float32Array>;
  readonly finish: readonly ("stop" | "length")[];
  readonly policy_version: number;
}

export interface Denominators {
  readonly tokens: number;
  readonly sequences: number;
  readonly groups: number;
  readonly group_tokens: Float64Array;
  readonly sequence_tokens: Float64Array;
}

export interface TrainStepParams {
  readonly ids: Ragged<Int32Array>;
  readonly loss_mask: Ragged<Uint8Array>;
  readonly advantages: Ragged<Float32Array>;
  /** The behaviour policy's log-probs; null: the current weights' own (ratio 1), where the trainer announces `on_policy_step`. */
  readonly old_logprobs: Ragged<Float32Array> | null;
  readonly ref_logprobs: Ragged<Float32Array> | null;
  readonly groups: Int32Array;
  readonly reduction: { readonly mode: string; readonly constant?: number };
  readonly denominators: Denominators;
  readonly microbatches: number;
  readonly clip: { readonly low: number; readonly high: number; readonly dual: number | null };
  readonly kl: { readonly coef: number; readonly estimator: string; readonly placement: string };
  readonly sampling: SamplingParams | null;
  readonly critic: {
    readonly returns: Ragged<Float32Array>;
    readonly old_values: Ragged<Float32Array>;
    readonly value_clip: number | null;
  } | null;
  /** The policy's peak learning rate for this step; null or absent: the configured one. */
  readonly lr?: number | null;
  /** Importance weight per token (mask.tis), multiplying its policy-gradient term; null or absent: 1. */
  readonly is_weights?: Ragged<Float32Array> | null;
}

export interface TrainStepResult {
  readonly loss: number;
  readonly policy_loss: number;
  readonly kl: number;
  readonly entropy: number;
  readonly clip_fraction: number;
  readonly ratio_mean: number;
  readonly ratio_min: number;
  readonly ratio_max: number;
  readonly grad_norm: number;
  readonly value_loss?: number;
  /** Mean negative log-likelihood of the target tokens under the weights before the step (trainers announcing `on_policy_step`). */
  readonly nll?: number;
  readonly tokens: number;
  readonly policy_version: number;
}

/** Method name -> [params, result]. */
export interface Methods {
  handshake: [{ protocol: string; version: number; runtime: { name: string; version: string } }, HandshakeResult];
  configure: [ConfigureParams, ConfigureResult];
  encode: [EncodeParams, { ids: Ragged<Int32Array> }];
  decode: [{ ids: Ragged<Int32Array> }, { texts: string[] }];
  tokenize: [{ texts: readonly string[] }, { ids: Ragged<Int32Array> }];
  generate: [GenerateParams, GenerateResult];
  logprobs: [
    {
      ids: Ragged<Int32Array>;
      policy: PolicySlot | "reference";
      sampling: SamplingParams | null;
      mask?: Ragged<Uint8Array> | null;
    },
    { logprobs: Ragged<Float32Array> },
  ];
  values: [{ ids: Ragged<Int32Array> }, { values: Ragged<Float32Array> }];
  train_step: [TrainStepParams, TrainStepResult];
  /** Copies the current weights into the behaviour slot; answers the version they carry. */
  snapshot: [Record<string, unknown>, { policy_version: number }];
  /** Starts the policy's (and critic's) optimizer afresh: moments zeroed, step count 0 (the warm-up restarts); answers the step count. */
  reset_optimizer: [Record<string, unknown>, { step: number }];
  /**
   * Writes a checkpoint. With `background`, a trainer may answer `pending` before the files are
   * durable (what it writes is taken at the request); `saved` then says how it went.
   */
  save: [
    { path: string; policy_only?: boolean; background?: boolean },
    { files: string[]; policy_version: number; pending?: boolean },
  ];
  /** Waits for the background save still outstanding and answers its folder (null when none was) and files. */
  saved: [Record<string, unknown>, { path: string | null; files: string[]; policy_version: number }];
  load: [{ path: string }, { files: string[]; policy_version: number }];
  eval_op: [{ op: string; input: unknown }, { output: unknown }];
  shutdown: [Record<string, unknown>, Record<string, never>];
}

export type Method = keyof Methods;

export interface ErrorBody {
  readonly code: "invalid_request" | "unsupported" | "out_of_memory" | "internal";
  readonly message: string;
}

/** Builds a ragged batch from sequences. */
export function ragged<T extends Int32Array | Float32Array | Uint8Array>(
  sequences: readonly ArrayLike<number>[],
  ctor: { new (n: number): T },
): Ragged<T> {
  const offsets = new Int32Array(sequences.length + 1);
  let total = 0;
  sequences.forEach((sequence, i) => {
    total += sequence.length;
    offsets[i + 1] = total;
  });
  const values = new ctor(total);
  sequences.forEach((sequence, i) => values.set(sequence, at(offsets, i)));
  return { values, offsets };
}

/** Sequence i of a ragged batch (a view, not a copy). */
export function row<T extends Int32Array | Float32Array | Uint8Array>(r: Ragged<T>, i: number): T {
  return r.values.subarray(at(r.offsets, i), at(r.offsets, i + 1)) as T;
}

export function rowCount(r: Ragged<Int32Array | Float32Array | Uint8Array>): number {
  return r.offsets.length - 1;
}

/**
 * Most words of a `configure` vocabulary that builtin:tiny's tokenizer takes, in the order given
 * (its harness words come besides): the words past it are spelled as bytes, like any word outside
 * the vocabulary, so memory stays bounded whatever a data file holds (docs/protocol.md, "configure").
 */
export const EMBEDDED_VOCABULARY_LIMIT = 32_768;
