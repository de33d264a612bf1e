// The gateway in engine mode (docs/gateway.md#engine-mode) over builtin:tiny run in-process, driven
// by the runtime's own engine wires (src/inference/engine/*-wire.ts): the requests they build are
// accepted and the answers they parse are the exact ids and log-probs the trainer generated;
// concurrent generations share one generate request; each wire's weight sync (vLLM's pause,
// collective_rpc reload_weights, update_weight_version, resume; SGLang's update_weights_from_disk;
// both engines' LoRA loading) loads a checkpoint saved after a train step, which changes the
// log-probs and the version every later answer carries; bad requests get a 400 naming the field.
import { copyFileSync, mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from "node:fs";
import OpenAI, { BadRequestError } from "openai";
import type { CompletionCreateParamsNonStreaming } from "openai/resources/completions";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tinyConfigure } from "../helpers/tiny-policy.js";
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
import { keepAliveExchange, rawExchange } from "../helpers/raw-http.js";

const SMALL = { embed: 16, hidden: 24, heads: 2, keyDim: 8, chunkTokens: 65_536 };
const EOS = 2;
const PROMPT = [5, 11, 12, 7];
/** The plan's max_new_tokens and the model's context, as arl serve passes them. */
const LIMITS = { maxNewTokens: 32, maxContext: 64 };

const configure: ConfigureParams = tinyConfigure(3, ["take", "key", "go", "north", "south", "open", "box"]);

