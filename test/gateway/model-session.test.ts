// The model half of the agent gateway on builtin:tiny, driven in-process through the trainer
// protocol (TrainerPolicy over the embedded trainer): a request that continues the served
// history keeps the generated ids exactly and stays one sample; a rewritten history (or
// history: rerender) starts a step-wise sample with earlier replies as `rendered` context; tools
// are given to a template that renders them, else described in the system message; a parsed call
// is served as a tool call and its result is read from the later tool message; stop strings cut
// text and tokens; the budgets end the episode with an OpenAI-style error; token-id completions
// continue the served stream or start a new sample; sampling is the plan's; and the official
// openai SDK's function-calling round trip through the real gateway stays one trajectory.
import OpenAI from "openai";
import type { ChatCompletionMessageParam, ChatCompletionTool } from "openai/resources/chat/completions";
import { beforeAll, describe, expect, it } from "vitest";
import type { ChatTemplateInfo } from "../../src/contracts/trainer-protocol.js";
import type { Plan } from "../../src/plan/schema.js";
import { Role } from "../../src/episode/buffer.js";
import { DEFAULT_TEMPLATE } from "../../src/episode/conversation.js";
import {
  GatewayError,
  type ChatRequest,
  type ChatResult,
  type GatewayMessage,
} from "../../src/inference/gateway/contract.js";
import { ModelSession, type BudgetCode, type ModelSessionOptions } from "../../src/inference/gateway/model-session.js";
import { maxTokenBytes, nonSpaceBytes } from "../../src/inference/gateway/prompt-bound.js";
import { startGateway } from "../../src/inference/gateway/server.js";
import { harnessVocabulary } from "../../src/episode/harness.js";
import type { GenerateOptions, Generation, TrainerPolicy } from "../../src/episode/policy.js";
import { EOS, ROLE_IDS } from "../../src/trainer/embedded/tokenizer.js";
import { TrainerError } from "../../src/trainer/protocol/client.js";
import type { TinyTrainer } from "../../src/trainer/embedded/trainer.js";
import { compilePlans, counterSpec } from "../helpers/plans.js";
import { RecordingPolicy } from "./recording-policy.js";
import { tinyPolicy } from "../helpers/tiny-policy.js";

const WORDS = ["hello", "world", "again", "counter", "at", "edited"];
const STEP_TOOL = {
  type: "function",
  function: { name: "step", description: "advance the counter", parameters: { type: "object", properties: {} } },
};

let plan: Plan;
let tiny: TinyTrainer;
let policy: TrainerPolicy;

beforeAll(async () => {
  plan = compilePlans(counterSpec(`harness { max_turns: 4, system_prompt: "Count." }`))[0]!;
  ({ tiny, policy } = await tinyPolicy(plan, [...harnessVocabulary(plan), ...WORDS]));
});

function harness(h: Partial<Plan["harness"]>): Plan {
  return { ...plan, harness: { ...plan.harness, ...h } };
}

function session(o: Partial<ModelSessionOptions> & { base?: number } = {}): ModelSession {
  const base = o.base ?? 0;
  return new ModelSession({
    policy,
    template: DEFAULT_TEMPLATE,
    stopIds: [EOS],
    plan,
    seed: (call) => 1000 * base + call,
    ...o,
  });
}

function chat(messages: readonly GatewayMessage[], extra: Partial<ChatRequest> = {}): ChatRequest {
  return {
    messages,
    tools: [],
    toolChoice: "auto",
    maxTokens: null,
    stop: [],
    temperature: null,
    topP: null,
    seed: null,
    logprobs: false,
    ...extra,
  };
}

const FIRST: GatewayMessage[] = [
  { role: "system", content: "Count." },
  { role: "user", content: "hello world" },
];

