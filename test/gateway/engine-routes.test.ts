// The gateway in engine mode (docs/gateway.md#engine-mode) over builtin:tiny run in-process, driven
// by the runtime's own engine wires (src/inference/engine/*-wire.ts): the requests they build are
// accepted and the answers they parse are the exact ids and log-probs the trainer generated;
// concurrent generations share one generate request; each wire's weight sync (vLLM's pause,
// collective_rpc reload_weights, update_weight_version, resume; SGLang's update_weights_from_disk;
// both engines' LoRA loading) loads a checkpoint saved after a train step, which changes the
// log-probs and the version every later answer carries; bad requests get a 400 naming the field.
// Bounded generation and damaged checkpoints are in engine-routes-limits.test.ts, SGLang's native
// generate in engine-routes-sglang.test.ts.
import OpenAI, { BadRequestError } from "openai";
import type { CompletionCreateParamsNonStreaming } from "openai/resources/completions";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ragged } from "../../src/contracts/trainer-protocol.js";
import type { EngineGenerateArgs } from "../../src/inference/engine/contract.js";
import { engineWire } from "../../src/inference/engine/wires.js";
import { keepAliveExchange, rawExchange } from "../helpers/raw-http.js";
import {
  EOS,
  PROMPT,
  dir,
  before,
  after,
  serve,
  call,
  args,
  vllmBody,
  send,
  type Choice,
  choiceOf,
  generatedBy,
  useEngineCheckpoints,
} from "../helpers/engine-serve.js";

useEngineCheckpoints();

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
