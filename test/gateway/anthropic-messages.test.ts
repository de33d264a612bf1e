// The gateway's Anthropic Messages API over raw HTTP, as Anthropic's SDKs speak it (x-api-key,
// anthropic-version): the message, the tool_use round trip, the event stream, and every refusal in
// Anthropic's error shape ({"type": "error", "error": {type, message}}) with the session unharmed.
// The official Python SDK drives the same routes in runtime-gpu/tests/test_gateway_anthropic_sdk.py.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ChatRequest, ChatResult } from "../../src/inference/gateway/contract.js";
import { startGateway } from "../../src/inference/gateway/server.js";
import { plainAnswer, ScriptedModel, toolCallAnswer } from "./scripted-model.js";

type Gateway = Awaited<ReturnType<typeof startGateway>>;

const WEATHER = {
  name: "get_weather",
  description: "The weather in a city",
  input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};

function weatherAgent(request: ChatRequest): ChatResult {
  if (request.messages.some((m) => m.role === "tool"))
    return {
      ...plainAnswer(["It", " is", " sunny", ".", "\n\nHuman"]),
      content: "It is sunny.",
      stopString: "\n\nHuman",
    };
  if (request.tools.length > 0 && request.toolChoice === "auto")
    return {
      ...toolCallAnswer({ id: "call_0", name: "get_weather", arguments: '{"city":"Paris"}' }),
      content: "Let me look.",
    };
  return plainAnswer(["Hello", ",", " world"]);
}

let gateway: Gateway;
beforeAll(async () => {
  gateway = await startGateway({ maxBodyBytes: 4096, log: () => undefined });
});
afterAll(async () => {
  await gateway.close();
});

function session() {
  const model = new ScriptedModel(weatherAgent);
  const handle = gateway.open(model);
  const messages = async (body: unknown, key = handle.apiKey) => {
    const response = await fetch(`${handle.anthropicBaseUrl}/v1/messages`, {
      method: "POST",
      headers: { "x-api-key": key, "anthropic-version": "2023-06-01", "content-type": "application/json" },
      body: typeof body === "string" ? body : JSON.stringify(body),
    });
    const text = await response.text();
    return {
      status: response.status,
      text,
      json: (response.headers.get("content-type")?.startsWith("application/json") ? JSON.parse(text) : null) as Record<
        string,
        unknown
      >,
    };
  };
  return { model, handle, messages };
}

const ask = (extra: Record<string, unknown> = {}) => ({
  model: "arl-policy",
  max_tokens: 64,
  messages: [{ role: "user", content: "Weather in Paris?" }],
  ...extra,
});