/** A session (seed base) whose first reply to FIRST ended with the end-of-turn token it sampled; the untrained model stops about half the time. */
async function stoppingSession(o: Partial<ModelSessionOptions> = {}): Promise<{ s: ModelSession; first: ChatResult }> {
  for (let base = 0; base < 40; base++) {
    const s = session({ ...o, base });
    const first = await s.chat(chat(FIRST));
    if (first.ids.at(-1) === EOS && first.ids.length > 1) return { s, first };
  }
  throw new Error("no seed made the tiny model stop");
}

const ids = (a: ArrayLike<number>) => Array.from(a);

async function rejection(p: Promise<unknown>): Promise<GatewayError> {
  const error = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(GatewayError);
  return error as GatewayError;
}

describe("a continuing history", () => {
  it("keeps the generated ids as sampled and stays one sample, the new messages encoded after the reply", async () => {
    const { s, first } = await stoppingSession();
    expect(first.finish).toBe("stop");
    expect(first.content).not.toBeNull();
    // The SDK sends the reply back with trailing whitespace trimmed or added: still the same turn.
    const next = [
      ...FIRST,
      { role: "assistant" as const, content: `${first.content ?? ""}  \n` },
      { role: "user" as const, content: "again" },
    ];
    const second = await s.chat(chat(next));
    const served = [...ids(first.promptIds), ...ids(first.ids)];
    expect(ids(second.promptIds.subarray(0, served.length))).toEqual(served);
    const added = tiny.request("encode", {
      messages: [...FIRST, { role: "assistant", content: first.content ?? "" }, { role: "user", content: "again" }],
      add_generation_prompt: true,
      context: 3,
    });
    expect(ids(second.promptIds.subarray(served.length))).toEqual(ids(added.ids.values));

    const r = s.record();
    expect(r.samples).toHaveLength(1);
    expect(r.stepwise).toBe(false);
    expect(r.rewrites).toBe(0);
    expect(r.samples[0]!.step).toBeUndefined();
    expect(ids(r.ids)).toEqual([...ids(second.promptIds), ...ids(second.ids)]);
    const p = first.promptIds.length;
    expect(ids(r.roles.subarray(p, p + first.ids.length))).toEqual(ids(first.ids).map(() => Role.generated));
    expect(ids(r.logprobs.subarray(p, p + first.ids.length))).toEqual(ids(first.logprobs));
    expect(ids(r.versions.subarray(p, p + first.ids.length))).toEqual(ids(first.ids).map(() => 0));
    expect(ids(r.roles.subarray(served.length, second.promptIds.length))).toEqual(
      ids(added.ids.values).map(() => Role.prompt),
    );
    expect(r.turnEnds).toEqual([served.length - 1, r.ids.length - 1]);
    expect(r.episode).toMatchObject({
      turns: 2,
      tokens: first.ids.length + second.ids.length,
      aborted: false,
      terminated: true,
    });
    expect(r.messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "user", "assistant"]);
    expect(r.end).toBe("finished");
  });
});

