// The model session's tools and stop strings on builtin:tiny: tools are given to a template that
// renders them, else described in the system message; a parsed call is served as a tool call and
// its result is read from the later tool message; stop strings cut text and tokens.
import { describe, expect, it } from "vitest";
import type { ChatTemplateInfo } from "../../src/contracts/trainer-protocol.js";
import { Role } from "../../src/episode/buffer.js";
import { DEFAULT_TEMPLATE } from "../../src/episode/conversation.js";
import { type GatewayMessage } from "../../src/inference/gateway/contract.js";
import { STEP_TOOL, session, chat, FIRST, ids, recording, policy, useTinySession } from "../helpers/model-session.js";

useTinySession();

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
