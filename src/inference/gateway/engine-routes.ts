// Engine mode's routes (docs/gateway.md#engine-mode): the token-in subset of vLLM's or SGLang's
// HTTP API, answered in that engine's shapes, so that the runtime's engine client (and any
// program written against the engine) runs against an ARL trainer: vLLM's `/v1/completions` with
// a token-id prompt and its weight sync (`/pause`, `/collective_rpc` reload_weights,
// `/update_weight_version`, `/resume`, `/v1/load_lora_adapter`), SGLang's `/generate` and
// `/update_weights_from_disk`, and both engines' health and model routes. Bodies are checked by
// engine-wire-schema.ts; what generates and loads is the EngineModel.
import { randomBytes, randomInt } from "node:crypto";
import { existsSync } from "node:fs";
import type { EngineName } from "../engine/contract.js";
import type { GenerateOptions } from "../../episode/policy.js";
import { GatewayError, type EngineAnswer, type EngineCall, type EngineEndpoints } from "./contract.js";
import { EngineModelError, type EngineModel, type ServedGeneration } from "./engine-model.js";
import {
  checkCollectiveRpc,
  checkLoadLora,
  checkSglangGenerate,
  checkSglangUpdateWeights,
  checkVllmCompletion,
  checkWeightVersion,
  type SglangSamplingParams,
  type VllmCompletionBody,
} from "./engine-wire-schema.js";

/** The engines' defaults where a request leaves a field out (vLLM's CompletionRequest, SGLang's SamplingParams). */
const VLLM_MAX_TOKENS = 16;
const SGLANG_MAX_NEW_TOKENS = 128;
/** The log-prob vLLM writes for -inf, which JSON cannot hold. */
const LOGPROB_FLOOR = -9999;

type Handler = (call: EngineCall) => Promise<EngineAnswer>;

const ok = (body: unknown): EngineAnswer => ({ status: 200, body });

/** The routes of `api` over `model`. */
export function engineRoutes(api: EngineName, model: EngineModel): EngineEndpoints {
  const created = Math.floor(Date.now() / 1000);
  const routes = api === "vllm" ? vllmRoutes(model, created) : sglangRoutes(model);
  const errorBody = api === "vllm" ? vllmError : sglangError;
  return {
    async answer(call) {
      const handler = routes.get(`${call.method} ${call.path}`);
      try {
        if (handler === undefined)
          throw new EngineModelError(
            404,
            `no such route: ${call.method} ${call.path} (this server answers ${[...routes.keys()].join(", ")})`,
          );
        return await handler(call);
      } catch (error) {
        if (error instanceof EngineModelError)
          return { status: error.status, body: errorBody(error.status, error.message, error.param) };
        if (error instanceof GatewayError)
          return { status: error.status, body: errorBody(error.status, error.message, error.param) };
        throw error;
      }
    },
    refusal: (error) => ({ status: error.status, body: errorBody(error.status, error.message, error.param) }),
  };
}

/** vLLM's ErrorResponse: {"error": {message, type, param, code}} with the status as `code`. */
function vllmError(status: number, message: string, param: string | null): unknown {
  const type =
    status === 404
      ? "NotFoundError"
      : status === 503
        ? "ServiceUnavailableError"
        : status >= 500
          ? "InternalServerError"
          : "BadRequestError";
  return { error: { message, type, param, code: status } };
}

/** SGLang's error body: {"error": {message, type, code}} (param added: the field it is about). */
function sglangError(status: number, message: string, param: string | null): unknown {
  return { error: { message, type: status >= 500 ? "server_error" : "invalid_request_error", param, code: status } };
}

/** A checkpoint directory named in a request must exist before anything pauses. */
function checkpointDir(dir: string, param: string): string {
  if (!existsSync(dir))
    throw new EngineModelError(
      400,
      `no checkpoint at '${dir}': give the directory the trainer saved (its model.safetensors or adapter files)`,
      param,
    );
  return dir;
}

/** The stop ids of a generation: the request's, and the tokenizer's besides unless `ignore_eos` (as both engines stop). */
function stopIdsOf(
  model: EngineModel,
  requested: readonly number[] | null | undefined,
  ignoreEos: boolean | undefined,
): number[] {
  return [...new Set([...(ignoreEos === true ? [] : model.stopIds), ...(requested ?? [])])];
}

/** Off (0) for the engines' "all tokens" values (-1, 0, and SGLang's 1 << 30). */
const topKOf = (k: number | null | undefined): number =>
  k === null || k === undefined || k <= 0 || k >= 1 << 30 ? 0 : k;

/** A request without a seed samples from fresh randomness, as the engines do. */
const seedOf = (seed: number | null | undefined): number => seed ?? randomInt(0, 2 ** 31 - 1);