describe("a rewritten history", () => {
  it("renders the request again as a new step-wise sample, earlier replies as rendered context, and counts the rewrite", async () => {
    const { s, first } = await stoppingSession();
    const edited = [
      ...FIRST,
      { role: "assistant" as const, content: "edited" },
      { role: "user" as const, content: "again" },
    ];
    const second = await s.chat(chat(edited));
    const r = s.record();
    expect(r.rewrites).toBe(1);
    expect(r.stepwise).toBe(true);
    expect(r.samples.map((x) => x.step)).toEqual([0, 1]);
    const [a, b] = r.samples;
    expect(ids(a!.ids)).toEqual([...ids(first.promptIds), ...ids(first.ids)]);
    expect(ids(b!.ids)).toEqual([...ids(second.promptIds), ...ids(second.ids)]);
    const rendered = tiny.request("encode", { messages: edited, add_generation_prompt: true });
    expect(ids(second.promptIds)).toEqual(ids(rendered.ids.values));
    // The edited reply is context only; the only targets are what this call generated.
    const assistantRow = ids(rendered.ids.values.subarray(rendered.ids.offsets[2], rendered.ids.offsets[3]));
    const from = rendered.ids.offsets[2]!;
    expect(ids(b!.roles.subarray(from, from + assistantRow.length))).toEqual(assistantRow.map(() => Role.rendered));
    expect(ids(b!.roles).filter((x) => x === Role.generated)).toHaveLength(second.ids.length);
    expect(b!.turnEnds).toEqual([b!.ids.length - 1]);
    // The whole stream is the samples one after another.
    expect(r.ids.length).toBe(a!.ids.length + b!.ids.length);
    expect(r.turnEnds).toEqual([a!.ids.length - 1, r.ids.length - 1]);
  });

  it("under history: rerender starts a sample per call even when the history continues", async () => {
    const { s, first } = await stoppingSession({ plan: harness({ context: { history: "rerender" } }) });
    await s.chat(
      chat([...FIRST, { role: "assistant", content: first.content ?? "" }, { role: "user", content: "again" }]),
    );
    const r = s.record();
    expect(r.samples.map((x) => x.step)).toEqual([0, 1]);
    expect(r.starts).toEqual(["first", "rerender"]);
    expect(r.rewrites).toBe(0);
  });
});

/** The tiny policy with its encode calls recorded; `texts`: replies it generates instead of sampling (encoded by the tiny tokenizer, then the end-of-turn token). */
const recording = (texts?: readonly string[]) => new RecordingPolicy({ policy, tiny }, texts);

describe("tools", () => {
  it("go to encode as function definitions when the template renders them, else into the system message", async () => {
    const renders = recording();
    const template: ChatTemplateInfo = { ...DEFAULT_TEMPLATE, renders_tools: true };
    await session({ policy: renders, template }).chat(chat(FIRST, { tools: [STEP_TOOL] }));
    expect(renders.encodes[0]!.options.tools).toEqual([STEP_TOOL]);
    expect(renders.encodes[0]!.messages[0]!.content).toBe("Count.");

    const describes = recording();
    await session({ policy: describes }).chat(chat(FIRST, { tools: [STEP_TOOL] }));
    expect(describes.encodes[0]!.options.tools).toBeUndefined();
    expect(describes.encodes[0]!.messages[0]!.content).toBe(
      `Count.\n\nTools:\n{"type":"function","function":{"name":"step","description":"advance the counter","parameters":{"properties":{},"type":"object"}}}`,
    );

    // tool_choice "none": nothing offered, nothing parsed.
    const none = recording(['<tool_call>{"name": "step", "arguments": {}}</tool_call>']);
    const reply = await session({ policy: none, template }).chat(
      chat(FIRST, { tools: [STEP_TOOL], toolChoice: "none" }),
    );
    expect(none.encodes[0]!.options.tools).toBeUndefined();
    expect(none.encodes[0]!.messages[0]!.content).toBe("Count.");
    expect(reply).toMatchObject({
      toolCalls: [],
      finish: "stop",
      content: '<tool_call>{"name": "step", "arguments": {}}</tool_call>',
    });
  });

  it("a parsed call is served as a tool call, its result filled from the later tool message, and the history continues", async () => {
    const call = '<tool_call>{"name": "step", "arguments": {}}</tool_call>';
    const scripted = recording([
      call,
      '<tool_call>{"name": "write", "arguments": {"value": "c"}}</tool_call>',
      "<tool_call>{</tool_call>",
    ]);
    const s = session({ policy: scripted });
    const first = await s.chat(chat(FIRST, { tools: [STEP_TOOL] }));
    expect(first).toMatchObject({
      content: null,
      finish: "tool_calls",
      toolCalls: [{ id: "call_0", name: "step", arguments: "{}" }],
    });
    const history: GatewayMessage[] = [
      ...FIRST,
      { role: "assistant", content: "", tool_calls: [{ name: "step", arguments: {} }], toolCallIds: ["call_0"] },
      { role: "tool", content: "counter at 1", toolCallId: "call_0" },
    ];
    const second = await s.chat(chat(history, { tools: [STEP_TOOL] }));
    expect(ids(second.promptIds.subarray(0, first.promptIds.length + first.ids.length))).toEqual([
      ...ids(first.promptIds),
      ...ids(first.ids),
    ]);
    // `write` is not offered: served as the model wrote it, recorded as invalid.
    expect(second.toolCalls).toEqual([{ id: "call_1", name: "write", arguments: '{"value":"c"}' }]);
    const third = await s.chat(
      chat(
        [
          ...history,
          { role: "assistant", content: "", tool_calls: [{ name: "write", arguments: { value: "c" } }] },
          { role: "tool", content: "no such tool", toolCallId: "call_1" },
        ],
        { tools: [STEP_TOOL] },
      ),
    );
    expect(third).toMatchObject({ toolCalls: [], finish: "stop" });
    const r = s.record();
    expect(r.samples).toHaveLength(1);
    expect(r.toolCalls).toEqual([
      { turn: 0, name: "step", arguments: {}, valid: true, blocked: false, result: "counter at 1" },
      { turn: 1, name: "write", arguments: { value: "c" }, valid: false, blocked: false, result: "no such tool" },
      {
        turn: 2,
        name: "",
        arguments: null,
        valid: false,
        blocked: false,
        result: "",
        error: "the tool call is not complete JSON",
      },
    ]);
    expect(r.episode).toMatchObject({ turns: 3, tool_calls: 2, invalid_calls: 2 });
    expect(ids(r.roles.subarray(first.promptIds.length + first.ids.length, second.promptIds.length))).toEqual(
      ids(second.promptIds.subarray(first.promptIds.length + first.ids.length)).map(() => Role.observation),
    );
  });
});