describe("the Anthropic Messages API", () => {
  it("answers a message with text and tool_use blocks, and reads the tool_result back as a tool message", async () => {
    const { model, messages } = session();
    const plain = await messages(
      ask({
        system: [{ type: "text", text: "Be brief." }],
        temperature: 0.2,
        stop_sequences: ["\n\nHuman"],
        metadata: { user_id: "u" },
      }),
    );
    expect(plain.status).toBe(200);
    expect(plain.json).toMatchObject({
      type: "message",
      role: "assistant",
      model: "arl-policy",
      content: [{ type: "text", text: "Hello, world" }],
      stop_reason: "end_turn",
      stop_sequence: null,
      usage: { input_tokens: 5, output_tokens: 4 },
    });
    expect(plain.json.id).toMatch(/^msg_/);
    expect(plain.json.token_ids).toEqual([10, 11, 12, 13]);
    expect(model.chats[0]).toMatchObject({
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Weather in Paris?" },
      ],
      maxTokens: 64,
      stop: ["\n\nHuman"],
      temperature: 0.2,
    });

    const history: unknown[] = [{ role: "user", content: "Weather in Paris?" }];
    const call = await messages(ask({ messages: history, tools: [WEATHER] }));
    expect(call.json).toMatchObject({
      stop_reason: "tool_use",
      content: [
        { type: "text", text: "Let me look." },
        { type: "tool_use", id: "call_0", name: "get_weather", input: { city: "Paris" } },
      ],
    });
    history.push(
      { role: "assistant", content: call.json.content },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "call_0", content: [{ type: "text", text: "sunny" }] },
          { type: "text", text: "And so?" },
        ],
      },
    );
    const answer = await messages(ask({ messages: history, tools: [WEATHER], tool_choice: { type: "auto" } }));
    expect(answer.json).toMatchObject({
      content: [{ type: "text", text: "It is sunny." }],
      stop_reason: "stop_sequence",
      stop_sequence: "\n\nHuman",
    });
    expect(model.chats[1]?.tools).toEqual([
      {
        type: "function",
        function: { name: "get_weather", description: "The weather in a city", parameters: WEATHER.input_schema },
      },
    ]);
    expect(model.chats[2]?.messages).toEqual([
      { role: "user", content: "Weather in Paris?" },
      {
        role: "assistant",
        content: "Let me look.",
        tool_calls: [{ name: "get_weather", arguments: { city: "Paris" } }],
        toolCallIds: ["call_0"],
      },
      { role: "tool", content: "sunny", toolCallId: "call_0" },
      { role: "user", content: "And so?" },
    ]);
  });

  it("reads tool_choice any as a required call and tool as the named one", async () => {
    const { model, messages } = session();
    expect(
      (await messages(ask({ tools: [WEATHER], tool_choice: { type: "any", disable_parallel_tool_use: true } }))).status,
    ).toBe(200);
    expect((await messages(ask({ tools: [WEATHER], tool_choice: { type: "tool", name: "get_weather" } }))).status).toBe(
      200,
    );
    expect(model.chats.map((c) => c.toolChoice)).toEqual(["required", { name: "get_weather" }]);
  });

  it("streams message_start, the blocks' deltas and stops, message_delta and message_stop", async () => {
    const { messages } = session();
    const events = (text: string) =>
      text
        .split("\n\n")
        .filter((e) => e !== "")
        .map((e) => {
          const [name, data] = e.split("\n");
          expect(name?.slice("event: ".length)).toBe(
            (JSON.parse(data?.slice("data: ".length) ?? "{}") as { type: string }).type,
          );
          return JSON.parse(data?.slice("data: ".length) ?? "{}") as {
            type: string;
            index?: number;
            delta?: { type: string; text?: string; partial_json?: string; stop_reason?: string };
          };
        });
    const plain = events((await messages(ask({ stream: true }))).text);
    expect(plain.map((e) => e.type)).toEqual([
      "message_start",
      "content_block_start",
      "content_block_delta",
      "content_block_delta",
      "content_block_delta",
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
    expect(plain.flatMap((e) => (e.delta?.type === "text_delta" ? [e.delta.text] : []))).toEqual([
      "Hello",
      ",",
      " world",
    ]);
    expect(plain.at(-2)?.delta?.stop_reason).toBe("end_turn");
    const withCall = events((await messages(ask({ stream: true, tools: [WEATHER] }))).text);
    const json = withCall.filter((e) => e.delta?.type === "input_json_delta");
    expect(json.map((e) => [e.index, JSON.parse(e.delta?.partial_json ?? "")])).toEqual([[1, { city: "Paris" }]]);
    expect(withCall.at(-2)?.delta?.stop_reason).toBe("tool_use");
  });

  it("answers every refusal in Anthropic's error shape, and the session's record stays intact", async () => {
    const { model, handle, messages } = session();
    const refused = async (body: unknown, status = 400, key?: string) => {
      const answer = await messages(body, key);
      expect(answer.status).toBe(status);
      expect(answer.json).toMatchObject({
        type: "error",
        error: { type: expect.any(String) as unknown, message: expect.any(String) as unknown },
      });
      return answer.json.error as { type: string; message: string };
    };
    expect(await refused(ask({ max_tokens: "lots" }))).toMatchObject({
      type: "invalid_request_error",
      message: expect.stringMatching(/"max_tokens": must be integer/) as unknown,
    });
    expect((await refused({ model: "m", messages: [{ role: "user", content: "hi" }] })).message).toMatch(
      /missing required field "max_tokens"/,
    );
    expect(
      (await refused(ask({ messages: [{ role: "user", content: [{ type: "image", source: {} }] }] }))).message,
    ).toMatch(/"messages\[0\]\.content\[0\]\.type": a user message holds text and tool_result blocks/);
    expect(
      (
        await refused(
          ask({ messages: [{ role: "assistant", content: [{ type: "thinking", thinking: "hm", signature: "s" }] }] }),
        )
      ).message,
    ).toMatch(/thinking blocks are not served/);
    const orphan = await refused(
      ask({
        messages: [
          { role: "user", content: "hi" },
          { role: "assistant", content: "ok" },
          { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "x" }] },
        ],
      }),
    );
    expect(orphan.message).toMatch(
      /^messages\[2\]\.content\[0\]\.tool_use_id: tool_result block with tool_use_id "toolu_1" has no tool_use/,
    );
    expect((await refused(ask({ tool_choice: { type: "tool" } }))).message).toMatch(
      /missing required field "tool_choice.name"/,
    );
    expect((await refused(ask({ tool_choice: { type: "web" } }))).message).toMatch(/must be auto, none, any or tool/);
    expect((await refused('{"model": ', 400)).message).toMatch(/not valid JSON/);
    expect(await refused(ask({ system: "x".repeat(5000) }), 413)).toMatchObject({ type: "request_too_large" });
    expect(handle.faults).toEqual([]);
    expect(model.chats).toHaveLength(0);
    expect(await refused(ask(), 401, "sk-ant-wrong")).toMatchObject({ type: "authentication_error" });
    expect(handle.faults.map((f) => f.kind)).toEqual(["wrong_key"]);
    expect((await messages(ask())).status).toBe(200);
    expect(model.chats).toHaveLength(1);
  });
});
