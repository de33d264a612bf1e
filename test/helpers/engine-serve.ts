// What the engine-mode gateway's tests (test/gateway/engine-routes*.test.ts) share: builtin:tiny
// configured as they run it, the untrained and trained checkpoints (useEngineCheckpoints), a
// gateway in engine mode over it (serve), raw calls and the runtime wires' arguments and answers.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll } from "vitest";
import { tinyConfigure } from "./tiny-policy.js";
import {
  ragged,
  type ConfigureParams,
  type Method,
  type Methods,
  type TrainStepParams,
} from "../../src/contracts/trainer-protocol.js";
import type { EngineGenerateArgs, EngineHttpCall, EngineName } from "../../src/inference/engine/contract.js";
import { engineWire } from "../../src/inference/engine/wires.js";
import type { Gateway } from "../../src/inference/gateway/contract.js";
import { EngineModel } from "../../src/inference/gateway/engine-model.js";
import { engineRoutes } from "../../src/inference/gateway/engine-routes.js";
import { startGateway } from "../../src/inference/gateway/server.js";
import { TrainerPolicy, type TrainerRequests } from "../../src/episode/policy.js";
import { denominatorsOf } from "../../src/runtime/update/train-batches.js";
import { TinyTrainer } from "../../src/trainer/embedded/trainer.js";

/** Saves the untrained and the trained checkpoints before the file's tests; closes its gateways after them. */
export function useEngineCheckpoints(): void {
  beforeAll(async () => {
    const tiny = new TinyTrainer(SMALL);
    await tiny.init();
    tiny.configure(configure);
    tiny.save(before);
    tiny.trainStep(step(tiny));
    tiny.save(after);
  });

  afterAll(async () => {
    await Promise.all(servers.map((s) => s.close()));
  });
}

export const SMALL = { embed: 16, hidden: 24, heads: 2, keyDim: 8, chunkTokens: 65_536 };

export const EOS = 2;

export const PROMPT = [5, 11, 12, 7];

/** The plan's max_new_tokens and the model's context, as arl serve passes them. */
export const LIMITS = { maxNewTokens: 32, maxContext: 64 };

export const configure: ConfigureParams = tinyConfigure(3, ["take", "key", "go", "north", "south", "open", "box"]);

/** A train step that pushes up a continuation of PROMPT. */
export function step(t: TinyTrainer): TrainStepParams {
  const ids = [Int32Array.from([...PROMPT, 13, 14, EOS])];
  const masks = ids.map((s) => Uint8Array.from(s, (_, k) => (k >= PROMPT.length ? 1 : 0)));
  return {
    ids: ragged(ids, Int32Array),
    loss_mask: ragged(masks, Uint8Array),
    advantages: ragged(
      masks.map((m) => Float32Array.from(m)),
      Float32Array,
    ),
    old_logprobs: t.logprobs(ragged(ids, Int32Array), "current", null),
    ref_logprobs: null,
    groups: Int32Array.from([0]),
    reduction: { mode: "token_mean" },
    denominators: denominatorsOf(masks, ["g"]),
    microbatches: 1,
    clip: { low: 0.2, high: 0.28, dual: null },
    kl: { coef: 0, estimator: "k3", placement: "loss" },
    sampling: { temperature: 1, top_p: 1, top_k: 0 },
    critic: null,
  };
}

export interface Served {
  readonly tiny: TinyTrainer;
  readonly gateway: Gateway;
  readonly generateRequests: () => number;
}

export const dir = mkdtempSync(path.join(tmpdir(), "arl-engine-serve-"));

/** The untrained weights (version 0) and those after one train step (version 1). */
export const before = path.join(dir, "before");

export const after = path.join(dir, "after");

const servers: Gateway[] = [];

/** `generateMs`: how long each generate request takes (a trainer busy with a batch), else at once. */
export async function serve(api: EngineName, generateMs = 0): Promise<Served> {
  const tiny = new TinyTrainer(SMALL);
  await tiny.init();
  tiny.configure(configure);
  let generates = 0;
  const trainer: TrainerRequests = {
    request: <M extends Method>(method: M, params: Methods[M][0]) => {
      // A refusal rejects, as the process client's does.
      if (method !== "generate") return new Promise((resolve) => resolve(tiny.request(method, params)));
      generates++;
      return new Promise((resolve) => setTimeout(() => resolve(tiny.request(method, params)), generateMs));
    },
  };
  const model = new EngineModel({
    policy: new TrainerPolicy(trainer),
    trainer,
    modelName: "builtin:tiny",
    stopIds: [EOS],
    weightVersion: "default",
    limits: LIMITS,
  });
  const gateway = await startGateway({ engine: engineRoutes(api, model), log: () => undefined });
  servers.push(gateway);
  return { tiny, gateway, generateRequests: () => generates };
}

export async function call(
  origin: string,
  method: "GET" | "POST",
  route: string,
  body?: unknown,
): Promise<{ status: number; json: unknown; text: string }> {
  const res = await fetch(`${origin}${route}`, {
    method,
    ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { "content-type": "application/json" } }),
  });
  const text = await res.text();
  return { status: res.status, json: parsed(text), text };
}

/** The answer as JSON; null for an empty or text one. */
export function parsed(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}

/** One generation as the run's engine client asks for it. */
export function args(seed: number, extra: Partial<EngineGenerateArgs> = {}): EngineGenerateArgs {
  return {
    model: "builtin:tiny",
    prompt: Int32Array.from(PROMPT),
    maxNewTokens: 6,
    temperature: 1,
    topP: 1,
    topK: 0,
    stopIds: [EOS],
    seed,
    ...extra,
  };
}

/** The body the runtime's vLLM client sends for `args(seed)`. */
export function vllmBody(seed: number): Record<string, unknown> {
  return engineWire("vllm").generate(args(seed)).body as Record<string, unknown>;
}

/** Sends one call a wire built (weight sync, health, a generation). */
export async function send(
  origin: string,
  built: EngineHttpCall,
): Promise<{ status: number; json: unknown; text: string }> {
  return call(origin, built.method, built.path, built.body);
}

export interface Choice {
  token_ids: number[];
  prompt_token_ids: number[];
  text: string;
  finish_reason: string;
  logprobs: { token_logprobs: number[]; tokens: string[] };
  weight_versions: { version: string; start: number; end: number }[];
}

export const choiceOf = (json: unknown): Choice => (json as { choices: Choice[] }).choices[0]!;

/** What the tiny trainer generates from PROMPT with the weights saved in `weights` (the vLLM body's sampling). */
export function generatedBy(
  tiny: TinyTrainer,
  weights: string,
  seed: number,
  topK = 0,
): { token_ids: number[]; logprobs: { token_logprobs: number[] } } {
  tiny.load(weights);
  const g = tiny.generate({
    prompts: ragged([Int32Array.from(PROMPT)], Int32Array),
    max_new_tokens: 6,
    temperature: 1,
    top_p: 1,
    top_k: topK,
    stop_ids: [EOS],
    seeds: Int32Array.of(seed),
    policy: "current",
  });
  return { token_ids: Array.from(g.ids.values), logprobs: { token_logprobs: Array.from(g.logprobs.values) } };
}
