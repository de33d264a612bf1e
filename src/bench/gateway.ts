// Agent gateway overhead per model call (docs/gateway.md#exact-tokens-and-rewrites): one chat
// call through the real gateway (HTTP on 127.0.0.1, body validation, the session's exactness
// logic, the per-token texts) against the same call made on the trainer protocol directly
// (encode, generate, decode), both on one builtin:tiny trainer process, interleaved in one run.
// The same call is also made through the Responses API and the Anthropic Messages API. All
// generate the same tokens (same prompt, same seed), so the difference is the gateway's plus the
// HTTP round trip; a round trip of the same body to an empty local server, made in the same
// round, is taken off too, leaving the gateway's own cost per call (the goal, for each API).
import OpenAI from "openai";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import type { ConfigureParams } from "../contracts/trainer-protocol.js";
import type { Plan } from "../plan/schema.js";
import { DEFAULT_TEMPLATE } from "../episode/conversation.js";
import { ModelSession } from "../inference/gateway/model-session.js";
import { startGateway } from "../inference/gateway/server.js";
import { TrainerPolicy, type Message } from "../episode/policy.js";
import { TrainerClient } from "../trainer/protocol/client.js";
import { consume, median, type BenchResult, type BenchSection, type MeasureOptions } from "./harness.js";

const MAX_NEW_TOKENS = 16;
const SEED = 7;
const MESSAGES = [
  { role: "system", content: "You are a support agent. Answer the customer." },
  { role: "user", content: "my order did not arrive and the tracking page shows no update since monday" },
] as const satisfies readonly Message[];
const WORDS = [...new Set(MESSAGES.flatMap((m) => m.content.match(/\w+/g) ?? []))];

function configure(): ConfigureParams {
  return {
    seed: 1,
    policy: {
      model: "builtin:tiny",
      chat_template: null,
      sampling: { temperature: 1, top_p: 1, top_k: 0, max_new_tokens: MAX_NEW_TOKENS },
    },
    algorithm: {
      optimizer: {
        name: "adamw",
        lr: 1e-3,
        betas: [0.9, 0.999],
        eps: 1e-8,
        weight_decay: 0,
        grad_clip: null,
        warmup_steps: 0,
      },
      critic: null,
      clip: { low: 0.2, high: 0.28, dual: null },
      kl: { coef: 0, estimator: "k3", placement: "loss", reference: null },
    },
    vocabulary: WORDS,
  };
}

/** The plan fields a model session reads: sampling and the harness budgets. */
function sessionPlan(): Plan {
  return {
    policy: {
      model: "builtin:tiny",
      chat_template: null,
      sampling: { temperature: 1, top_p: 1, top_k: 0, max_new_tokens: MAX_NEW_TOKENS },
    },
    harness: {
      format: "function_call",
      system_prompt: null,
      max_turns: 100,
      max_response_tokens: 64,
      max_total_tokens: null,
      on_budget: "truncate",
      observation: { max_tokens: 64, overflow: "keep_head" },
      tool_timeout_s: 30,
      context: { history: "exact" },
    },
  } as unknown as Plan;
}