/** A train step that pushes up a continuation of PROMPT. */
function step(t: TinyTrainer): TrainStepParams {
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

interface Served {
  readonly tiny: TinyTrainer;
  readonly gateway: Gateway;
  readonly generateRequests: () => number;
}

const dir = mkdtempSync(path.join(tmpdir(), "arl-engine-serve-"));
/** The untrained weights (version 0) and those after one train step (version 1). */
const before = path.join(dir, "before");
const after = path.join(dir, "after");
const servers: Gateway[] = [];

/** `generateMs`: how long each generate request takes (a trainer busy with a batch), else at once. */
async function serve(api: EngineName, generateMs = 0): Promise<Served> {
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

async function call(
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
function parsed(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}

/** One generation as the run's engine client asks for it. */
function args(seed: number, extra: Partial<EngineGenerateArgs> = {}): EngineGenerateArgs {
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
function vllmBody(seed: number): Record<string, unknown> {
  return engineWire("vllm").generate(args(seed)).body as Record<string, unknown>;
}

/** Sends one call a wire built (weight sync, health, a generation). */
async function send(origin: string, built: EngineHttpCall): Promise<{ status: number; json: unknown; text: string }> {
  return call(origin, built.method, built.path, built.body);
}

interface Choice {
  token_ids: number[];
  prompt_token_ids: number[];
  text: string;
  finish_reason: string;
  logprobs: { token_logprobs: number[]; tokens: string[] };
  weight_versions: { version: string; start: number; end: number }[];
}

const choiceOf = (json: unknown): Choice => (json as { choices: Choice[] }).choices[0]!;

/** What the tiny trainer generates from PROMPT with the weights saved in `weights` (the vLLM body's sampling). */
function generatedBy(
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

describe("vLLM's token-in subset", () => {
  it("answers the trainer's own generation: ids, log-probs, prompt ids, usage and the weight version", async () => {
    const { tiny, gateway } = await serve("vllm");
    const { status, json } = await call(gateway.origin, "POST", "/v1/completions", vllmBody(41));
    expect(status).toBe(200);
    const choice = choiceOf(json);
    const direct = tiny.generate({
      prompts: ragged([Int32Array.from(PROMPT)], Int32Array),
      max_new_tokens: 6,
      temperature: 1,
      top_p: 1,
      top_k: 0,
      stop_ids: [EOS],
      seeds: Int32Array.of(41),
      policy: "current",
    });
    expect(choice.token_ids).toEqual(Array.from(direct.ids.values));
    expect(choice.logprobs.token_logprobs).toEqual(Array.from(direct.logprobs.values));
    expect(choice.logprobs.tokens).toHaveLength(choice.token_ids.length);
    expect(choice.prompt_token_ids).toEqual(PROMPT);
    expect(choice.text).toBe(tiny.decode(ragged([direct.ids.values], Int32Array)).at(0));
    expect(choice.finish_reason).toBe(direct.finish[0]);
    expect(choice.weight_versions).toEqual([{ version: "default", start: 0, end: choice.token_ids.length }]);
    expect((json as { usage: unknown }).usage).toMatchObject({
      prompt_tokens: PROMPT.length,
      completion_tokens: choice.token_ids.length,
    });
    expect((await call(gateway.origin, "GET", "/health")).status).toBe(200);
    expect((await call(gateway.origin, "GET", "/v1/models")).json).toMatchObject({
      data: [{ id: "builtin:tiny", object: "model" }],
    });
  });

  it("gathers the completions that arrive while the trainer generates into one generate request, each with its own seed", async () => {
    const { gateway, generateRequests } = await serve("vllm", 150);
    const answers = await Promise.all(
      [1, 2, 3, 4, 5].map((seed) => call(gateway.origin, "POST", "/v1/completions", vllmBody(seed))),
    );
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
    // The first goes alone (or with the others if they arrive in the same tick); the rest wait for it and go together.
    expect(generateRequests()).toBeLessThanOrEqual(2);
    const again = await call(gateway.origin, "POST", "/v1/completions", vllmBody(3));
    expect(choiceOf(again.json).token_ids).toEqual(choiceOf(answers[2]!.json).token_ids);
  });

  it("syncs weights by the wire's calls: pause refuses new generations, reload_weights loads the checkpoint, the new version serves", async () => {
    const { tiny, gateway } = await serve("vllm");
    tiny.load(before);
    const old = choiceOf((await call(gateway.origin, "POST", "/v1/completions", vllmBody(7))).json);
    const [pause, ...rest] = engineWire("vllm").weightSync(after, 1, { lora: false });
    expect(await send(gateway.origin, pause!)).toMatchObject({ status: 200, json: { status: "paused" } });
    expect((await call(gateway.origin, "GET", "/is_paused")).json).toEqual({ is_paused: true });
    expect(await call(gateway.origin, "POST", "/v1/completions", vllmBody(7))).toMatchObject({
      status: 503,
      json: { error: { code: 503 } },
    });
    for (const step of rest) expect((await send(gateway.origin, step)).status, step.path).toBe(200);
    expect((await call(gateway.origin, "GET", "/weight_info")).json).toEqual({ weight_version: "1" });
    const synced = choiceOf((await call(gateway.origin, "POST", "/v1/completions", vllmBody(7))).json);
    expect(old.weight_versions[0]?.version).toBe("default");
    expect(synced.weight_versions[0]?.version).toBe("1");
    // Same seed, other weights: other log-probs, exactly those of the trained checkpoint.
    expect(synced.logprobs.token_logprobs).not.toEqual(old.logprobs.token_logprobs);
    expect(synced).toMatchObject(generatedBy(tiny, after, 7));
    expect(old).toMatchObject(generatedBy(tiny, before, 7));
  });

  it("lets generations in flight finish on the weights they started with, and holds new ones during a load", async () => {
    const { gateway } = await serve("vllm");
    const inFlight = call(gateway.origin, "POST", "/v1/completions", vllmBody(9));
    await new Promise((r) => setTimeout(r, 5));
    const load = call(gateway.origin, "POST", "/collective_rpc", {
      method: "reload_weights",
      kwargs: { weights_path: after },
    });
    const [first, loaded] = await Promise.all([inFlight, load]);
    expect(loaded.status).toBe(200);
    expect(choiceOf(first.json).weight_versions[0]?.version).toBe("default");
    expect(
      choiceOf((await call(gateway.origin, "POST", "/v1/completions", vllmBody(9))).json).weight_versions[0]?.version,
    ).toBe("1");
  });

  it("serves the official openai SDK's completions.create with a token-id prompt and vLLM's return_token_ids", async () => {
    const { gateway } = await serve("vllm");
    const client = new OpenAI({ baseURL: `${gateway.origin}/v1`, apiKey: "unused", maxRetries: 0 });
    const params = {
      model: "builtin:tiny",
      prompt: PROMPT,
      max_tokens: 4,
      seed: 3,
      logprobs: 0,
      return_token_ids: true,
    };
    const completion = await client.completions.create(params as CompletionCreateParamsNonStreaming);
    const choice = completion.choices[0] as unknown as Choice;
    expect(choice.prompt_token_ids).toEqual(PROMPT);
    expect(choice.logprobs.token_logprobs).toHaveLength(choice.token_ids.length);
    await expect(
      client.completions.create({ ...params, prompt: "hello" } as CompletionCreateParamsNonStreaming),
    ).rejects.toBeInstanceOf(BadRequestError);
  });

  it("refuses bad requests with a 400 naming the field", async () => {
    const { gateway } = await serve("vllm");
    const cases: [string, unknown, string][] = [
      ["/v1/completions", { ...vllmBody(1), prompt: "hello" }, "prompt"],
      ["/v1/completions", { ...vllmBody(1), stop: ["\n"] }, "stop"],
      ["/v1/completions", { ...vllmBody(1), n: 2 }, "n"],
      ["/v1/completions", { ...vllmBody(1), guided_json: {} }, "guided_json"],
      ["/v1/completions", { ...vllmBody(1), model: "other" }, "model"],
      ["/collective_rpc", { method: "sleep" }, "method"],
      [
        "/collective_rpc",
        { method: "reload_weights", kwargs: { weights_path: path.join(dir, "missing") } },
        "kwargs.weights_path",
      ],
      ["/update_weight_version", {}, "new_version"],
    ];
    for (const [route, body, param] of cases) {
      const answer = await call(gateway.origin, "POST", route, body);
      expect(answer.status, route).toBe(param === "model" ? 404 : 400);
      expect(answer.json, JSON.stringify(body)).toMatchObject({ error: { param, code: answer.status } });
    }
    const abort = await call(gateway.origin, "POST", "/pause");
    expect(abort).toMatchObject({ status: 400, json: { error: { param: "mode" } } });
    expect((await call(gateway.origin, "POST", "/v1/completions", "{")).status).toBe(400);
    expect((await call(gateway.origin, "GET", "/nope")).status).toBe(404);
  });
});

describe("bounded generation", () => {
  it("vllm: refuses max_tokens past the plan's cap and a prompt past the context with a 400 naming the field, as vLLM does", async () => {
    const { gateway, generateRequests } = await serve("vllm");
    const body = (extra: Record<string, unknown>) => ({ ...vllmBody(1), ...extra });
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [
        { max_tokens: 1e9, ignore_eos: true },
        "max_tokens",
        /max_tokens is 1000000000, more than this server generates for one request \(32/,
      ],
      [
        { prompt: Array.from({ length: 1_000_000 }, () => 5) },
        "prompt",
        /maximum context length is 64 tokens, and the prompt has 1000000/,
      ],
      [
        { prompt: Array.from({ length: 40 }, () => 5), max_tokens: 30 },
        "max_tokens",
        /ask for at most 24 or shorten the prompt/,
      ],
    ];
    for (const [extra, param, message] of cases) {
      const answer = await call(gateway.origin, "POST", "/v1/completions", body(extra));
      expect(answer.status, param).toBe(400);
      expect(answer.json).toMatchObject({
        error: { param, code: 400, message: expect.stringMatching(message) as unknown },
      });
    }
    expect(generateRequests()).toBe(0);
    // Without max_tokens, the default (16) is cut to what the context leaves.
    const cut = await call(gateway.origin, "POST", "/v1/completions", {
      prompt: Array.from({ length: 60 }, () => 5),
      ignore_eos: true,
      return_token_ids: true,
    });
    expect(cut.status).toBe(200);
    expect(choiceOf(cut.json).token_ids.length).toBeLessThanOrEqual(4);
  });

  it("sglang: the same bounds on sampling_params.max_new_tokens and input_ids", async () => {
    const { gateway } = await serve("sglang");
    const long = await call(gateway.origin, "POST", "/generate", {
      input_ids: PROMPT,
      sampling_params: { max_new_tokens: 1e9, ignore_eos: true },
    });
    expect(long).toMatchObject({ status: 400, json: { error: { param: "sampling_params.max_new_tokens" } } });
    const huge = await call(gateway.origin, "POST", "/generate", {
      input_ids: Array.from({ length: 1_000_000 }, () => 5),
    });
    expect(huge).toMatchObject({ status: 400, json: { error: { param: "input_ids" } } });
  });

  it("a generation at the cap does not hold back another client's: both are answered", async () => {
    const { gateway } = await serve("vllm", 20);
    const [long, short] = await Promise.all([
      call(gateway.origin, "POST", "/v1/completions", {
        ...vllmBody(1),
        max_tokens: LIMITS.maxNewTokens,
        ignore_eos: true,
        stop_token_ids: [],
        return_token_ids: true,
      }),
      call(gateway.origin, "POST", "/v1/completions", { ...vllmBody(2), max_tokens: 4, return_token_ids: true }),
    ]);
    expect([long.status, short.status]).toEqual([200, 200]);
    expect(choiceOf(long.json).token_ids).toHaveLength(LIMITS.maxNewTokens);
  });
});

describe("loading a damaged checkpoint", () => {
  /** `before` with model.safetensors replaced by what `make` puts there. */
  function damaged(name: string, make: (at: string) => void): string {
    const target = path.join(dir, name);
    mkdirSync(target);
    for (const f of ["optimizer.safetensors", "trainer.json"]) copyFileSync(path.join(before, f), path.join(target, f));
    make(path.join(target, "model.safetensors"));
    return target;
  }
  const lengthOnly = (n: bigint) => {
    const b = Buffer.alloc(10);
    b.writeBigUInt64LE(n);
    return b;
  };

  it("vllm: reload_weights of /dev/zero, garbage or a 2^62 header length is a 400 naming the file, and the old weights keep serving", async () => {
    const { gateway } = await serve("vllm");
    for (const [name, make] of [
      ["zero", (at: string) => symlinkSync("/dev/zero", at)],
      ["garbage", (at: string) => writeFileSync(at, "garbage")],
      ["huge", (at: string) => writeFileSync(at, lengthOnly(2n ** 62n))],
    ] as const) {
      const target = damaged(name, make);
      const answer = await call(gateway.origin, "POST", "/collective_rpc", {
        method: "reload_weights",
        kwargs: { weights_path: target },
      });
      expect(answer.status, name).toBe(400);
      expect((answer.json as { error: { message: string } }).error.message).toContain(
        path.join(target, "model.safetensors"),
      );
    }
    const served = await send(gateway.origin, engineWire("vllm").generate(args(5)));
    expect(served.status).toBe(200);
  });

  it("sglang: update_weights_from_disk of a damaged checkpoint is a 400 with success false naming the file", async () => {
    const { gateway } = await serve("sglang");
    const target = damaged("sglang-garbage", (at) => writeFileSync(at, "garbage"));
    const answer = await call(gateway.origin, "POST", "/update_weights_from_disk", { model_path: target });
    expect(answer).toMatchObject({
      status: 400,
      json: { success: false, message: expect.stringContaining(path.join(target, "model.safetensors")) as unknown },
    });
  });
});

describe("the HTTP edges of engine mode", () => {
  for (const api of ["vllm", "sglang"] as const) {
    it(`${api}: a request target that is no URL gets a 400 in the engine's shape, and the server keeps serving`, async () => {
      const { gateway } = await serve(api);
      const exchange = await rawExchange(gateway.origin, "GET http://[ HTTP/1.1\r\nHost: x\r\n\r\n", {
        halfClose: false,
      });
      expect(exchange.statuses).toEqual([400]);
      expect(JSON.parse(exchange.data.toString("utf8").split("\r\n\r\n")[1] ?? "")).toMatchObject({
        error: { code: 400, message: expect.stringMatching(/not a URL/) as unknown },
      });
      expect((await call(gateway.origin, "GET", "/health")).status).toBe(200);
    });

    it(`${api}: a 413 says Connection: close and the server closes, so a kept-alive client sends nothing into a dropped socket`, async () => {
      const { gateway } = await serve(api);
      const route = api === "vllm" ? "/v1/completions" : "/generate";
      const big = `POST ${route} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${64 * 1024 * 1024}\r\nConnection: keep-alive\r\n\r\n`;
      const answers = await keepAliveExchange(gateway.origin, [big, "GET /health HTTP/1.1\r\nHost: x\r\n\r\n"]);
      expect(answers).toEqual([{ status: 413, headers: expect.stringMatching(/\r\nconnection: close/i) as unknown }]);
    });
  }
});

describe("the runtime's engine wires against the gateway", () => {
  for (const api of ["vllm", "sglang"] as const) {
    it(`${api}: the wire's requests are accepted and its parser reads the trainer's own ids, log-probs and version, through a sync and a LoRA load`, async () => {
      const wire = engineWire(api);
      const { tiny, gateway } = await serve(api);
      tiny.load(before);
      expect((await send(gateway.origin, wire.health())).status).toBe(200);
      const generate = async (a: EngineGenerateArgs) => {
        const answer = await send(gateway.origin, wire.generate(a));
        expect(answer.status, answer.text).toBe(200);
        return wire.parseGeneration(answer.json, a);
      };
      const first = await generate(args(5, { topK: 3 }));
      const direct = generatedBy(tiny, before, 5, 3);
      expect({ ids: Array.from(first.ids), lps: Array.from(first.logprobs) }).toEqual({
        ids: direct.token_ids,
        lps: direct.logprobs.token_logprobs,
      });
      expect(first.weightVersion).toBeNull();
      const greedy = await generate(args(5, { temperature: 0 }));
      expect(Array.from(greedy.logprobs).every((lp) => lp === 0)).toBe(true);

      for (const step of wire.weightSync(after, 1, { lora: false }))
        expect((await send(gateway.origin, step)).status, step.path).toBe(200);
      const synced = await generate(args(5, { topK: 3 }));
      expect(synced.weightVersion).toBe("1");
      expect(Array.from(synced.logprobs)).toEqual(generatedBy(tiny, after, 5, 3).logprobs.token_logprobs);

      // An adapter sync (policy.lora): the server serves the adapter under its name, and the generation reports its version.
      for (const step of wire.weightSync(before, 2, { lora: true }))
        expect((await send(gateway.origin, step)).status, step.path).toBe(200);
      const adapted = await generate(args(5, { topK: 3, model: wire.servedModel("builtin:tiny", 2, { lora: true }) }));
      expect(adapted.weightVersion).toBe("2");
      expect(Array.from(adapted.logprobs)).toEqual(direct.logprobs.token_logprobs);
    });
  }
});

interface SglangAnswer {
  text: string;
  output_ids: number[];
  meta_info: {
    output_token_logprobs: [number, number, string | null][];
    finish_reason: { type: string };
    weight_version: string;
    prompt_tokens: number;
    completion_tokens: number;
  };
}

describe("SGLang's native generate", () => {
  it("answers ids, log-prob triples and the weight version; update_weights_from_disk changes both", async () => {
    const { tiny, gateway } = await serve("sglang");
    tiny.load(before);
    const first = (await call(gateway.origin, "POST", "/generate", engineWire("sglang").generate(args(5)).body))
      .json as SglangAnswer;
    expect(first.meta_info).toMatchObject({
      weight_version: "default",
      prompt_tokens: PROMPT.length,
      completion_tokens: first.output_ids.length,
    });
    expect(first.meta_info.output_token_logprobs.map((t) => t[1])).toEqual(first.output_ids);
    expect(["stop", "length"]).toContain(first.meta_info.finish_reason.type);
    expect((await call(gateway.origin, "GET", "/health_generate")).status).toBe(200);
    const update = await call(gateway.origin, "POST", "/update_weights_from_disk", {
      model_path: after,
      weight_version: "1",
      flush_cache: true,
    });
    expect(update).toMatchObject({ status: 200, json: { success: true } });
    expect((await call(gateway.origin, "GET", "/get_model_info")).json).toMatchObject({ weight_version: "1" });
    const second = (await call(gateway.origin, "POST", "/generate", engineWire("sglang").generate(args(5)).body))
      .json as SglangAnswer;
    expect(second.meta_info.weight_version).toBe("1");
    const lps = (a: SglangAnswer) => a.meta_info.output_token_logprobs.map((t) => t[0]);
    expect(lps(second)).not.toEqual(lps(first));
    const direct = generatedBy(tiny, after, 5);
    expect({ ids: second.output_ids, lps: lps(second) }).toEqual({
      ids: direct.token_ids,
      lps: direct.logprobs.token_logprobs,
    });
    const missing = await call(gateway.origin, "POST", "/update_weights_from_disk", {
      model_path: path.join(dir, "missing"),
    });
    expect(missing).toMatchObject({ status: 400, json: { success: false } });
    const batch = await call(gateway.origin, "POST", "/generate", {
      ...(engineWire("sglang").generate(args(1)).body as Record<string, unknown>),
      input_ids: [PROMPT],
    });
    expect(batch).toMatchObject({ status: 400, json: { error: { param: "input_ids[0]" } } });
  });
});
