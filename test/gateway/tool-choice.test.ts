// Forced tool calls in the gateway's model half (docs/gateway.md#forced-tool-calls), on builtin:tiny
// through the trainer protocol: tool_choice "required" puts the template's call opening into the
// context as ids the policy did not sample (role `rendered`, no policy version, log-prob 0, never
// a target) and the model writes the rest; a named function forces the opening through the name;
// the served call is parsed from the opening and the reply together, and the next request
// continues the same sample; a choice that cannot be honoured is refused before the call counts.
import { beforeAll, describe, expect, it } from "vitest";
import { callOpening } from "../../src/contracts/tool-calls.js";
import type { Plan } from "../../src/plan/schema.js";
import { Role } from "../../src/episode/buffer.js";
import { DEFAULT_TEMPLATE } from "../../src/episode/conversation.js";
import { GatewayError, type ChatRequest, type GatewayMessage } from "../../src/inference/gateway/contract.js";
import { ModelSession } from "../../src/inference/gateway/model-session.js";
import { harnessVocabulary } from "../../src/episode/harness.js";
import type { Policy, TrainerPolicy } from "../../src/episode/policy.js";
import { EOS } from "../../src/trainer/embedded/tokenizer.js";
import type { TinyTrainer } from "../../src/trainer/embedded/trainer.js";
import { compilePlans, counterSpec } from "../helpers/plans.js";
import { tinyPolicy } from "../helpers/tiny-policy.js";
import { RecordingPolicy } from "./recording-policy.js";

const STEP = {
  type: "function",
  function: { name: "step", description: "advance the counter", parameters: { type: "object", properties: {} } },
};
const WRITE = {
  type: "function",
  function: {
    name: "write",
    description: "write a value",
    parameters: { type: "object", properties: { value: { type: "string" } } },
  },
};
const FIRST: GatewayMessage[] = [
  { role: "system", content: "Count." },
  { role: "user", content: "hello world" },
];

let plan: Plan;
let tiny: TinyTrainer;
let policy: TrainerPolicy;

beforeAll(async () => {
  plan = compilePlans(counterSpec(`harness { max_turns: 4, system_prompt: "Count." }`))[0]!;
  ({ tiny, policy } = await tinyPolicy(plan, [...harnessVocabulary(plan), "hello", "world", "counter", "at"]));
});

function session(p: Policy = policy): ModelSession {
  return new ModelSession({ policy: p, template: DEFAULT_TEMPLATE, stopIds: [EOS], plan, seed: (call) => 7 + call });
}