describe("stop strings", () => {
  it("cut the text before the first one and drop the tokens after the one that completes it; the next call starts a new sample", async () => {
    const plain = await session({ base: 7 }).chat(chat(FIRST, { logprobs: true }));
    const k = plain.tokens.findIndex((t, i) => i > 0 && /^\s*\w+$/.test(t));
    expect(k).toBeGreaterThan(0);
    const stop = plain.tokens[k]!.trim();
    const text = plain.content ?? "";
    const s = session({ base: 7 });
    const cut = await s.chat(chat(FIRST, { stop: ["no such stop", stop] }));
    expect(cut.content).toBe(text.slice(0, text.indexOf(stop)));
    expect(cut.finish).toBe("stop");
    expect(ids(cut.ids)).toEqual(ids(plain.ids.subarray(0, cut.ids.length)));
    expect(cut.ids.length).toBeLessThanOrEqual(k + 1);
    expect(await policy.decode(cut.ids)).toContain(stop);
    expect(await policy.decode(cut.ids.subarray(0, cut.ids.length - 1))).not.toContain(stop);
    // No end-of-turn token after the cut: the continuing request cannot continue the stream.
    await s.chat(
      chat([...FIRST, { role: "assistant", content: cut.content ?? "" }, { role: "user", content: "again" }]),
    );
    expect(s.record()).toMatchObject({ cuts: 1, rewrites: 0, stepwise: true, starts: ["first", "cut"] });
  });
});

