// SGLang's wire format (pinned: sglang 0.5.23; docs/engines.md "Verified against"): the native
// token-in `/generate` (its OpenAI routes return no ids), the health check that generates,
// weight sync from disk and runtime LoRA loading, and the `sglang.launch_server` command line.
// Every field below is one that version's own request classes accept
// (runtime-gpu/tests/test_engine_requests.py parses them).

import {
  type EngineGenerateArgs,
  type EngineGeneration,
  type EngineHttpCall,
  type EngineLaunchCommand,
  type EngineLaunchOptions,
  type EngineWire,
} from "./contract.js";
import { applyRequest } from "./generation-answer.js";
import { adapterName, adapterVersion, servedAdapterModel } from "./lora-adapters.js";
import { AnswerReader, syncedVersion } from "./wire-read.js";

/**
 * The largest top-k for which SGLang returns the log-prob under the truncated distribution
 * (`return_sampling_mask`; the server's `--sampling-mask-max-tokens`, default 4096).
 */
const SGLANG_SAMPLING_MASK_MAX_TOKENS = 4096;

const read = new AnswerReader("sglang");

/**
 * Whether the request asks for the sampling mask, whose "selected" log-prob is the sampled
 * token's under the top-k (and top-p) truncated, renormalised distribution. SGLang's plain
 * `output_token_logprobs` are of the tempered distribution before truncation; the mask is
 * refused unless top-k is finite and at most the server's cap. Greedy needs neither.
 */
function wantsSamplingMask(args: EngineGenerateArgs): boolean {
  return args.temperature > 0 && args.topK >= 1 && args.topK <= SGLANG_SAMPLING_MASK_MAX_TOKENS;
}

function generate(args: EngineGenerateArgs): EngineHttpCall {
  const body: Record<string, unknown> = {
    input_ids: Array.from(args.prompt),
    sampling_params: {
      max_new_tokens: args.maxNewTokens,
      temperature: args.temperature,
      top_p: args.topP,
      // SGLang: -1 is off; the plan's 0.
      top_k: args.topK === 0 ? -1 : args.topK,
      min_p: 0,
      repetition_penalty: 1,
      presence_penalty: 0,
      frequency_penalty: 0,
      stop_token_ids: [...args.stopIds],
      // Honoured per request only by a server started with --enable-deterministic-inference.
      sampling_seed: args.seed,
      // Keep the matched stop token in the text as it is in the ids.
      no_stop_trim: true,
      skip_special_tokens: false,
    },
    return_logprob: true,
    stream: false,
  };
  if (wantsSamplingMask(args)) body.return_sampling_mask = true;
  // Under LoRA the adapter is named per request (its registered name), the base model otherwise.
  if (adapterVersion(args.model) !== null) body.lora_path = args.model;
  return { method: "POST", path: "/generate", body };
}

function finish(reason: unknown, path: string): EngineGeneration["finish"] {
  const type = read.object(reason, path).type;
  if (type === "stop" || type === "length") return type;
  // "abort": the server dropped the request (its message is in the answer).
  return read.fail(`${path}.type`, type, `"stop" or "length" (a finished generation)`);
}

function parseGeneration(body: unknown, request?: EngineGenerateArgs): EngineGeneration {
  const answer = read.object(body, "the answer");
  const ids = read.tokenIds(answer.output_ids, "output_ids");
  const meta = read.object(answer.meta_info, "meta_info");
  const triples = read.array(meta.output_token_logprobs, "meta_info.output_token_logprobs");
  if (triples.length !== ids.length)
    read.fail("meta_info.output_token_logprobs", triples, `one [logprob, id, text] per output id (${ids.length})`);
  const tempered = triples.map((triple, k) => {
    const path = `meta_info.output_token_logprobs[${k}]`;
    const [logprob, id] = read.array(triple, path);
    if (read.tokenId(id, `${path}[1]`) !== ids[k]) read.fail(`${path}[1]`, id, `the output id at ${k} (${ids[k]})`);
    return read.logprob(logprob, `${path}[0]`);
  });
  const logprobs =
    request !== undefined && wantsSamplingMask(request)
      ? samplingLogprobs(meta, ids.length)
      : Float32Array.from(tempered);
  const parsed = {
    idsPath: "output_ids",
    ids,
    logprobs,
    finish: finish(meta.finish_reason, "meta_info.finish_reason"),
    weightVersion: syncedVersion(weightLabel(meta)),
  };
  return applyRequest(read, parsed, request);
}

/** The "selected" log-probs of the sampling mask: the sampled tokens' under the truncated distribution. */
function samplingLogprobs(meta: Readonly<Record<string, unknown>>, count: number): Float32Array {
  const path = "meta_info.output_token_sampling_logprobs";
  const values = read.array(meta.output_token_sampling_logprobs, path);
  if (values.length !== count) read.fail(path, values, `one log-prob per output id (${count})`);
  return Float32Array.from(values, (value, k) => read.logprob(value, `${path}[${k}]`));
}

function weightLabel(meta: Readonly<Record<string, unknown>>): string | null {
  const spans = read.singleVersion(meta.weight_versions, "meta_info.weight_versions");
  if (spans !== null) return spans;
  return meta.weight_version === undefined || meta.weight_version === null
    ? null
    : read.string(meta.weight_version, "meta_info.weight_version");
}

function weightSync(dir: string, version: number, options: { readonly lora: boolean }): readonly EngineHttpCall[] {
  if (options.lora)
    return [{ method: "POST", path: "/load_lora_adapter", body: { lora_name: adapterName(version), lora_path: dir } }];
  // The update takes the model's writer lock, so it waits for the generations in flight and
  // holds new ones until the weights are loaded; the radix cache is flushed with it.
  return [
    {
      method: "POST",
      path: "/update_weights_from_disk",
      body: { model_path: dir, weight_version: String(version), flush_cache: true },
    },
  ];
}

function unloadAdapter(version: number): EngineHttpCall {
  return { method: "POST", path: "/unload_lora_adapter", body: { lora_name: adapterName(version) } };
}

function servedModel(base: string, version: number, options: { readonly lora: boolean }): string {
  return options.lora ? servedAdapterModel(base, version) : base;
}

function launchCommand(options: EngineLaunchOptions): EngineLaunchCommand {
  const args = [
    "-m",
    "sglang.launch_server",
    "--model-path",
    options.model,
    "--host",
    options.host,
    "--port",
    String(options.port),
    "--random-seed",
    String(options.seed),
    "--dtype",
    options.dtype,
    "--tp-size",
    String(options.gpus),
    // Per-request `sampling_seed` is only used in deterministic mode (which also selects the
    // pytorch sampling backend, the one that takes seeds with top-k/top-p).
    "--enable-deterministic-inference",
  ];
  if (options.maxModelLen !== null) args.push("--context-length", String(options.maxModelLen));
  if (options.loraRank !== null) {
    // No adapter is loaded at start, so the rank and target modules cannot be inferred.
    args.push("--enable-lora", "--max-lora-rank", String(options.loraRank), "--lora-target-modules", "all");
  }
  return { command: options.python ?? "python", args, env: {} };
}

export const sglangWire: EngineWire = {
  engine: "sglang",
  generate,
  parseGeneration,
  health: () => ({ method: "GET", path: "/health_generate" }),
  weightSync,
  unloadAdapter,
  servedModel,
  launchCommand,
};
