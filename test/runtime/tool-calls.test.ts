import { describe, expect, it } from "vitest";
import { parseFunctionCall, parseTextAction, ToolCallValidator } from "../../src/contracts/tool-calls.js";
import type { PlanTool } from "../../src/plan/schema.js";

function tool(
  name: string,
  properties: Record<string, unknown>,
  required: string[] = Object.keys(properties),
): PlanTool {
  return {
    name,
    env: "quest",
    timeout_s: 30,
    definition: {
      type: "function",
      function: {
        name,
        description: name,
        parameters: {
          $schema: "https://json-schema.org/draft/2020-12/schema",
          type: "object",
          properties,
          required,
          additionalProperties: false,
        },
      },
    },
  };
}

const go = tool("go", { direction: { type: "string", enum: ["north", "south", "east", "west"] } });
const put = tool("put", { object: { type: "string" }, target: { type: "string" } });
const wait = tool("wait", { turns: { type: "integer", minimum: 1 } });
const look = tool("look", {});

describe("function_call format", () => {
  it("reads a tagged call, a bare JSON call and string-encoded arguments", () => {
    expect(
      parseFunctionCall('I will run them.\n<tool_call>{"name": "run_tests", "arguments": {}}</tool_call>'),
    ).toEqual({ kind: "call", call: { name: "run_tests", arguments: {} }, content: "I will run them.\n" });
    expect(parseFunctionCall('{"name":"write_code","arguments":{"code":"return {a: 1}"}} trailing')).toEqual({
      kind: "call",
      call: { name: "write_code", arguments: { code: "return {a: 1}" } },
      content: "",
    });
    expect(parseFunctionCall('{"name":"q","arguments":"{\\"sql\\":\\"select 1\\"}"}')).toMatchObject({
      kind: "call",
      call: { name: "q", arguments: { sql: "select 1" } },
    });
  });

  it("says what is wrong with a malformed call, and reports none when there is no call", () => {
    expect(parseFunctionCall('<tool_call>{"name": "x", </tool_call>')).toMatchObject({ kind: "malformed" });
    expect(parseFunctionCall('{"arguments": {}}')).toEqual({ kind: "malformed", error: 'the tool call has no "name"' });
    expect(parseFunctionCall("just thinking out loud")).toEqual({ kind: "none" });
  });
});

describe("llama3_json call format", () => {
  it("reads a bare object with parameters (or arguments), after <|python_tag|> or not", () => {
    expect(parseFunctionCall('{"name": "go", "parameters": {"direction": "north"}}', "llama3_json")).toEqual({
      kind: "call",
      call: { name: "go", arguments: { direction: "north" } },
      content: "",
    });
    expect(
      parseFunctionCall(
        'Going.<|python_tag|>{"name": "go", "arguments": {"direction": "east"}}<|eom_id|>',
        "llama3_json",
      ),
    ).toEqual({ kind: "call", call: { name: "go", arguments: { direction: "east" } }, content: "Going." });
    expect(parseFunctionCall('{"name": "look", "parameters": "{}"}', "llama3_json")).toMatchObject({
      kind: "call",
      call: { name: "look", arguments: {} },
    });
  });

  it("gives the counted error for malformed calls and none without a call", () => {
    expect(parseFunctionCall('{"name": "go", "parameters": {"direction": ', "llama3_json")).toEqual({
      kind: "malformed",
      error: "the tool call is not complete JSON",
    });
    expect(parseFunctionCall('{"parameters": {}}', "llama3_json")).toEqual({
      kind: "malformed",
      error: 'the tool call has no "name"',
    });
    expect(parseFunctionCall('{"name": "go", "parameters": [1]}', "llama3_json")).toEqual({
      kind: "malformed",
      error: 'the tool call\'s "arguments" is not a JSON object',
    });
    expect(parseFunctionCall("<|python_tag|>go north", "llama3_json")).toEqual({
      kind: "malformed",
      error: "the <|python_tag|> call holds no JSON object",
    });
    expect(parseFunctionCall("I am not sure yet", "llama3_json")).toEqual({ kind: "none" });
  });
});