describe("budgets", () => {
  it("harness.max_turns: the call after the last is answered 400 max_turns and the episode ends per on_budget", async () => {
    const ended: BudgetCode[] = [];
    const s = session({ plan: harness({ max_turns: 1, on_budget: "truncate" }), onBudget: (c) => ended.push(c) });
    await s.chat(chat(FIRST));
    const error = await rejection(s.chat(chat(FIRST)));
    expect(error).toMatchObject({ status: 400, code: "max_turns" });
    expect(error.message).toContain("harness.max_turns");
    expect((await rejection(s.chat(chat(FIRST)))).code).toBe("max_turns");
    expect(ended).toEqual(["max_turns"]);
    expect(s.record()).toMatchObject({
      end: "truncated",
      episode: { aborted: true, truncated: true, terminated: false, turns: 1 },
    });
  });

  it("max tokens is the least of the request's and the plan's, and harness.max_total_tokens refuses a prompt with no room left", async () => {
    const s = session({ plan: harness({ max_total_tokens: 40, on_budget: "terminate" }) });
    const short = await s.chat(chat(FIRST, { maxTokens: 3 }));
    expect(short.ids.length).toBeLessThanOrEqual(3);
    const long: GatewayMessage[] = [
      ...FIRST,
      { role: "user", content: Array.from({ length: 40 }, () => "hello").join(" ") },
    ];
    const error = await rejection(s.chat(chat(long)));
    expect(error).toMatchObject({ status: 400, code: "context_length_exceeded" });
    expect(error.message).toContain("harness.max_total_tokens");
    expect(s.record()).toMatchObject({ end: "aborted", episode: { aborted: true, terminated: true } });
  });

  it("without harness.max_total_tokens, the model's context bounds every prompt: past it a 400 for that request alone, the episode going on", async () => {
    const recording = new RecordingPolicy({ policy, tiny });
    const s = session({ policy: recording, model: { maxContext: 40, maxTokenBytes: 64 } });
    const long: GatewayMessage[] = [
      ...FIRST,
      { role: "user", content: Array.from({ length: 40 }, () => "hello").join(" ") },
    ];
    const error = await rejection(s.chat(chat(long)));
    expect(error).toMatchObject({ status: 400, code: "context_length_exceeded", param: "messages" });
    expect(error.message).toContain("maximum context length is 40 tokens");
    expect(s.budgetEnd).toBeUndefined();
    // Room left under the context caps the generation.
    const reply = await s.chat(chat(FIRST));
    expect(reply.promptIds.length + reply.ids.length).toBeLessThanOrEqual(40);
    const completion = await rejection(
      s.complete({
        prompt: new Int32Array(40).fill(11),
        maxTokens: 4,
        stop: [],
        temperature: null,
        topP: null,
        seed: null,
        logprobs: false,
      }),
    );
    expect(completion.code).toBe("context_length_exceeded");
    expect(s.record()).toMatchObject({ end: "finished", episode: { aborted: false, turns: 1 } });
  });

  it("a prompt whose text cannot fit the context is refused before anything is tokenized", async () => {
    const recording = new RecordingPolicy({ policy, tiny });
    const s = session({ policy: recording, model: { maxContext: 32_768, maxTokenBytes: 16 } });
    const huge: GatewayMessage[] = [{ role: "user", content: "x".repeat(2 * 1024 * 1024) }];
    const error = await rejection(s.chat(chat(huge)));
    expect(error).toMatchObject({ status: 400, code: "context_length_exceeded" });
    expect(error.message).toContain("32768 tokens");
    expect(recording.encodes).toHaveLength(0);
    // Whitespace is not counted (a tokenizer may fold it): a megabyte of spaces around a word is tokenized and served.
    const spaced = await s.chat(chat([{ role: "user", content: `${" ".repeat(1024 * 1024)}hello` }], { maxTokens: 2 }));
    expect(spaced.promptIds.length).toBeLessThan(10);
    // Under harness.max_total_tokens the same bound ends the episode, as the budget does.
    const budget = session({
      policy: recording,
      plan: harness({ max_total_tokens: 100 }),
      model: { maxContext: 32_768, maxTokenBytes: 16 },
    });
    expect((await rejection(budget.chat(chat(huge)))).message).toContain("harness.max_total_tokens is 100");
    expect(budget.budgetEnd).toBe("max_total_tokens");
  });

  it("the vocabulary's longest token bounds the text per token; text bytes are counted without whitespace", async () => {
    // builtin:tiny: its longest word (special tokens decode to nothing).
    const longest = Math.max(
      ...tiny.tokenizer.tokens.filter((t) => !/^<.+>$/.test(t)).map((t) => Buffer.byteLength(t)),
    );
    expect(longest).toBeGreaterThanOrEqual("characters".length);
    expect(await maxTokenBytes(policy, tiny.tokenizer.size)).toBe(longest);
    expect(nonSpaceBytes(" a\tb\n\u00e9\u3000\u4e2d\ud83d\ude00 ")).toBe(1 + 1 + 2 + 3 + 4);
  });

  it("a response that reaches harness.max_response_tokens is served, then the episode is over", async () => {
    for (let base = 0; ; base++) {
      const s = session({ plan: harness({ max_response_tokens: 2 }), base });
      const reply = await s.chat(chat(FIRST));
      expect(reply.ids.length).toBeLessThanOrEqual(2);
      if (reply.finish === "stop") continue; // it stopped within the budget: try another seed
      expect(s.budgetEnd).toBe("max_response_tokens");
      expect((await rejection(s.chat(chat(FIRST)))).code).toBe("context_length_exceeded");
      expect(s.record().end).toBe("truncated");
      break;
    }
  });
});