/** A local HTTP server that reads the body and answers a fixed small JSON: what any HTTP round trip costs the client. */
async function emptyServer(): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => res.writeHead(200, { "content-type": "application/json" }).end('{"ok":true}'));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/` };
}

export function gatewaySection(options: MeasureOptions): BenchSection {
  return {
    name: "agent gateway",
    describe: () => [
      `One chat call (a system and a user message, up to ${MAX_NEW_TOKENS} new tokens) on a builtin:tiny trainer process: direct = encode + generate + decode on the protocol;`,
      "gateway = the same call over HTTP to a fresh session of the real gateway (chat completions by fetch or the official openai npm SDK, the Responses API, the Messages API), same prompt and seed, runs interleaved.",
    ],
    async run() {
      const main = fileURLToPath(new URL("../trainer/embedded/main.js", import.meta.url));
      const trainer = await TrainerClient.start({ file: process.execPath, args: [main] }, "bench");
      const gateway = await startGateway({ log: () => undefined });
      const empty = await emptyServer();
      try {
        const configured = await trainer.request("configure", configure());
        const policy = new TrainerPolicy(trainer);
        const stopIds = configured.tokenizer.stop_ids ?? [configured.tokenizer.eos_id];
        const plan = sessionPlan();
        const direct = async () => {
          const prompt = Int32Array.from((await policy.encode(MESSAGES, true)).flatMap((ids) => Array.from(ids)));
          const gen = await policy.generate(prompt, {
            maxNewTokens: MAX_NEW_TOKENS,
            temperature: 1,
            topP: 1,
            topK: 0,
            stopIds,
            seed: SEED,
          });
          return policy.decode(gen.ids);
        };
        const open = () =>
          gateway.open(
            new ModelSession({
              policy,
              template: configured.tokenizer.template ?? DEFAULT_TEMPLATE,
              stopIds,
              plan,
              seed: () => SEED,
            }),
          );
        /** One call to a fresh session's `route`, its key in the header the API reads; a refusal fails the bench. */
        const viaGateway = async (route: string, auth: (key: string) => Record<string, string>, body: object) => {
          const handle = open();
          const response = await fetch(`${handle.baseUrl}/${route}`, {
            method: "POST",
            headers: { "content-type": "application/json", ...auth(handle.apiKey) },
            body: JSON.stringify(body),
          });
          const answer: unknown = await response.json();
          await handle.close();
          if (!response.ok)
            throw new Error(
              `the gateway refused the bench's ${route} call (${response.status}): ${JSON.stringify(answer)}`,
            );
          return answer;
        };
        const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
        const [system, user] = MESSAGES;
        const viaFetch = () =>
          viaGateway("chat/completions", bearer, { model: plan.policy.model, messages: [...MESSAGES] });
        const viaResponses = () =>
          viaGateway("responses", bearer, {
            model: plan.policy.model,
            instructions: system.content,
            input: user.content,
          });
        const viaMessages = () =>
          viaGateway("messages", (key) => ({ "x-api-key": key, "anthropic-version": "2023-06-01" }), {
            model: plan.policy.model,
            system: system.content,
            messages: [user],
            max_tokens: MAX_NEW_TOKENS,
          });
        const viaSdk = async () => {
          const handle = open();
          const client = new OpenAI({ baseURL: handle.baseUrl, apiKey: handle.apiKey, maxRetries: 0 });
          const body = await client.chat.completions.create({ model: plan.policy.model, messages: [...MESSAGES] });
          await handle.close();
          return body;
        };
        // The floor: the same request body through the same client to a server that does nothing.
        const roundTrip = async () => {
          const response = await fetch(empty.url, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ model: plan.policy.model, messages: [...MESSAGES] }),
          });
          return response.json();
        };
        const inProcess = async () => {
          const session = new ModelSession({
            policy,
            template: configured.tokenizer.template ?? DEFAULT_TEMPLATE,
            stopIds,
            plan,
            seed: () => SEED,
          });
          return session.chat({
            messages: MESSAGES,
            tools: [],
            toolChoice: "auto",
            maxTokens: null,
            stop: [],
            temperature: null,
            topP: null,
            seed: null,
            logprobs: false,
          });
        };
        const runs = Math.max(options.runs, 42);
        const cases = { direct, inProcess, viaFetch, viaResponses, viaMessages, viaSdk, roundTrip };
        const samples = Object.fromEntries(Object.keys(cases).map((name) => [name, [] as number[]])) as Record<
          keyof typeof cases,
          number[]
        >;
        const cpuSamples = Object.fromEntries(Object.keys(cases).map((name) => [name, [] as number[]])) as Record<
          keyof typeof cases,
          number[]
        >;
        const order = Object.entries(cases) as [keyof typeof cases, () => Promise<unknown>][];
        for (let i = 0; i < options.warmup + runs; i++) {
          // Each round starts at another case: the first call of a round also wakes the trainer
          // process, a cost that would otherwise fall on one case alone (direct, the baseline).
          const k = i % order.length;
          for (const [name, fn] of [...order.slice(k), ...order.slice(0, k)]) {
            const [start, cpu] = [performance.now(), process.cpuUsage()];
            consume(await fn());
            if (i < options.warmup) continue;
            samples[name].push(performance.now() - start);
            const used = process.cpuUsage(cpu);
            cpuSamples[name].push((used.user + used.system) / 1000);
          }
        }
        const row = (name: string, s: number[]): BenchResult => ({
          name,
          medianMs: median(s),
          minMs: Math.min(...s),
          maxMs: Math.max(...s),
          runs: s.length,
        });
        // Paired: each round's gateway call minus the direct call beside it (the machine's load drifts between rounds).
        const extra = (s: number[]) => median(s.map((v, i) => v - (samples.direct[i] ?? 0)));
        // The gateway's own cost: beyond the model's work (the direct call) and beyond what any
        // local HTTP round trip costs the client (the empty server), both measured in the same round.
        const own = (s: number[]) =>
          median(s.map((v, i) => v - (samples.direct[i] ?? 0) - (samples.roundTrip[i] ?? 0)));
        const overhead = extra(samples.viaFetch);
        const share = overhead / median(samples.direct);
        const perApi = (name: string, s: number[]): BenchResult => {
          const value = own(s);
          return {
            name: `gateway's own overhead per call, ${name} (paired median, less direct and round trip)`,
            value,
            unit: "ms",
            goal: "< 1 ms",
            met: value < 1,
          };
        };
        // The same difference in this process's CPU time (client and gateway share it; the trainer's
        // is apart): what the gateway computes per call, a figure the machine's load moves far less.
        const ownCpu = (key: keyof typeof cases) =>
          median(cpuSamples[key].map((v, i) => v - (cpuSamples.direct[i] ?? 0) - (cpuSamples.roundTrip[i] ?? 0)));
        const perApiCpu = (name: string, key: keyof typeof cases): BenchResult => ({
          name: `gateway's own CPU per call, ${name} (paired median, less direct and round trip)`,
          value: ownCpu(key),
          unit: "ms",
        });
        return [
          row("direct: encode + generate + decode", samples.direct),
          row("session: ModelSession.chat, no HTTP", samples.inProcess),
          row("gateway: fetch", samples.viaFetch),
          row("gateway: Responses API, fetch", samples.viaResponses),
          row("gateway: Anthropic Messages API, fetch", samples.viaMessages),
          row("gateway: openai npm SDK", samples.viaSdk),
          row("HTTP round trip alone: fetch to an empty local server", samples.roundTrip),
          { name: "session logic per call (paired median)", value: extra(samples.inProcess), unit: "ms" },
          {
            name: "gateway call less direct, HTTP round trip included, chat completions (paired median)",
            value: overhead,
            unit: "ms",
          },
          perApi("chat completions", samples.viaFetch),
          perApi("Responses", samples.viaResponses),
          perApi("Messages", samples.viaMessages),
          perApiCpu("chat completions", "viaFetch"),
          perApiCpu("Responses", "viaResponses"),
          perApiCpu("Messages", "viaMessages"),
          { name: "overhead / generation call", value: share * 100, unit: "%", goal: "< 5%", met: share < 0.05 },
        ];
      } finally {
        empty.server.close();
        await gateway.close();
        await trainer.shutdown();
      }
    },
  };
}