const finiteLogprob = (lp: number): number => (Number.isFinite(lp) ? lp : LOGPROB_FLOOR);

function vllmRoutes(model: EngineModel, created: number): Map<string, Handler> {
  const card = (id: string) => ({
    id,
    object: "model",
    created,
    owned_by: "arl",
    root: model.modelName,
    parent: id === model.modelName ? null : model.modelName,
  });
  return new Map<string, Handler>([
    ["GET /health", () => Promise.resolve(ok(null))],
    ["GET /v1/models", () => Promise.resolve(ok({ object: "list", data: model.servedNames.map(card) }))],
    ["POST /v1/completions", (call) => vllmCompletion(model, checkVllmCompletion(call.body))],
    [
      "POST /pause",
      async (call) => {
        const mode = call.query.get("mode") ?? "abort";
        if (mode !== "wait" && mode !== "keep") {
          throw new EngineModelError(
            400,
            `pause mode '${mode}' is not served: use mode=wait (new generations get 503 until /resume, those in flight finish) or mode=keep (new generations wait for /resume); a trainer's generation cannot be aborted midway`,
            "mode",
          );
        }
        await model.pause(mode);
        return ok({ status: "paused" });
      },
    ],
    [
      "POST /resume",
      () => {
        model.resume();
        return Promise.resolve(ok({ status: "resumed" }));
      },
    ],
    ["GET /is_paused", () => Promise.resolve(ok({ is_paused: model.isPaused }))],
    [
      "POST /collective_rpc",
      async (call) => {
        const body = checkCollectiveRpc(call.body);
        const dir = checkpointDir(body.kwargs?.weights_path ?? "", "kwargs.weights_path");
        await model.load(dir, null);
        // One result per worker; reload_weights returns None.
        return ok({ results: [null] });
      },
    ],
    [
      "POST /update_weight_version",
      (call) => {
        const { new_version } = checkWeightVersion(call.body);
        model.setVersion(new_version);
        return Promise.resolve(ok({ success: true, new_version }));
      },
    ],
    ["GET /weight_info", () => Promise.resolve(ok({ weight_version: model.weightVersion }))],
    [
      "POST /v1/load_lora_adapter",
      async (call) => {
        const body = checkLoadLora(call.body);
        await model.load(checkpointDir(body.lora_path, "lora_path"), null, body.lora_name);
        return ok(`Success: LoRA adapter '${body.lora_name}' added successfully.`);
      },
    ],
  ]);
}

async function vllmCompletion(model: EngineModel, body: VllmCompletionBody): Promise<EngineAnswer> {
  model.checkModel(body.model);
  const first = body.prompt[0];
  const prompt = Int32Array.from((Array.isArray(first) ? first : body.prompt) as readonly number[]);
  const options: GenerateOptions = {
    maxNewTokens: model.bound(prompt.length, body.max_tokens, VLLM_MAX_TOKENS, {
      prompt: "prompt",
      maxTokens: "max_tokens",
    }),
    temperature: body.temperature ?? 1,
    topP: body.top_p ?? 1,
    topK: topKOf(body.top_k),
    stopIds: stopIdsOf(model, body.stop_token_ids, body.ignore_eos),
    seed: seedOf(body.seed),
  };
  const g = await model.generate(prompt, options);
  const [text, tokens] = await Promise.all([
    model.decode(g.ids),
    body.logprobs === 0 && body.return_tokens_as_token_ids !== true ? model.decodeEach(g.ids) : Promise.resolve(null),
  ]);
  const ids = Array.from(g.ids);
  const last = ids.at(-1);
  const logprobs =
    body.logprobs === 0 ? completionLogprobs(tokens ?? ids.map((id) => `token_id:${id}`), g.logprobs) : null;
  const withIds = body.return_token_ids === true;
  return ok({
    id: `cmpl-${randomBytes(16).toString("hex")}`,
    object: "text_completion",
    created: Math.floor(Date.now() / 1000),
    model: body.model ?? model.servedNames[0] ?? model.modelName,
    choices: [
      {
        index: 0,
        text,
        logprobs,
        finish_reason: g.finish,
        // vLLM names the stop token that ended it when it was one of the request's stop_token_ids, else null (EOS).
        stop_reason:
          g.finish === "stop" && last !== undefined && (body.stop_token_ids ?? []).includes(last) ? last : null,
        prompt_logprobs: null,
        ...(withIds ? { token_ids: ids, prompt_token_ids: Array.from(prompt) } : {}),
        ...(body.return_weight_versions === true
          ? { weight_versions: [{ version: g.weightVersion, start: 0, end: ids.length }] }
          : {}),
      },
    ],
    usage: {
      prompt_tokens: prompt.length,
      completion_tokens: ids.length,
      total_tokens: prompt.length + ids.length,
      prompt_tokens_details: null,
    },
  });
}