function chat(messages: readonly GatewayMessage[], extra: Partial<ChatRequest> = {}): ChatRequest {
  return {
    messages,
    tools: [STEP, WRITE],
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

const list = (a: ArrayLike<number>) => Array.from(a);

describe("tool_choice that forces a call", () => {
  it("required: the format's opening ends the prompt as rendered context, and the policy samples from there", async () => {
    const opening = await policy.tokenize(callOpening("hermes"));
    expect(await policy.decode(opening)).toBe("<tool_call>\n");
    const s = session();
    const reply = await s.chat(chat(FIRST, { toolChoice: "required" }));
    expect(list(reply.promptIds.subarray(reply.promptIds.length - opening.length))).toEqual(list(opening));
    expect(reply.ids.length).toBeGreaterThan(0);
    const r = s.record();
    expect(r.samples).toHaveLength(1);
    const k = reply.promptIds.length - opening.length;
    // The opening: in the stream, but neither sampled nor a target.
    expect(list(r.ids.subarray(k, k + opening.length))).toEqual(list(opening));
    expect(list(r.roles.subarray(k, k + opening.length))).toEqual(list(opening).map(() => Role.rendered));
    expect(list(r.versions.subarray(k, k + opening.length))).toEqual(list(opening).map(() => -1));
    expect(list(r.logprobs.subarray(k, k + opening.length))).toEqual(list(opening).map(() => 0));
    // What follows is the policy's, with the log-probs it was sampled with.
    expect(list(r.roles.subarray(reply.promptIds.length))).toEqual(list(reply.ids).map(() => Role.generated));
    expect(list(r.logprobs.subarray(reply.promptIds.length))).toEqual(list(reply.logprobs));
  });

  it("the served call is read from the opening and the reply together, and the next request continues the sample", async () => {
    const scripted = new RecordingPolicy({ policy, tiny }, [
      '{"name": "step", "arguments": {}}</tool_call>',
      "counter at 1",
    ]);
    const s = session(scripted);
    const first = await s.chat(chat(FIRST, { toolChoice: "required" }));
    expect(first).toMatchObject({ finish: "tool_calls", toolCalls: [{ id: "call_0", name: "step", arguments: "{}" }] });
    const history: GatewayMessage[] = [
      ...FIRST,
      { role: "assistant", content: "", tool_calls: [{ name: "step", arguments: {} }], toolCallIds: ["call_0"] },
      { role: "tool", content: "counter at 1", toolCallId: "call_0" },
    ];
    const second = await s.chat(chat(history));
    expect(list(second.promptIds.subarray(0, first.promptIds.length + first.ids.length))).toEqual([
      ...list(first.promptIds),
      ...list(first.ids),
    ]);
    const r = s.record();
    expect(r.samples).toHaveLength(1);
    expect(r.rewrites).toBe(0);
    expect(r.toolCalls).toMatchObject([{ name: "step", valid: true, result: "counter at 1" }]);
  });

  it("a named function forces the opening through the name: the model writes the arguments", async () => {
    const scripted = new RecordingPolicy({ policy, tiny }, [' {"value": "hello"}}</tool_call>']);
    const s = session(scripted);
    const reply = await s.chat(chat(FIRST, { toolChoice: { name: "write" } }));
    const opening = await policy.tokenize('<tool_call>\n{"name": "write", "arguments":');
    expect(list(reply.promptIds.subarray(reply.promptIds.length - opening.length))).toEqual(list(opening));
    expect(reply).toMatchObject({
      finish: "tool_calls",
      toolCalls: [{ name: "write", arguments: '{"value":"hello"}' }],
    });
  });

  it("each format's opening is a prefix of a call its parser reads", () => {
    expect(callOpening("hermes", "f")).toBe('<tool_call>\n{"name": "f", "arguments":');
    expect(callOpening("llama3_json")).toBe('{"name": "');
    expect(callOpening("llama3_json", "f")).toBe('{"name": "f", "parameters":');
    expect(callOpening("deepseek_v3", "f")).toBe(
      "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n",
    );
  });

  it("refuses a choice it cannot honour before the call counts", async () => {
    const s = session();
    const refusal = (request: ChatRequest) =>
      s.chat(request).then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(await refusal(chat(FIRST, { tools: [], toolChoice: "required" }))).toMatchObject({
      status: 400,
      param: "tool_choice",
      message: expect.stringMatching(/offers no tools/) as unknown,
    });
    const unknown = await refusal(chat(FIRST, { toolChoice: { name: "jump" } }));
    expect(unknown).toBeInstanceOf(GatewayError);
    expect(unknown).toMatchObject({
      status: 400,
      param: "tool_choice",
      message: expect.stringMatching(
        /"jump", which the request does not offer \(offered: "step", "write"\)/,
      ) as unknown,
    });
    const noTokenizer: Policy = {
      encode: (m, g, o) => policy.encode(m, g, o),
      decode: (ids) => policy.decode(ids),
      generate: (p, o) => policy.generate(p, o),
    };
    expect(
      await session(noTokenizer)
        .chat(chat(FIRST, { toolChoice: "required" }))
        .catch((e: unknown) => e),
    ).toMatchObject({ status: 400, code: "unsupported_value" });
    expect(s.record()).toMatchObject({ requested: [], samples: [] });
  });
});
