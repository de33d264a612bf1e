// The model half of the agent gateway on builtin:tiny, driven in-process through the trainer
// protocol (TrainerPolicy over the embedded trainer): a request that continues the served
// history keeps the generated ids exactly and stays one sample; a rewritten history (or
// history: rerender) starts a step-wise sample with earlier replies as `rendered` context;
// token-id completions continue the served stream or start a new sample; sampling is the plan's;
// the official openai SDK's function-calling round trip through the real gateway stays one
// trajectory; and a failed call is that request's error. Tools and stop strings are in
// model-session-tools.test.ts, budgets in model-session-budgets.test.ts.
import OpenAI from "openai";
import type { ChatCompletionMessageParam, ChatCompletionTool } from "openai/resources/chat/completions";
import { describe, expect, it } from "vitest";
import { Role } from "../../src/episode/buffer.js";
import { type ChatResult } from "../../src/inference/gateway/contract.js";
import { type ModelSession, type ModelSessionOptions } from "../../src/inference/gateway/model-session.js";
import { startGateway } from "../../src/inference/gateway/server.js";
import type { GenerateOptions, Generation } from "../../src/episode/policy.js";
import { EOS, ROLE_IDS } from "../../src/trainer/embedded/tokenizer.js";
import { TrainerError } from "../../src/trainer/protocol/client.js";
import { RecordingPolicy } from "./recording-policy.js";
import {
  STEP_TOOL,
  harness,
  session,
  chat,
  FIRST,
  ids,
  rejection,
  recording,
  plan,
  tiny,
  policy,
  useTinySession,
} from "../helpers/model-session.js";

/** A session (seed base) whose first reply to FIRST ended with the end-of-turn token it sampled; the untrained model stops about half the time. */
async function stoppingSession(o: Partial<ModelSessionOptions> = {}): Promise<{ s: ModelSession; first: ChatResult }> {
  for (let base = 0; base < 40; base++) {
    const s = session({ ...o, base });
    const first = await s.chat(chat(FIRST));
    if (first.ids.at(-1) === EOS && first.ids.length > 1) return { s, first };
  }
  throw new Error("no seed made the tiny model stop");
}

useTinySession();

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