/** vLLM's CompletionLogProbs with no alternatives: each token's text, offset and log-prob, top_logprobs holding the sampled token alone. */
function completionLogprobs(tokens: readonly string[], logprobs: Float32Array): unknown {
  const lps = Array.from(logprobs, finiteLogprob);
  const offsets: number[] = [];
  let offset = 0;
  for (const token of tokens) {
    offsets.push(offset);
    offset += token.length;
  }
  return {
    text_offset: offsets,
    token_logprobs: lps,
    tokens,
    top_logprobs: tokens.map((token, i) => ({ [token]: lps[i] ?? LOGPROB_FLOOR })),
  };
}

function sglangRoutes(model: EngineModel): Map<string, Handler> {
  const info = () =>
    ok({
      model_path: model.modelName,
      served_model_name: model.servedNames[0] ?? model.modelName,
      tokenizer_path: model.modelName,
      is_generation: true,
      weight_version: model.weightVersion,
    });
  return new Map<string, Handler>([
    ["GET /health", () => Promise.resolve(ok(null))],
    ["GET /health_generate", () => Promise.resolve(ok(null))],
    ["GET /get_model_info", () => Promise.resolve(info())],
    ["GET /model_info", () => Promise.resolve(info())],
    ["POST /generate", (call) => sglangGenerate(model, call.body)],
    [
      "POST /load_lora_adapter",
      async (call) => {
        const body = checkLoadLora(call.body);
        if (!existsSync(body.lora_path))
          return {
            status: 400,
            body: {
              success: false,
              error_message: `no adapter at '${body.lora_path}': give the directory the trainer saved`,
              loaded_adapters: null,
            },
          };
        await model.load(body.lora_path, null, body.lora_name);
        return ok({ success: true, error_message: null, loaded_adapters: { [body.lora_name]: body.lora_path } });
      },
    ],
    [
      "POST /update_weights_from_disk",
      async (call) => {
        const body = checkSglangUpdateWeights(call.body);
        if (!existsSync(body.model_path))
          return {
            status: 400,
            body: {
              success: false,
              message: `no checkpoint at '${body.model_path}': give the directory the trainer saved`,
              num_paused_requests: 0,
            },
          };
        try {
          const version = await model.load(body.model_path, body.weight_version ?? null);
          return ok({
            success: true,
            message: `Succeeded to update model weights (weight version ${version}).`,
            num_paused_requests: 0,
          });
        } catch (error) {
          if (!(error instanceof EngineModelError)) throw error;
          return { status: 400, body: { success: false, message: error.message, num_paused_requests: 0 } };
        }
      },
    ],
  ]);
}

async function sglangGenerate(model: EngineModel, raw: unknown): Promise<EngineAnswer> {
  const body = checkSglangGenerate(raw);
  model.checkModel(body.lora_path);
  const s: SglangSamplingParams = body.sampling_params ?? {};
  const prompt = Int32Array.from(body.input_ids);
  const g: ServedGeneration = await model.generate(prompt, {
    maxNewTokens: model.bound(prompt.length, s.max_new_tokens, SGLANG_MAX_NEW_TOKENS, {
      prompt: "input_ids",
      maxTokens: "sampling_params.max_new_tokens",
    }),
    temperature: s.temperature ?? 1,
    topP: s.top_p ?? 1,
    topK: topKOf(s.top_k),
    stopIds: stopIdsOf(model, s.stop_token_ids, s.ignore_eos),
    seed: seedOf(s.sampling_seed),
  });
  const ids = Array.from(g.ids);
  const [text, tokens] = await Promise.all([
    model.decode(g.ids),
    body.return_logprob === true && body.return_text_in_logprobs === true
      ? model.decodeEach(g.ids)
      : Promise.resolve(null),
  ]);
  const last = ids.at(-1);
  return ok({
    text,
    output_ids: ids,
    meta_info: {
      id: body.rid ?? randomBytes(16).toString("hex"),
      finish_reason:
        g.finish === "stop" ? { type: "stop", matched: last ?? null } : { type: "length", length: ids.length },
      prompt_tokens: prompt.length,
      weight_version: g.weightVersion,
      completion_tokens: ids.length,
      cached_tokens: 0,
      // SGLang's (logprob, token id, text or null) triples.
      ...(body.return_logprob === true
        ? {
            output_token_logprobs: ids.map((id, i) => [
              finiteLogprob(g.logprobs[i] ?? Number.NaN),
              id,
              tokens?.[i] ?? null,
            ]),
          }
        : {}),
      ...(body.return_sampling_mask === true
        ? { output_token_sampling_logprobs: Array.from(g.logprobs, finiteLogprob) }
        : {}),
    },
  });
}
