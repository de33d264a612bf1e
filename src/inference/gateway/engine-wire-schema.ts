// The JSON Schemas of the token-in subset the gateway answers in engine mode
// (docs/gateway.md#engine-mode): vLLM's `/v1/completions` with a token-id prompt and its weight
// sync bodies, SGLang's native `/generate` and `/update_weights_from_disk`. Field names and
// defaults follow the engines' own request models (vLLM's CompletionRequest, SGLang's
// GenerateReqInput and SamplingParams); a field that would change the answer and is not served
// is refused with its reason, a field neither engine knows is refused by name.
import { bodyChecker } from "./openai-wire-schema.js";

const DOCS = "docs/gateway.md#engine-mode";

const nullable = (schema: Record<string, unknown>) => ({ anyOf: [schema, { type: "null" }] });
const tokenIds = { type: "array", minItems: 1, items: { type: "integer", minimum: 0, maximum: 2147483647 } };
const stopIds = nullable({ type: "array", items: { type: "integer", minimum: 0, maximum: 2147483647 } });
const NO_STOP_STRINGS =
  "stop strings are not served (the server matches ids, not text): send the stop tokens' ids as stop_token_ids";
const ONE = "must be 1: one sample per request (send several requests for several samples)";
const NO_PENALTY = "sampling penalties are not served: the policy's own distribution is sampled";
const topK = nullable({ type: "integer", minimum: -1, hint: "must be -1 or 0 (off) or a positive number of tokens" });

/** A `POST /v1/completions` body (vLLM's CompletionRequest) that passed the schema. */
export interface VllmCompletionBody {
  readonly model?: string | null;
  readonly prompt: readonly number[] | readonly [readonly number[]];
  readonly max_tokens?: number | null;
  readonly temperature?: number | null;
  readonly top_p?: number | null;
  readonly top_k?: number | null;
  readonly seed?: number | null;
  readonly stop_token_ids?: readonly number[] | null;
  readonly logprobs?: 0 | null;
  readonly return_token_ids?: boolean | null;
  readonly return_tokens_as_token_ids?: boolean | null;
  readonly return_weight_versions?: boolean;
  /** true: stop at stop_token_ids alone; else at the tokenizer's stop ids too. */
  readonly ignore_eos?: boolean;
}

const vllmCompletionSchema = {
  type: "object",
  required: ["prompt"],
  properties: {
    model: nullable({ type: "string" }),
    prompt: {
      anyOf: [tokenIds, { type: "array", minItems: 1, maxItems: 1, items: tokenIds }],
      hint: "must be a list of token ids (or a list holding one such list): this server is token in, token out; text prompts are not tokenized here",
    },
    max_tokens: nullable({ type: "integer", minimum: 1 }),
    temperature: nullable({ type: "number", minimum: 0 }),
    top_p: nullable({ type: "number", exclusiveMinimum: 0, maximum: 1 }),
    top_k: topK,
    min_p: nullable({ const: 0, hint: "must be 0: min_p is not served" }),
    seed: nullable({ type: "integer" }),
    stop_token_ids: stopIds,
    stop: { anyOf: [{ type: "array", maxItems: 0 }, { type: "null" }], hint: NO_STOP_STRINGS },
    logprobs: nullable({
      const: 0,
      hint: "must be 0 or null: 0 returns each generated token's log-prob; top alternatives are not served",
    }),
    prompt_logprobs: { type: "null", hint: "prompt log-probs are not served" },
    n: { const: 1, hint: ONE },
    best_of: nullable({ const: 1, hint: ONE }),
    use_beam_search: { const: false, hint: "beam search is not served" },
    echo: nullable({ const: false, hint: "must be false: prompt_token_ids carries the prompt" }),
    suffix: { type: "null", hint: "suffix (insertion) is not served" },
    stream: nullable({ const: false, hint: "must be false: engine mode answers whole completions" }),
    ignore_eos: { type: "boolean" },
    min_tokens: { const: 0, hint: "must be 0: a minimum length is not served" },
    presence_penalty: nullable({ const: 0, hint: NO_PENALTY }),
    frequency_penalty: nullable({ const: 0, hint: NO_PENALTY }),
    repetition_penalty: nullable({ const: 1, hint: NO_PENALTY }),
    logit_bias: nullable({ type: "object", maxProperties: 0, hint: "must be empty: logit_bias is not served" }),
    return_token_ids: nullable({ type: "boolean" }),
    return_tokens_as_token_ids: nullable({ type: "boolean" }),
    return_weight_versions: { type: "boolean" },
    // Detokenization and bookkeeping options: accepted, they change no id or log-prob (the text is
    // the trainer's decode of the ids).
    skip_special_tokens: nullable({ type: "boolean" }),
    spaces_between_special_tokens: { type: "boolean" },
    include_stop_str_in_output: { type: "boolean" },
    add_special_tokens: { type: "boolean" },
    user: nullable({ type: "string" }),
    request_id: { type: "string" },
    priority: { type: "integer" },
  },
  additionalProperties: false,
};