describe("deepseek_v3 call format", () => {
  const call = (name: string, args: string) =>
    `<｜tool▁call▁begin｜>function<｜tool▁sep｜>${name}\n\`\`\`json\n${args}\n\`\`\`<｜tool▁call▁end｜>`;
  it("reads the first call of the calls block, with the text before it as content", () => {
    const text = `Let me look.<｜tool▁calls▁begin｜>${call("go", '{"direction": "west"}')}${call("look", "{}")}<｜tool▁calls▁end｜>`;
    expect(parseFunctionCall(text, "deepseek_v3")).toEqual({
      kind: "call",
      call: { name: "go", arguments: { direction: "west" } },
      content: "Let me look.",
    });
    expect(parseFunctionCall(`<｜tool▁calls▁begin｜>${call("look", "")}`, "deepseek_v3")).toMatchObject({
      kind: "call",
      call: { name: "look", arguments: {} },
    });
  });

  it("gives the counted error for malformed calls and none without a call", () => {
    expect(parseFunctionCall("<｜tool▁calls▁begin｜>go north", "deepseek_v3")).toEqual({
      kind: "malformed",
      error: "the tool calls block holds no <｜tool▁call▁begin｜>",
    });
    expect(parseFunctionCall("<｜tool▁call▁begin｜>function go\n```json\n{}\n```", "deepseek_v3")).toEqual({
      kind: "malformed",
      error: "the tool call has no <｜tool▁sep｜> between its type and its name",
    });
    expect(parseFunctionCall("<｜tool▁call▁begin｜>function<｜tool▁sep｜>\n```json\n{}\n```", "deepseek_v3")).toEqual({
      kind: "malformed",
      error: 'the tool call has no "name"',
    });
    expect(
      parseFunctionCall('<｜tool▁call▁begin｜>function<｜tool▁sep｜>go\n{"direction": "up"}', "deepseek_v3"),
    ).toEqual({ kind: "malformed", error: "the tool call's arguments are not in a ```json block" });
    expect(parseFunctionCall(`<｜tool▁calls▁begin｜>${call("go", '{"direction": ')}`, "deepseek_v3")).toEqual({
      kind: "malformed",
      error: 'the tool call\'s "arguments" is not a JSON object',
    });
    expect(parseFunctionCall('{"name": "go", "arguments": {}}', "deepseek_v3")).toEqual({ kind: "none" });
  });
});

describe("text_action format", () => {
  it("fills parameters in order, the last taking the rest of the line, and coerces numbers", () => {
    expect(parseTextAction("go north\nmore text", [go])).toEqual({
      kind: "call",
      call: { name: "go", arguments: { direction: "north" } },
    });
    expect(parseTextAction("put red key wooden box", [put])).toEqual({
      kind: "call",
      call: { name: "put", arguments: { object: "red", target: "key wooden box" } },
    });
    expect(parseTextAction("wait 3", [wait])).toEqual({
      kind: "call",
      call: { name: "wait", arguments: { turns: 3 } },
    });
    expect(parseTextAction("look around", [look])).toMatchObject({ kind: "malformed" });
  });
});

describe("argument validation", () => {
  const validator = new ToolCallValidator();
  it("accepts a valid call and explains an invalid one", () => {
    expect(validator.check({ name: "go", arguments: { direction: "north" } }, [go])).toMatchObject({ ok: true });
    expect(validator.check({ name: "go", arguments: { direction: "up" } }, [go])).toEqual({
      ok: false,
      error:
        "invalid arguments for 'go': direction must be equal to one of the allowed values (north, south, east, west)",
    });
    expect(validator.check({ name: "go", arguments: {} }, [go])).toMatchObject({
      ok: false,
      error: expect.stringContaining("must have required property 'direction'"),
    });
    expect(validator.check({ name: "fly", arguments: {} }, [go, look])).toEqual({
      ok: false,
      error: "there is no tool 'fly'; available: go, look",
    });
  });
});
