// The contract between the runtime's inference-engine client (docs/engines.md) and the wire
// format of each engine: what one generation asks for, what comes back, and the HTTP calls that
// check health and sync weights. The wire modules (one per engine) are pure: they build request
// bodies and read answers, so that tests can validate every body against the engines' own
// request classes; the pool and the policy do the I/O.

import type { GenerateOptions } from "../../episode/policy.js";

export type EngineName = "vllm" | "sglang";

/** One generation, token in: the exact prompt ids and the plan's sampling with the request's seed (the policy's GenerateOptions). */
export interface EngineGenerateArgs extends GenerateOptions {
  /** The model name the server serves (vLLM's `model`; SGLang ignores it). */
  readonly model: string;
  readonly prompt: Int32Array;
}

/** What the engine generated: ids and their log-probs under the distribution sampled from, as returned. */
export interface EngineGeneration {
  readonly ids: Int32Array;
  readonly logprobs: Float32Array;
  readonly finish: "stop" | "length";
  /**
   * The weight version that served the generation: the label the last weight sync gave the
   * server (the policy version as a string), or the LoRA adapter's version the request named;
   * null when the server serves the weights it was launched with (or reports no version).
   */
  readonly weightVersion: string | null;
}

/** One HTTP call to a server, relative to its base URL. */
export interface EngineHttpCall {
  readonly method: "GET" | "POST";
  /** Path with any query string, e.g. `/pause?mode=wait`. */
  readonly path: string;
  /** JSON body; absent: none. */
  readonly body?: unknown;
  /**
   * How a 2xx answer's body is read: JSON (absent: the default), or plain text, for the routes
   * that answer text (vLLM's `/v1/load_lora_adapter` answers `Success: LoRA adapter ...`).
   */
  readonly answer?: "text";
}

export interface EngineLaunchOptions {
  /** The model's path or hub name as the engine loads it. */
  readonly model: string;
  readonly host: string;
  readonly port: number;
  readonly seed: number;
  readonly dtype: "float32" | "bfloat16" | "float16";
  /** Tensor-parallel size. */
  readonly gpus: number;
  /** Longest context the plan can build (prompt plus generation). */
  readonly maxModelLen: number | null;
  /** LoRA rank when the policy trains adapters (the server must accept adapters of it); null: full weights. */
  readonly loraRank: number | null;
  /**
   * The engine's Python interpreter (`arl run --engine-python`): the server is started as its
   * module (`PYTHON -m ...`); null: the engine's own command found on PATH.
   */
  readonly python: string | null;
}

export interface EngineLaunchCommand {
  readonly command: string;
  readonly args: readonly string[];
  /** Variables added to the server's environment (GPU visibility is the launcher's). */
  readonly env: Readonly<Record<string, string>>;
}

/** A server answered something the client cannot read: the field and what was there. */
export class EngineProtocolError extends Error {
  override readonly name = "EngineProtocolError";
}

/** One engine's wire format. */
export interface EngineWire {
  readonly engine: EngineName;
  generate(args: EngineGenerateArgs): EngineHttpCall;
  /**
   * Reads a generation's answer; throws EngineProtocolError naming what is missing or malformed.
   * With the request it answers (pass it: only then does the answer follow the trainer protocol
   * exactly), greedy generations get log-prob 0 (docs/protocol.md: temperature 0 is argmax with
   * log-prob 0, while both engines report the argmax token's log-softmax), the length is checked
   * against `maxNewTokens`, and a generation by a LoRA adapter reports that adapter's version.
   */
  parseGeneration(body: unknown, request?: EngineGenerateArgs): EngineGeneration;
  /** A call that answers 200 once the server can generate. */
  health(): EngineHttpCall;
  /**
   * The calls, in order, that make a server serve the weights saved in `dir` (the trainer's
   * `save`: `model.safetensors`, or the PEFT adapter with `lora`) as policy version `version`.
   */
  weightSync(dir: string, version: number, options: { readonly lora: boolean }): readonly EngineHttpCall[];
  /** The call that unloads policy version `version`'s LoRA adapter from a server (one loaded by weightSync with `lora`). */
  unloadAdapter(version: number): EngineHttpCall;
  /** The `model` a generation names once `version` is synced (an adapter's name under LoRA, else `base`). */
  servedModel(base: string, version: number, options: { readonly lora: boolean }): string;
  launchCommand(options: EngineLaunchOptions): EngineLaunchCommand;
}
