// The model session's budgets on builtin:tiny: max_turns, the response and total token budgets
// and the model's context end the episode (or refuse the request) with an OpenAI-style error.
import { describe, expect, it } from "vitest";
import { type GatewayMessage } from "../../src/inference/gateway/contract.js";
import { type BudgetCode } from "../../src/inference/gateway/model-session.js";
import { maxTokenBytes, nonSpaceBytes } from "../../src/inference/gateway/prompt-bound.js";
import { RecordingPolicy } from "./recording-policy.js";
import { harness, session, chat, FIRST, rejection, tiny, policy, useTinySession } from "../helpers/model-session.js";

useTinySession();

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