describe("completions", () => {
  it("a token prompt that begins with the served stream continues it (the rest is observation); another starts a new sample", async () => {
    const s = session();
    const prompt = Int32Array.from(tiny.request("encode", { messages: FIRST, add_generation_prompt: true }).ids.values);
    const first = await s.complete({
      prompt,
      maxTokens: 4,
      stop: [],
      temperature: 0.3,
      topP: null,
      seed: 5,
      logprobs: true,
    });
    expect(first.tokens).toHaveLength(first.ids.length);
    const observation = [ROLE_IDS.tool, 12, 13, EOS];
    const next = Int32Array.from([...ids(first.promptIds), ...ids(first.ids), ...observation]);
    const second = await s.complete({
      prompt: next,
      maxTokens: 4,
      stop: [],
      temperature: null,
      topP: null,
      seed: null,
      logprobs: false,
    });
    expect(ids(second.promptIds)).toEqual(ids(next));
    let r = s.record();
    expect(r.samples).toHaveLength(1);
    expect(ids(r.roles.subarray(0, prompt.length))).toEqual(ids(prompt).map(() => Role.prompt));
    expect(ids(r.roles.subarray(prompt.length + first.ids.length, next.length))).toEqual(
      observation.map(() => Role.observation),
    );
    expect(r.requested[0]).toEqual({ call: 0, temperature: 0.3, topP: null, seed: 5, maxTokens: 4 });
    await s.complete({ prompt, maxTokens: 2, stop: [], temperature: null, topP: null, seed: null, logprobs: false });
    r = s.record();
    expect(r.samples.map((x) => x.step)).toEqual([0, 2]);
    expect(r.rewrites).toBe(1);
  });
});

describe("sampling", () => {
  it("is the plan's (or the eval temperature): request values are recorded, not applied; the seed is the session's function of the call", async () => {
    const recorder = recording(["hello", "world"]);
    const s = session({
      policy: recorder,
      plan: harness({ max_response_tokens: 5 }),
      temperature: 0.25,
      seed: (call) => 40 + call,
    });
    await s.chat(chat(FIRST, { temperature: 1.7, topP: 0.1, seed: 99, maxTokens: 50 }));
    await s.chat(
      chat([...FIRST, { role: "assistant", content: "hello" }, { role: "user", content: "again" }], { maxTokens: 3 }),
    );
    const { top_p, top_k, max_new_tokens } = plan.policy.sampling;
    expect(recorder.generates).toEqual([
      {
        maxNewTokens: Math.min(5, max_new_tokens),
        temperature: 0.25,
        topP: top_p,
        topK: top_k,
        stopIds: [EOS],
        seed: 40,
      },
      { maxNewTokens: 3, temperature: 0.25, topP: top_p, topK: top_k, stopIds: [EOS], seed: 41 },
    ]);
    expect(s.record().requested).toEqual([
      { call: 0, temperature: 1.7, topP: 0.1, seed: 99, maxTokens: 50 },
      { call: 1, temperature: null, topP: null, seed: null, maxTokens: 3 },
    ]);
  });
});

