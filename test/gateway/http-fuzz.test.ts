// The raw-socket fuzzer of the product's HTTP servers: the agent gateway (a session's routes) and
// engine mode (`arl serve --api vllm|sglang`, over the embedded trainer in-process). Seeded raw
// requests (test/helpers/http-fuzz-cases.ts) each on a connection of its own. Whatever arrives:
// the server never dies, a request it could read whole gets an answer with a status line (2xx
// with a body that parses, or a 4xx/5xx), nothing is answered as an internal failure (no
// "failed" line in the log), and the server answers a good request after every batch. Then
// hostile bodies on chat, Responses and Messages over a real model session (builtin:tiny): a
// value at any JSON path (tool schemas, metadata, messages) nested past the depth limit, or a
// prompt text far past the model's context, each answered 400 while the server keeps serving.
// ARL_FUZZ_HTTP_CASES=20000 runs that many cases per server instead of CI's slice;
// ARL_FUZZ_HTTP_SEED picks another corpus.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { Gateway } from "../../src/inference/gateway/contract.js";
import { EngineModel } from "../../src/inference/gateway/engine-model.js";
import { engineRoutes } from "../../src/inference/gateway/engine-routes.js";
import { startGateway } from "../../src/inference/gateway/server.js";
import { MAX_JSON_DEPTH } from "../../src/inference/gateway/json-depth.js";
import { ModelSession } from "../../src/inference/gateway/model-session.js";
import { maxTokenBytes } from "../../src/inference/gateway/prompt-bound.js";
import { DEFAULT_TEMPLATE } from "../../src/episode/conversation.js";
import { harnessVocabulary } from "../../src/episode/harness.js";
import { TrainerPolicy } from "../../src/episode/policy.js";
import { TinyTrainer } from "../../src/trainer/embedded/trainer.js";
import { fuzzCases, hostileBodies, type FuzzTarget } from "../helpers/http-fuzz-cases.js";
import { compilePlans, counterSpec } from "../helpers/plans.js";
import { rawExchange } from "../helpers/raw-http.js";
import { tinyConfigure, tinyPolicy } from "../helpers/tiny-policy.js";
import { ScriptedModel } from "./scripted-model.js";

const caseCount = Number(process.env.ARL_FUZZ_HTTP_CASES ?? "300") || 300;
const seed = Number(process.env.ARL_FUZZ_HTTP_SEED ?? "20261203");
const SMALL = { embed: 16, hidden: 24, heads: 2, keyDim: 8, chunkTokens: 65_536 };
const EOS = 2;
/** Cases sent at once (each on its own connection), then the server is checked. */
const BATCH = 10;