/** `POST /collective_rpc` (vLLM's development route): only `reload_weights` is served. */
interface VllmCollectiveRpcBody {
  readonly method: "reload_weights";
  readonly args?: readonly string[];
  readonly kwargs?: { readonly weights_path?: string; readonly is_checkpoint_format?: boolean | string };
  readonly timeout?: number | null;
}

const collectiveRpcSchema = {
  type: "object",
  required: ["method"],
  properties: {
    method: {
      const: "reload_weights",
      hint: 'must be "reload_weights" with kwargs {"weights_path": DIR}: the only worker method this server runs (the trainer loads the checkpoint in DIR)',
    },
    args: { type: "array", maxItems: 0, hint: "must be empty: give the checkpoint as kwargs.weights_path" },
    kwargs: {
      type: "object",
      required: ["weights_path"],
      properties: {
        weights_path: { type: "string", minLength: 1 },
        is_checkpoint_format: {
          anyOf: [{ const: true }, { const: "true" }, { const: "True" }],
          hint: "must be true: the checkpoint is read as the trainer saved it",
        },
      },
      additionalProperties: false,
    },
    timeout: nullable({ type: "number", exclusiveMinimum: 0 }),
  },
  additionalProperties: false,
};

/** `POST /update_weight_version` (vLLM). */
interface VllmWeightVersionBody {
  readonly new_version: string;
}

const weightVersionSchema = {
  type: "object",
  required: ["new_version"],
  properties: { new_version: { type: "string", minLength: 1 } },
  additionalProperties: false,
};

/** `POST /v1/load_lora_adapter` (vLLM's LoadLoRAAdapterRequest) and SGLang's `/load_lora_adapter` (LoadLoRAAdapterReqInput). */
interface VllmLoadLoraBody {
  readonly lora_name: string;
  readonly lora_path: string;
  readonly load_inplace?: boolean;
}

const loadLoraSchema = {
  type: "object",
  required: ["lora_name", "lora_path"],
  properties: {
    lora_name: { type: "string", minLength: 1 },
    lora_path: { type: "string", minLength: 1 },
    load_inplace: { type: "boolean" },
    is_3d_lora_weight: { const: false, hint: "must be false" },
    pinned: { type: "boolean" },
  },
  additionalProperties: false,
};

/** SGLang's sampling_params as served. */
export interface SglangSamplingParams {
  readonly max_new_tokens?: number | null;
  readonly temperature?: number | null;
  readonly top_p?: number | null;
  readonly top_k?: number | null;
  readonly stop_token_ids?: readonly number[] | null;
  readonly sampling_seed?: number | null;
  readonly ignore_eos?: boolean;
}

/** A `POST /generate` body (SGLang's GenerateReqInput, one prompt of ids) that passed the schema. */
interface SglangGenerateBody {
  readonly input_ids: readonly number[];
  readonly sampling_params?: SglangSamplingParams | null;
  readonly return_logprob?: boolean | null;
  readonly return_text_in_logprobs?: boolean;
  readonly return_sampling_mask?: boolean | null;
  readonly rid?: string | null;
  readonly lora_path?: string | null;
}

