// The gateway driven by the official OpenAI Node SDK (npm `openai`), a client nobody here wrote:
// models, chat, the function-calling round trip, streaming (both of the SDK's ways), errors, and
// token-id completions.
import OpenAI, { APIError, AuthenticationError, BadRequestError } from "openai";
import type { ChatCompletionMessageParam, ChatCompletionTool } from "openai/resources/chat/completions";
import { describe, expect, it } from "vitest";
import { sdkSessions } from "./sdk-sessions.js";

const weatherTool: ChatCompletionTool = {
  type: "function",
  function: {
    name: "get_weather",
    description: "The weather in a city",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  },
};

const sessions = sdkSessions();
const session = () => sessions.session();

describe("the gateway with the OpenAI Node SDK", () => {
  it("lists the session's model and answers a chat with the exact ids and log-probs", async () => {
    const { model, client } = session();
    const models = await client.models.list();
    expect(models.data.map((m) => m.id)).toEqual(["arl-policy"]);
    expect((await client.models.retrieve("arl-policy")).owned_by).toBe("arl");

    const response = await client.chat.completions.create({
      model: "arl-policy",
      messages: [
        { role: "developer", content: "Be brief." },
        {
          role: "user",
          content: [
            { type: "text", text: "Say" },
            { type: "text", text: "hello" },
          ],
          name: "ann",
        },
      ],
      max_completion_tokens: 32,
      stop: ["\n\n"],
      temperature: 0.7,
      seed: 5,
      logprobs: true,
      user: "u-1",
      store: false,
      frequency_penalty: 0,
      response_format: { type: "text" },
    });
    expect(response.object).toBe("chat.completion");
    expect(response.id).toMatch(/^chatcmpl-/);
    expect(response.choices[0]?.message).toEqual({ role: "assistant", content: "Hello, world" });
    expect(response.choices[0]?.finish_reason).toBe("stop");
    expect(response.usage).toEqual({ prompt_tokens: 5, completion_tokens: 4, total_tokens: 9 });
    const raw = response as unknown as {
      prompt_token_ids: number[];
      choices: { token_ids: number[] }[];
      arl: { policy_version: number };
    };
    expect(raw.prompt_token_ids).toEqual([100, 101, 102, 103, 104]);
    expect(raw.choices[0]?.token_ids).toEqual([10, 11, 12, 13]);
    expect(raw.arl.policy_version).toBe(3);
    const logprobs = response.choices[0]?.logprobs?.content ?? [];
    expect(logprobs.map((t) => [t.token, t.logprob])).toEqual([
      ["Hello", -0.25],
      [",", -0.5],
      [" world", -0.75],
      ["<|im_end|>", -1],
    ]);
    expect(logprobs[0]?.bytes).toEqual([...Buffer.from("Hello")]);

    expect(model.chats[0]).toEqual({
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Say\nhello" },
      ],
      tools: [],
      toolChoice: "auto",
      maxTokens: 32,
      stop: ["\n\n"],
      temperature: 0.7,
      topP: null,
      seed: 5,
      logprobs: true,
    });
  });

  it("carries a function-calling round trip: the call, then the tool's result", async () => {
    const { model, client } = session();
    const messages: ChatCompletionMessageParam[] = [{ role: "user", content: "Weather in Paris?" }];
    const first = await client.chat.completions.create({
      model: "arl-policy",
      messages,
      tools: [weatherTool],
      parallel_tool_calls: false,
    });
    const message = first.choices[0]?.message;
    expect(first.choices[0]?.finish_reason).toBe("tool_calls");
    expect(message?.content).toBeNull();
    expect(message?.tool_calls).toEqual([
      { id: "call_0", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } },
    ]);
    expect(first.choices[0]?.logprobs).toBeNull();

    messages.push(message as ChatCompletionMessageParam, {
      role: "tool",
      tool_call_id: "call_0",
      content: "sunny, 21 C",
    });
    const second = await client.chat.completions.create({ model: "arl-policy", messages, tools: [weatherTool] });
    expect(second.choices[0]?.message.content).toBe("It is sunny.");

    expect(model.chats[0]?.tools).toEqual([weatherTool]);
    expect(model.chats[1]?.messages.slice(1)).toEqual([
      {
        role: "assistant",
        content: "",
        tool_calls: [{ name: "get_weather", arguments: { city: "Paris" } }],
        toolCallIds: ["call_0"],
      },
      { role: "tool", content: "sunny, 21 C", toolCallId: "call_0" },
    ]);
  });

  it("streams content token by token and a tool call, with the usage chunk last", async () => {
    const { client } = session();
    const stream = await client.chat.completions.create({
      model: "arl-policy",
      messages: [{ role: "user", content: "hi" }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const deltas: string[] = [];
    let finish: string | null = null;
    let usage: unknown = null;
    for await (const chunk of stream) {
      expect(chunk.object).toBe("chat.completion.chunk");
      const choice = chunk.choices[0];
      if (choice?.delta.content) deltas.push(choice.delta.content);
      if (choice?.finish_reason) finish = choice.finish_reason;
      if (chunk.usage) usage = chunk.usage;
    }
    expect(deltas).toEqual(["Hello", ",", " world"]);
    expect(finish).toBe("stop");
    expect(usage).toEqual({ prompt_tokens: 5, completion_tokens: 4, total_tokens: 9 });

    const calls = await client.chat.completions.create({
      model: "arl-policy",
      messages: [{ role: "user", content: "weather?" }],
      tools: [weatherTool],
      stream: true,
    });
    const names: string[] = [];
    let args = "";
    for await (const chunk of calls) {
      for (const call of chunk.choices[0]?.delta.tool_calls ?? []) {
        if (call.function?.name) names.push(call.function.name);
        args += call.function?.arguments ?? "";
      }
    }
    expect(names).toEqual(["get_weather"]);
    expect(JSON.parse(args)).toEqual({ city: "Paris" });
  });

  it("reassembles streams with the SDK's own helper (chat.completions.stream)", async () => {
    const { client } = session();
    const plain = await client.chat.completions
      .stream({ model: "arl-policy", messages: [{ role: "user", content: "hi" }], logprobs: true })
      .finalChatCompletion();
    expect(plain.choices[0]?.message.content).toBe("Hello, world");
    expect(plain.choices[0]?.logprobs?.content?.map((t) => t.token)).toEqual(["Hello", ",", " world", "<|im_end|>"]);

    const withCall = await client.chat.completions
      .stream({ model: "arl-policy", messages: [{ role: "user", content: "weather?" }], tools: [weatherTool] })
      .finalChatCompletion();
    expect(withCall.choices[0]?.finish_reason).toBe("tool_calls");
    expect(withCall.choices[0]?.message.tool_calls).toEqual([
      { id: "call_0", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } },
    ]);
  });

  it("answers a wrong key, an unsupported field and a call after the end with the SDK's errors", async () => {
    const { model, handle, client } = session();
    const intruder = new OpenAI({ baseURL: handle.baseUrl, apiKey: "sk-not-the-key", maxRetries: 0 });
    await expect(intruder.models.list()).rejects.toBeInstanceOf(AuthenticationError);
    expect(handle.faults.map((f) => f.kind)).toEqual(["wrong_key"]);

    const twoChoices = await client.chat.completions
      .create({ model: "arl-policy", messages: [{ role: "user", content: "hi" }], n: 2 })
      .catch((e: unknown) => e);
    expect(twoChoices).toBeInstanceOf(BadRequestError);
    expect((twoChoices as BadRequestError).param).toBe("n");
    expect((twoChoices as BadRequestError).message).toMatch(/one choice per call/);
    const allowed = { type: "allowed_tools" as const, allowed_tools: { mode: "required" as const, tools: [] } };
    const restricted = await client.chat.completions
      .create({
        model: "arl-policy",
        messages: [{ role: "user", content: "hi" }],
        tools: [weatherTool],
        tool_choice: allowed,
      })
      .catch((e: unknown) => e);
    expect((restricted as BadRequestError).param).toBe("tool_choice");
    expect((restricted as BadRequestError).message).toMatch(/allowed_tools and custom tools are not supported/);
    expect(model.chats).toHaveLength(0);
    // A forced call reaches the model half, which forces it (tool-choice.test.ts).
    await client.chat.completions.create({
      model: "arl-policy",
      messages: [{ role: "user", content: "hi" }],
      tools: [weatherTool],
      tool_choice: "required",
    });
    await client.chat.completions.create({
      model: "arl-policy",
      messages: [{ role: "user", content: "hi" }],
      tools: [weatherTool],
      tool_choice: { type: "function", function: { name: "get_weather" } },
    });
    expect(model.chats.map((c) => c.toolChoice)).toEqual(["required", { name: "get_weather" }]);

    await handle.close();
    const late = await client.chat.completions
      .create({ model: "arl-policy", messages: [{ role: "user", content: "hi" }] })
      .catch((e: unknown) => e);
    expect(late).toBeInstanceOf(APIError);
    expect((late as APIError).status).toBe(410);
    expect((late as APIError).message).toMatch(/this episode has ended/);
    expect(handle.faults.map((f) => f.kind)).toEqual(["wrong_key", "after_end"]);
  });

  it("completes a prompt of token ids, plain and streamed, and refuses a text prompt", async () => {
    const { model, client } = session();
    const response = await client.completions.create({
      model: "arl-policy",
      prompt: [1, 2, 3],
      max_tokens: 3,
      logprobs: 0,
    });
    expect(response.object).toBe("text_completion");
    expect(response.choices[0]?.text).toBe(" 42.");
    expect(response.choices[0]?.finish_reason).toBe("length");
    expect(response.choices[0]?.logprobs).toEqual({ tokens: [" 4", "2", "."], token_logprobs: [-1, -0.5, -0.25] });
    const raw = response as unknown as { prompt_token_ids: number[]; choices: { token_ids: number[] }[] };
    expect(raw.prompt_token_ids).toEqual([1, 2, 3]);
    expect(raw.choices[0]?.token_ids).toEqual([7, 8, 9]);
    expect(model.completions[0]).toEqual({
      prompt: Int32Array.of(1, 2, 3),
      maxTokens: 3,
      stop: [],
      temperature: null,
      topP: null,
      seed: null,
      logprobs: true,
    });

    const stream = await client.completions.create({ model: "arl-policy", prompt: [[4, 5]], stream: true });
    const texts: string[] = [];
    for await (const chunk of stream) texts.push(chunk.choices[0]?.text ?? "");
    expect(texts.join("")).toBe(" 42.");
    expect(model.completions[1]?.prompt).toEqual(Int32Array.of(4, 5));

    const text = await client.completions
      .create({ model: "arl-policy", prompt: "What is 6 x 7?" })
      .catch((e: unknown) => e);
    expect(text).toBeInstanceOf(BadRequestError);
    expect((text as BadRequestError).param).toBe("prompt");
    expect((text as BadRequestError).message).toMatch(/send token ids, or use \/v1\/chat\/completions/);
  });
});
