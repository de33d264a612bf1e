// The gateway's Responses API driven by the official OpenAI Node SDK (`client.responses`): input
// as a string and as items, instructions, the function-tool round trip, the event stream (raw and
// through the SDK's stream helper), previous_response_id, and refusals as OpenAI errors that
// leave the session's record untouched.
import { BadRequestError } from "openai";
import type { FunctionTool, ResponseInputItem } from "openai/resources/responses/responses";
import { describe, expect, it } from "vitest";
import { sdkSessions } from "./sdk-sessions.js";

const weatherTool: FunctionTool = {
  type: "function",
  name: "get_weather",
  description: "The weather in a city",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  strict: false,
};

const sessions = sdkSessions();
const session = () => sessions.session();

describe("the Responses API with the OpenAI Node SDK", () => {
  it("answers a string input with a message item, the exact ids and usage; instructions are the system message", async () => {
    const { model, client } = session();
    const response = await client.responses.create({
      model: "arl-policy",
      input: "Say hello",
      instructions: "Be brief.",
      max_output_tokens: 32,
      temperature: 0.5,
      store: true,
      include: ["message.output_text.logprobs"],
    });
    expect(response.object).toBe("response");
    expect(response.id).toMatch(/^resp_/);
    expect(response.status).toBe("completed");
    expect(response.output_text).toBe("Hello, world");
    expect(response.output).toHaveLength(1);
    expect(response.output[0]).toMatchObject({ type: "message", role: "assistant", status: "completed" });
    expect(response.usage).toMatchObject({ input_tokens: 5, output_tokens: 4, total_tokens: 9 });
    const raw = response as unknown as {
      prompt_token_ids: number[];
      token_ids: number[];
      arl: { policy_version: number };
    };
    expect(raw.prompt_token_ids).toEqual([100, 101, 102, 103, 104]);
    expect(raw.token_ids).toEqual([10, 11, 12, 13]);
    expect(raw.arl.policy_version).toBe(3);
    const part = response.output[0]?.type === "message" ? response.output[0].content[0] : undefined;
    expect(part?.type === "output_text" ? part.logprobs?.map((t) => [t.token, t.logprob]) : undefined).toEqual([
      ["Hello", -0.25],
      [",", -0.5],
      [" world", -0.75],
      ["<|im_end|>", -1],
    ]);
    expect(model.chats[0]).toEqual({
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Say hello" },
      ],
      tools: [],
      toolChoice: "auto",
      maxTokens: 32,
      stop: [],
      temperature: 0.5,
      topP: null,
      seed: null,
      logprobs: true,
    });
  });

  it("reads tool_choice required and a named function, and echoes them on the response", async () => {
    const { model, client } = session();
    const required = await client.responses.create({
      model: "arl-policy",
      input: "Weather?",
      tools: [weatherTool],
      tool_choice: "required",
    });
    const named = await client.responses.create({
      model: "arl-policy",
      input: "Weather?",
      tools: [weatherTool],
      tool_choice: { type: "function", name: "get_weather" },
    });
    expect([required.tool_choice, named.tool_choice]).toEqual(["required", { type: "function", name: "get_weather" }]);
    expect(model.chats.map((c) => c.toolChoice)).toEqual(["required", { name: "get_weather" }]);
  });

  it("carries a function-tool round trip: a function_call item, then its function_call_output", async () => {
    const { model, client } = session();
    const input: ResponseInputItem[] = [
      { role: "developer", content: "Use tools." },
      { role: "user", content: [{ type: "input_text", text: "Weather in Paris?" }] },
    ];
    const first = await client.responses.create({
      model: "arl-policy",
      input,
      tools: [weatherTool],
      parallel_tool_calls: false,
    });
    expect(first.output).toEqual([
      {
        type: "function_call",
        id: expect.stringMatching(/^fc_/) as unknown,
        call_id: "call_0",
        name: "get_weather",
        arguments: '{"city":"Paris"}',
        status: "completed",
      },
    ]);
    // What the Agents SDK does: the answer's items go back into the input, then the tool's output.
    input.push(...(first.output as ResponseInputItem[]), {
      type: "function_call_output",
      call_id: "call_0",
      output: "sunny, 21 C",
    });
    const second = await client.responses.create({ model: "arl-policy", input, tools: [weatherTool] });
    expect(second.output_text).toBe("It is sunny.");
    expect(model.chats[0]?.tools).toEqual([
      {
        type: "function",
        function: { name: "get_weather", description: "The weather in a city", parameters: weatherTool.parameters },
      },
    ]);
    expect(model.chats[1]?.messages).toEqual([
      { role: "system", content: "Use tools." },
      { role: "user", content: "Weather in Paris?" },
      {
        role: "assistant",
        content: "",
        tool_calls: [{ name: "get_weather", arguments: { city: "Paris" } }],
        toolCallIds: ["call_0"],
      },
      { role: "tool", content: "sunny, 21 C", toolCallId: "call_0" },
    ]);
  });

  it("continues a stored response by previous_response_id, and refuses an id it did not serve", async () => {
    const { model, client } = session();
    const first = await client.responses.create({
      model: "arl-policy",
      input: "Weather in Paris?",
      tools: [weatherTool],
    });
    const second = await client.responses.create({
      model: "arl-policy",
      previous_response_id: first.id,
      input: [{ type: "function_call_output", call_id: "call_0", output: "sunny" }],
      tools: [weatherTool],
    });
    expect(second.output_text).toBe("It is sunny.");
    expect(second.previous_response_id).toBe(first.id);
    expect(model.chats[1]?.messages.map((m) => m.role)).toEqual(["user", "assistant", "tool"]);

    const unknown = await client.responses
      .create({ model: "arl-policy", previous_response_id: "resp_nope", input: "hi" })
      .catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(BadRequestError);
    expect((unknown as BadRequestError).param).toBe("previous_response_id");
    expect((unknown as BadRequestError).code).toBe("previous_response_not_found");
    const unstored = await client.responses.create({ model: "arl-policy", input: "hi", store: false });
    const afterUnstored = await client.responses
      .create({ model: "arl-policy", previous_response_id: unstored.id, input: "again" })
      .catch((e: unknown) => e);
    expect((afterUnstored as BadRequestError).code).toBe("previous_response_not_found");
    expect(model.chats).toHaveLength(3);
  });

  it("streams the Responses events, which the SDK's helper reassembles into the same response", async () => {
    const { client } = session();
    const stream = await client.responses.create({ model: "arl-policy", input: "hi", stream: true });
    const types: string[] = [];
    const deltas: string[] = [];
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === "response.output_text.delta") deltas.push(event.delta);
    }
    expect(deltas).toEqual(["Hello", ",", " world"]);
    expect(types[0]).toBe("response.created");
    expect(types.at(-1)).toBe("response.completed");
    expect(types).toContain("response.output_item.added");
    expect(types).toContain("response.output_item.done");

    const final = await client.responses
      .stream({ model: "arl-policy", input: "weather?", tools: [weatherTool] })
      .finalResponse();
    expect(final.output).toMatchObject([
      { type: "function_call", call_id: "call_0", name: "get_weather", arguments: '{"city":"Paris"}' },
    ]);
    const args: string[] = [];
    const calls = await client.responses.create({
      model: "arl-policy",
      input: "weather?",
      tools: [weatherTool],
      stream: true,
    });
    for await (const event of calls)
      if (event.type === "response.function_call_arguments.delta") args.push(event.delta);
    expect(JSON.parse(args.join(""))).toEqual({ city: "Paris" });
  });

  it("refuses malformed bodies with OpenAI errors naming the value, and the session serves on unchanged", async () => {
    const { model, client, handle } = session();
    const refused = async (body: Record<string, unknown>) => {
      const error = await client.responses.create({ model: "arl-policy", ...body } as never).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(BadRequestError);
      return error as BadRequestError;
    };
    expect((await refused({ input: [{ type: "reasoning", id: "rs_1", summary: [] }] })).param).toBe("input[0].type");
    expect((await refused({ input: 42 })).param).toBe("input");
    expect(
      (await refused({ input: [{ role: "user", content: [{ type: "input_image", image_url: "data:," }] }] })).param,
    ).toBe("input[0].content[0].type");
    expect((await refused({ input: "hi", tools: [{ type: "web_search" }] })).param).toBe("tools[0].type");
    expect((await refused({ input: "hi", tool_choice: { type: "web_search_preview" } })).param).toBe("tool_choice");
    expect((await refused({ input: "hi", max_output_tokens: "many" })).param).toBe("max_output_tokens");
    const orphan = await refused({
      input: [
        { role: "user", content: "hi" },
        { type: "function_call_output", call_id: "call_9", output: "x" },
      ],
    });
    expect(orphan.param).toBe("input[1].call_id");
    expect(orphan.message).toMatch(/no function_call with call_id "call_9"/);
    expect(
      (await refused({ input: [{ type: "function_call", call_id: "c", name: "f", arguments: "{not json" }] })).param,
    ).toBe("input[0].arguments");
    expect(model.chats).toHaveLength(0);
    expect(handle.faults).toEqual([]);
    expect((await client.responses.create({ model: "arl-policy", input: "hi" })).output_text).toBe("Hello, world");
  });
});
