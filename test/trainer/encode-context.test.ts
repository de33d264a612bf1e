// The embedded trainer's `encode` with `context`, `tools` and `tool_calls` (docs/protocol.md
// `encode`), and the template facts its `configure` reports: its template is per message, so the
// ids after a context are a cut of the whole conversation's, and tools and calls are not rendered.
import { describe, expect, it } from "vitest";
import { row, type ChatMessage, type ConfigureParams, type Ragged } from "../../src/contracts/trainer-protocol.js";
import { RequestError } from "../../src/trainer/protocol/server.js";
import { TinyTrainer } from "../../src/trainer/embedded/trainer.js";

const VOCAB = ["You", "see", "a", "key", "take", "the", "door", "is", "open", "weather", "Paris", "sunny"];

function configureParams(): ConfigureParams {
  return {
    seed: 3,
    policy: {
      model: "builtin:tiny?hidden=16&embed=8",
      chat_template: null,
      sampling: { temperature: 1, top_p: 1, top_k: 0, max_new_tokens: 4 },
    },
    algorithm: {
      optimizer: {
        name: "adamw",
        lr: 1e-3,
        betas: [0.9, 0.999],
        eps: 1e-8,
        weight_decay: 0,
        grad_clip: 1,
        warmup_steps: 0,
      },
      critic: null,
      clip: { low: 0.2, high: 0.2, dual: null },
      kl: { coef: 0, estimator: "k3", placement: "loss", reference: null },
    },
    vocabulary: VOCAB,
  };
}

const rowsOf = (ids: Ragged<Int32Array>) =>
  Array.from({ length: ids.offsets.length - 1 }, (_, i) => Array.from(row(ids, i)));

const TOOL = {
  type: "function",
  function: { name: "weather", parameters: { type: "object", properties: { city: { type: "string" } } } },
};
const conversation: ChatMessage[] = [
  { role: "system", content: "You see a key." },
  { role: "user", content: "take the key" },
  {
    role: "assistant",
    content: '<tool_call>{"name": "weather", "arguments": {"city": "Paris"}}</tool_call>',
    tool_calls: [{ name: "weather", arguments: { city: "Paris" } }],
  },
  { role: "tool", content: "sunny" },
  { role: "assistant", content: "the door is open" },
  { role: "user", content: "take the key" },
];

async function trainer(): Promise<TinyTrainer> {
  const t = new TinyTrainer({ embed: 8, hidden: 16, heads: 2, keyDim: 4, chunkTokens: 65_536 });
  await t.init();
  return t;
}

describe("builtin:tiny encode with a context", () => {
  it("reports its template facts and stop ids at configure", async () => {
    const t = await trainer();
    const { tokenizer } = t.configure(configureParams());
    expect(tokenizer.stop_ids).toEqual([tokenizer.eos_id]);
    expect(tokenizer.template).toEqual({
      prefix_preserving: true,
      renders_tools: false,
      tool_call_format: "hermes",
      tool_role: "tool",
    });
  });

  it("returns the messages from context on, as the whole conversation's sequences, appending to what was generated", async () => {
    const t = await trainer();
    t.configure(configureParams());
    const encode = (messages: readonly ChatMessage[], context?: number, tools?: unknown[]) =>
      rowsOf(
        t.request("encode", {
          messages,
          add_generation_prompt: true,
          ...(context === undefined ? {} : { context }),
          ...(tools ? { tools } : {}),
        }).ids,
      );
    const whole = encode(conversation);
    for (let k = 0; k < conversation.length; k++) expect(encode(conversation, k)).toEqual(whole.slice(k));
    // tools and tool_calls change nothing: the runtime puts both in the messages' text
    expect(encode(conversation, 0, [TOOL])).toEqual(whole);
    expect(encode(conversation.map(({ role, content }) => ({ role, content })))).toEqual(whole);
    // a rollout: the prompt, the generated turn (its content and <eos>), then what encode adds
    const prompt = encode(conversation.slice(0, 2)).flat();
    const generated = [...t.tokenizer.encodeText(conversation[2]!.content), 2];
    const context = [...prompt, ...generated, ...encode(conversation.slice(0, 4), 3).flat()];
    expect(context).toEqual(encode(conversation.slice(0, 4)).flat());
  });

  it("refuses a context beyond the messages, naming the field", async () => {
    const t = await trainer();
    t.configure(configureParams());
    const ask = (context: number, add_generation_prompt: boolean) => () =>
      t.request("encode", { messages: conversation.slice(0, 2), add_generation_prompt, context });
    expect(ask(3, false)).toThrow(RequestError);
    expect(ask(3, false)).toThrow("context: 3 is more than the 2 messages");
    expect(ask(2, true)).toThrow("context: equals the number of messages");
    expect(
      rowsOf(t.request("encode", { messages: conversation.slice(0, 2), add_generation_prompt: false, context: 2 }).ids),
    ).toEqual([]);
  });
});