describe("through the gateway", () => {
  it("the openai SDK's function-calling round trip continues one trajectory with the exact ids", async () => {
    const gateway = await startGateway({ log: () => undefined });
    try {
      const scripted = recording(['<tool_call>{"name": "step", "arguments": {}}</tool_call>', "done"]);
      const s = session({ policy: scripted });
      const handle = gateway.open(s);
      const client = new OpenAI({ baseURL: handle.baseUrl, apiKey: handle.apiKey, maxRetries: 0 });
      const messages: ChatCompletionMessageParam[] = [
        { role: "system", content: "Count." },
        { role: "user", content: "hello world" },
      ];
      const tools = [STEP_TOOL as ChatCompletionTool];
      const first = await client.chat.completions.create({ model: s.modelName, messages, tools });
      const reply = first.choices[0]!.message;
      expect(
        reply.tool_calls?.map((c) => (c.type === "function" ? [c.id, c.function.name, c.function.arguments] : [])),
      ).toEqual([["call_0", "step", "{}"]]);
      messages.push(reply, { role: "tool", tool_call_id: "call_0", content: "counter at 1" });
      const second = await client.chat.completions.create({ model: s.modelName, messages, tools });
      expect(second.choices[0]!.message.content).toBe("done");
      await handle.close();
      const r = s.record();
      expect(r.samples).toHaveLength(1);
      expect(r.rewrites).toBe(0);
      expect(r.toolCalls[0]).toMatchObject({ name: "step", valid: true, result: "counter at 1" });
      expect(r.turnEnds).toHaveLength(2);
      expect(ids(r.roles).filter((x) => x === Role.generated)).toHaveLength(r.episode.tokens);
    } finally {
      await gateway.close();
    }
  });
});

describe("a failed call", () => {
  it("is the trainer's error, not the client's, and leaves the session usable: the next call renders afresh", async () => {
    class FailingOnce extends RecordingPolicy {
      failed = false;
      override async generate(prompt: Int32Array, options: GenerateOptions): Promise<Generation> {
        if (!this.failed) {
          this.failed = true;
          throw new TrainerError("the trainer died", "died");
        }
        return super.generate(prompt, options);
      }
    }
    const s = session({ policy: new FailingOnce({ policy, tiny }, ["hello"]) });
    const died = await s.chat(chat(FIRST)).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(died).toBeInstanceOf(TrainerError);
    expect((died as Error).message).toBe("the trainer died");
    const reply = await s.chat(chat(FIRST));
    expect(reply.content).toBe("hello");
    const r = s.record();
    expect(r.samples).toHaveLength(1);
    expect(r.episode.turns).toBe(1);
    expect(r.requested.map((q) => q.call)).toEqual([0, 0]);
  });

  it("is that request's error when the trainer, alive, refuses it or the session cannot handle it: a GatewayError with the cause, the session serving on", async () => {
    const failures = [
      new TrainerError("trainer encode failed (invalid_request): bad template input", "invalid_request"),
      new TrainerError("trainer generate failed (internal): oops", "internal"),
      new TypeError("a bug"),
    ];
    class Failing extends RecordingPolicy {
      override async generate(prompt: Int32Array, options: GenerateOptions): Promise<Generation> {
        const failure = failures.shift();
        if (failure) throw failure;
        return super.generate(prompt, options);
      }
    }
    const s = session({ policy: new Failing({ policy, tiny }, ["hello"]) });
    for (const status of [400, 500, 500]) {
      const error = await rejection(s.chat(chat(FIRST)));
      expect(error.status).toBe(status);
      expect(error.cause).toBeInstanceOf(Error);
    }
    expect((await s.chat(chat(FIRST))).content).toBe("hello");
  });
});