const servers: Gateway[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

/** The status and body of the first response in `data`, if it has a whole head. */
function firstResponse(data: Buffer): { status: number; headers: string; body: Buffer } | null {
  const end = data.indexOf("\r\n\r\n");
  if (end < 0) return null;
  const headers = data.subarray(0, end).toString("latin1");
  return { status: Number(/^HTTP\/1\.[01] (\d{3}) /.exec(headers)?.[1] ?? "0"), headers, body: data.subarray(end + 4) };
}

/** Runs the corpus against `origin` and checks every answer and the server's health after each batch. */
async function fuzz(
  origin: string,
  target: FuzzTarget,
  logged: readonly string[],
  health: () => Promise<number>,
): Promise<{ answered: number; ok: number }> {
  const cases = fuzzCases(seed, caseCount, target);
  let answered = 0;
  let ok = 0;
  for (let start = 0; start < cases.length; start += BATCH) {
    const batch = cases.slice(start, start + BATCH);
    // A whole request is answered on an open connection, as a client waits; a cut one is half-closed, so that the server sees its end.
    const exchanges = await Promise.all(
      batch.map((c) => rawExchange(origin, c.bytes, { halfClose: c.cut, head: c.head })),
    );
    exchanges.forEach((exchange, i) => {
      const c = batch[i]!;
      const label = `case ${start + i}: ${c.label}`;
      expect(exchange.closed, `${label}: the server neither answered nor closed in 20 s`).toBe(true);
      if (!c.cut) expect(exchange.statuses.length, `${label}: no answer to a whole request`).toBeGreaterThan(0);
      for (const status of exchange.statuses)
        expect(status >= 100 && status <= 599, `${label}: status ${status}`).toBe(true);
      const first = firstResponse(exchange.data);
      if (
        first &&
        first.status >= 200 &&
        first.status < 300 &&
        /content-type: application\/json/i.test(first.headers) &&
        /content-length/i.test(first.headers)
      ) {
        const length = Number(/content-length:\s*(\d+)/i.exec(first.headers)?.[1]);
        expect(
          () => JSON.parse(first.body.subarray(0, length).toString("utf8")) as unknown,
          `${label}: a 2xx whose body is not JSON`,
        ).not.toThrow();
      }
      if (exchange.statuses.length > 0) answered++;
      if (first && first.status >= 200 && first.status < 300) ok++;
    });
    expect(
      logged.filter((line) => /failed|could not answer/.test(line)),
      `after case ${start + batch.length - 1}`,
    ).toEqual([]);
    expect(await health(), `the server after case ${start + batch.length - 1}`).toBe(200);
  }
  if (process.env.ARL_FUZZ_HTTP_CASES)
    console.log(`${origin}: ${cases.length} cases, ${answered} answered, ${ok} with 2xx`);
  return { answered, ok };
}

describe(`raw-socket HTTP fuzzing (${caseCount} cases a server, seed ${seed})`, () => {
  it("the agent gateway's session routes survive and answer every whole request", async () => {
    const logged: string[] = [];
    const gateway = await startGateway({ maxBodyBytes: 64 * 1024, log: (line) => logged.push(line) });
    servers.push(gateway);
    const handle = gateway.open(new ScriptedModel());
    const prefix = `/s/${handle.id}`;
    const chat = () => ({
      model: "arl-policy",
      messages: [{ role: "user", content: "hi" }],
      max_tokens: 8,
      stream: false,
    });
    const target: FuzzTarget = {
      routes: [
        { method: "GET", path: `${prefix}/v1/models`, body: () => null },
        { method: "GET", path: `${prefix}/v1/models/arl-policy`, body: () => null },
        { method: "POST", path: `${prefix}/v1/chat/completions`, body: chat },
        {
          method: "POST",
          path: `${prefix}/v1/chat/completions`,
          body: () => ({ ...chat(), stream: true, stream_options: { include_usage: true } }),
        },
        { method: "POST", path: `${prefix}/v1/completions`, body: () => ({ prompt: [1, 2, 3], max_tokens: 4 }) },
        {
          method: "POST",
          path: `${prefix}/v1/responses`,
          body: () => ({
            model: "arl-policy",
            input: "hi",
            max_output_tokens: 8,
            tools: [{ type: "function", name: "f", parameters: { type: "object" } }],
          }),
        },
        {
          method: "POST",
          path: `${prefix}/v1/messages`,
          body: () => ({
            model: "arl-policy",
            max_tokens: 8,
            messages: [{ role: "user", content: "hi" }],
            tools: [{ name: "f", input_schema: { type: "object" } }],
          }),
        },
        { method: "POST", path: `${prefix}/outcome`, body: () => ({ signals: { resolved: true } }) },
      ],
      goodHeaders: [`Authorization: Bearer ${handle.apiKey}`],
    };
    const health = async () =>
      (await fetch(`${handle.baseUrl}/models`, { headers: { authorization: `Bearer ${handle.apiKey}` } })).status;
    const { answered, ok } = await fuzz(gateway.origin, target, logged, health);
    // The corpus reaches the handlers, not only the parser.
    expect(answered).toBeGreaterThan(caseCount / 2);
    expect(ok).toBeGreaterThan(caseCount / 10);
  }, 600_000);

  it("the agent gateway over a real model session: deep nesting in any JSON field and oversized prompts are 4xx on chat, Responses and Messages, and the server keeps answering", async () => {
    const plan = compilePlans(counterSpec(`harness { max_turns: 100000 }`))[0]!;
    const { tiny, policy } = await tinyPolicy(plan, harnessVocabulary(plan));
    const model = { maxContext: 2_048, maxTokenBytes: await maxTokenBytes(policy, tiny.tokenizer.size) };
    const logged: string[] = [];
    const gateway = await startGateway({ log: (line) => logged.push(line) });
    servers.push(gateway);
    const handle = gateway.open(
      new ModelSession({ policy, template: DEFAULT_TEMPLATE, stopIds: [EOS], plan, seed: (call) => call, model }),
    );
    const schema = {
      type: "object",
      properties: { city: { type: "string" }, days: { type: "array", items: { type: "integer" } } },
      required: ["city"],
    };
    const apis = [
      {
        name: "chat",
        url: `${handle.baseUrl}/chat/completions`,
        good: {
          model: "m",
          messages: [
            { role: "system", content: "Be brief." },
            { role: "user", content: [{ type: "text", text: "hello" }] },
          ],
          max_tokens: 2,
          stop: ["\n\n"],
          metadata: { a: "b" },
          tools: [{ type: "function", function: { name: "weather", description: "The weather", parameters: schema } }],
        },
      },
      {
        name: "responses",
        url: `${handle.baseUrl}/responses`,
        good: {
          model: "m",
          instructions: "Be brief.",
          input: [{ role: "user", content: "hello" }],
          max_output_tokens: 2,
          metadata: { a: "b" },
          tools: [{ type: "function", name: "weather", parameters: schema }],
        },
      },
      {
        name: "messages",
        url: `${handle.anthropicBaseUrl}/v1/messages`,
        good: {
          model: "m",
          system: "Be brief.",
          messages: [{ role: "user", content: [{ type: "text", text: "hello" }] }],
          max_tokens: 2,
          metadata: { user_id: "u" },
          tools: [{ name: "weather", input_schema: schema }],
        },
      },
    ];
    const post = async (url: string, body: string) => {
      const response = await fetch(url, {
        method: "POST",
        headers: {
          authorization: `Bearer ${handle.apiKey}`,
          "x-api-key": handle.apiKey,
          "content-type": "application/json",
        },
        body,
      });
      return { status: response.status, text: await response.text() };
    };
    const hostileCount = Math.max(30, Math.round(caseCount / 5));
    for (const api of apis) {
      expect((await post(api.url, JSON.stringify(api.good))).status, `${api.name}: the good body`).toBe(200);
      const cases = hostileBodies(seed + api.name.length, hostileCount, api.good, MAX_JSON_DEPTH, 100_000);
      for (let start = 0; start < cases.length; start += BATCH) {
        const batch = cases.slice(start, start + BATCH);
        const answers = await Promise.all(batch.map((c) => post(api.url, c.text)));
        answers.forEach((answer, i) => {
          const label = `${api.name} case ${start + i}: ${batch[i]!.label}`;
          expect(answer.status, `${label}: ${answer.text.slice(0, 300)}`).toBe(400);
          expect(answer.text, label).toMatch(
            api.name === "messages" ? /"type":"error"/ : /"code":"(json_too_deep|context_length_exceeded)"/,
          );
        });
        expect(
          logged.filter((line) => /failed|could not answer/.test(line)),
          `${api.name} after case ${start + batch.length - 1}`,
        ).toEqual([]);
        expect(
          (await post(api.url, JSON.stringify(api.good))).status,
          `${api.name}: the server after case ${start + batch.length - 1}`,
        ).toBe(200);
      }
    }
  }, 600_000);

  for (const api of ["vllm", "sglang"] as const) {
    it(`engine mode (--api ${api}) survives and answers every whole request`, async () => {
      const tiny = new TinyTrainer(SMALL);
      await tiny.init();
      tiny.configure(tinyConfigure(3, ["take", "key", "go", "north", "south"]));
      const checkpoint = path.join(mkdtempSync(path.join(tmpdir(), "arl-http-fuzz-")), "ckpt");
      tiny.save(checkpoint);
      const trainer = {
        request: <M extends Parameters<TinyTrainer["request"]>[0]>(
          method: M,
          params: Parameters<TinyTrainer["request"]>[1],
        ) =>
          new Promise<Awaited<ReturnType<TinyTrainer["request"]>>>((resolve) => resolve(tiny.request(method, params))),
      };
      const model = new EngineModel({
        policy: new TrainerPolicy(trainer),
        trainer,
        modelName: "builtin:tiny",
        stopIds: [EOS],
        weightVersion: "default",
        limits: { maxNewTokens: 16, maxContext: 256 },
      });
      const logged: string[] = [];
      const gateway = await startGateway({
        maxBodyBytes: 64 * 1024,
        engine: engineRoutes(api, model),
        log: (line) => logged.push(line),
      });
      servers.push(gateway);
      const routes: FuzzTarget["routes"] =
        api === "vllm"
          ? [
              {
                method: "POST",
                path: "/v1/completions",
                body: () => ({
                  model: "builtin:tiny",
                  prompt: [5, 6, 7],
                  max_tokens: 4,
                  seed: 1,
                  logprobs: 0,
                  return_token_ids: true,
                }),
              },
              {
                method: "POST",
                path: "/v1/completions",
                body: () => ({ prompt: [[5, 6]], max_tokens: 3, ignore_eos: true, stop_token_ids: [6] }),
              },
              { method: "GET", path: "/health", body: () => null },
              { method: "GET", path: "/v1/models", body: () => null },
              { method: "GET", path: "/is_paused", body: () => null },
              { method: "POST", path: "/resume", body: () => null },
              {
                method: "POST",
                path: "/collective_rpc",
                body: () => ({ method: "reload_weights", kwargs: { weights_path: checkpoint } }),
              },
              { method: "POST", path: "/update_weight_version", body: () => ({ new_version: "v1" }) },
              {
                method: "POST",
                path: "/v1/load_lora_adapter",
                body: () => ({ lora_name: "a", lora_path: "/nonexistent" }),
              },
            ]
          : [
              {
                method: "POST",
                path: "/generate",
                body: () => ({
                  input_ids: [5, 6, 7],
                  sampling_params: { max_new_tokens: 4, sampling_seed: 1 },
                  return_logprob: true,
                }),
              },
              { method: "GET", path: "/health_generate", body: () => null },
              { method: "GET", path: "/get_model_info", body: () => null },
              { method: "POST", path: "/update_weights_from_disk", body: () => ({ model_path: checkpoint }) },
              {
                method: "POST",
                path: "/load_lora_adapter",
                body: () => ({ lora_name: "a", lora_path: "/nonexistent" }),
              },
            ];
      const health = async () => (await fetch(`${gateway.origin}/health`)).status;
      const { answered, ok } = await fuzz(
        gateway.origin,
        { routes, goodHeaders: ["Content-Type: application/json"] },
        logged,
        health,
      );
      expect(answered).toBeGreaterThan(caseCount / 2);
      expect(ok).toBeGreaterThan(caseCount / 10);
    }, 600_000);
  }
});