const sglangSamplingSchema = {
  type: "object",
  properties: {
    max_new_tokens: nullable({ type: "integer", minimum: 1 }),
    temperature: nullable({ type: "number", minimum: 0 }),
    top_p: nullable({ type: "number", exclusiveMinimum: 0, maximum: 1 }),
    top_k: topK,
    min_p: nullable({ const: 0, hint: "must be 0: min_p is not served" }),
    stop_token_ids: stopIds,
    stop: { anyOf: [{ type: "array", maxItems: 0 }, { type: "null" }], hint: NO_STOP_STRINGS },
    stop_regex: { type: "null", hint: NO_STOP_STRINGS },
    sampling_seed: nullable({ type: "integer" }),
    n: { const: 1, hint: ONE },
    ignore_eos: { type: "boolean" },
    min_new_tokens: { const: 0, hint: "must be 0: a minimum length is not served" },
    presence_penalty: nullable({ const: 0, hint: NO_PENALTY }),
    frequency_penalty: nullable({ const: 0, hint: NO_PENALTY }),
    repetition_penalty: nullable({ const: 1, hint: NO_PENALTY }),
    json_schema: { type: "null", hint: "constrained decoding is not served" },
    regex: { type: "null", hint: "constrained decoding is not served" },
    ebnf: { type: "null", hint: "constrained decoding is not served" },
    skip_special_tokens: { type: "boolean" },
    spaces_between_special_tokens: { type: "boolean" },
    no_stop_trim: { type: "boolean" },
  },
  additionalProperties: false,
};

const sglangGenerateSchema = {
  type: "object",
  required: ["input_ids"],
  properties: {
    input_ids: {
      ...tokenIds,
      hint: "must be one list of token ids: text prompts are not tokenized here, and a batch of prompts is sent as one request each",
    },
    sampling_params: nullable(sglangSamplingSchema),
    return_logprob: nullable({ type: "boolean" }),
    logprob_start_len: nullable({ const: -1, hint: "must be -1: prompt log-probs are not served" }),
    top_logprobs_num: nullable({ const: 0, hint: "must be 0: top alternatives are not served" }),
    return_text_in_logprobs: { type: "boolean" },
    // The served log-probs are always those of the distribution sampled from (top-k and top-p
    // applied), so the mask's log-probs are the same numbers; the mask itself is not returned.
    return_sampling_mask: nullable({ type: "boolean" }),
    stream: { const: false, hint: "must be false: engine mode answers whole generations" },
    rid: nullable({ type: "string" }),
    lora_path: nullable({ type: "string" }),
    log_metrics: { type: "boolean" },
  },
  additionalProperties: false,
};

/** `POST /update_weights_from_disk` (SGLang's UpdateWeightFromDiskReqInput). */
interface SglangUpdateWeightsBody {
  readonly model_path: string;
  readonly weight_version?: string | null;
}

const sglangUpdateWeightsSchema = {
  type: "object",
  required: ["model_path"],
  properties: {
    model_path: { type: "string", minLength: 1 },
    load_format: nullable({ type: "string" }),
    weight_version: nullable({ type: "string" }),
    abort_all_requests: {
      const: false,
      hint: "must be false: generations in flight finish on the old weights, then the new ones load",
    },
    is_async: { type: "boolean" },
    flush_cache: { type: "boolean" },
    torch_empty_cache: { type: "boolean" },
    keep_pause: { const: false, hint: "must be false: generation resumes once the weights are loaded" },
    recapture_cuda_graph: { type: "boolean" },
    token_step: { type: "integer" },
  },
  additionalProperties: false,
};

export const checkVllmCompletion = bodyChecker<VllmCompletionBody>(vllmCompletionSchema, DOCS);
export const checkCollectiveRpc = bodyChecker<VllmCollectiveRpcBody>(collectiveRpcSchema, DOCS);
export const checkWeightVersion = bodyChecker<VllmWeightVersionBody>(weightVersionSchema, DOCS);
export const checkLoadLora = bodyChecker<VllmLoadLoraBody>(loadLoraSchema, DOCS);
export const checkSglangGenerate = bodyChecker<SglangGenerateBody>(sglangGenerateSchema, DOCS);
export const checkSglangUpdateWeights = bodyChecker<SglangUpdateWeightsBody>(sglangUpdateWeightsSchema, DOCS);
