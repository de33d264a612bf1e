// Reading tool calls out of generated text, per the harness's call format, and checking their
// arguments against the plan's JSON Schemas with ajv. A call that fails either becomes an error
// observation (counted), never an exception.
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import type { ToolCallFormat } from "./trainer-protocol.js";

/** What reading and checking a call needs of an offered tool; the plan's tools (PlanTool) are these. */
export interface OfferedTool {
  readonly name: string;
  /** The OpenAI function-calling definition; `parameters` is the arguments' JSON Schema. */
  readonly definition: { readonly function: { readonly parameters: Readonly<Record<string, unknown>> } };
}

export interface ToolCall {
  readonly name: string;
  readonly arguments: Record<string, unknown>;
}

export type ParsedTurn =
  | {
      readonly kind: "call";
      readonly call: ToolCall;
      /** The turn's text outside the call (function_call formats): an assistant message's content beside its tool_calls. */
      readonly content?: string;
    }
  | { readonly kind: "none" }
  | { readonly kind: "malformed"; readonly error: string };

/** `function_call`: the first call of the turn, written in the model family's `format` (configure's template.tool_call_format). */
export function parseFunctionCall(text: string, format: ToolCallFormat = "hermes"): ParsedTurn {
  switch (format) {
    case "hermes":
      return parseHermes(text);
    case "llama3_json":
      return parseLlama3Json(text);
    case "deepseek_v3":
      return parseDeepSeekV3(text);
  }
}

/**
 * hermes (Qwen): a JSON object `{"name": ..., "arguments": {...}}`, optionally inside
 * `<tool_call>...</tool_call>`; the first one in the turn counts.
 */
function parseHermes(text: string): ParsedTurn {
  const tagged = /<tool_call>([\s\S]*?)(?:<\/tool_call>|$)/.exec(text);
  const body = tagged?.[1] ?? text;
  const start = body.indexOf("{");
  if (start < 0)
    return tagged ? { kind: "malformed", error: "the <tool_call> holds no JSON object" } : { kind: "none" };
  const json = firstJsonObject(body, start);
  if (json === undefined) return { kind: "malformed", error: "the tool call is not complete JSON" };
  const content = tagged ? text.slice(0, tagged.index) : text.slice(0, start);
  return callFromJson(json, "arguments", content);
}

/**
 * llama3_json (Llama 3.1): a bare JSON object `{"name": ..., "parameters": {...}}`
 * ("arguments" accepted too), optionally after `<|python_tag|>`.
 */
function parseLlama3Json(text: string): ParsedTurn {
  const tag = text.indexOf("<|python_tag|>");
  const from = tag < 0 ? 0 : tag + "<|python_tag|>".length;
  const start = text.indexOf("{", from);
  if (start < 0)
    return tag < 0 ? { kind: "none" } : { kind: "malformed", error: "the <|python_tag|> call holds no JSON object" };
  const json = firstJsonObject(text, start);
  if (json === undefined) return { kind: "malformed", error: "the tool call is not complete JSON" };
  return callFromJson(json, "parameters", text.slice(0, tag < 0 ? start : tag));
}

const DS_CALLS_BEGIN = "<｜tool▁calls▁begin｜>";
const DS_CALL_BEGIN = "<｜tool▁call▁begin｜>";
const DS_SEP = "<｜tool▁sep｜>";

/**
 * deepseek_v3: `<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\n` then the
 * arguments in a ```json fence, then `<｜tool▁call▁end｜>`; the first call counts.
 */
function parseDeepSeekV3(text: string): ParsedTurn {
  const begin = text.indexOf(DS_CALL_BEGIN);
  const block = text.indexOf(DS_CALLS_BEGIN);
  if (begin < 0)
    return block < 0
      ? { kind: "none" }
      : { kind: "malformed", error: `the tool calls block holds no ${DS_CALL_BEGIN}` };
  const rest = text.slice(begin + DS_CALL_BEGIN.length);
  const sep = rest.indexOf(DS_SEP);
  if (sep < 0) return { kind: "malformed", error: `the tool call has no ${DS_SEP} between its type and its name` };
  const afterSep = rest.slice(sep + DS_SEP.length);
  const newline = afterSep.indexOf("\n");
  const name = (newline < 0 ? afterSep : afterSep.slice(0, newline)).trim();
  if (name === "" || name.includes("<｜")) return { kind: "malformed", error: 'the tool call has no "name"' };
  const fence = /^```(?:json)?\s*\n?([\s\S]*?)\n?```/.exec(afterSep.slice(newline + 1));
  if (newline < 0 || !fence)
    return { kind: "malformed", error: "the tool call's arguments are not in a ```json block" };
  const args = parseArguments((fence[1] ?? "").trim() || "{}");
  if (!args.ok) return { kind: "malformed", error: args.error };
  return {
    kind: "call",
    call: { name, arguments: args.value },
    content: text.slice(0, block >= 0 && block < begin ? block : begin),
  };
}

/**
 * The text a call in `format` begins with, up to the call's name (`name` undefined) or through the
 * name and the key its arguments follow: what the agent gateway forces for `tool_choice`
 * "required" or a named function (docs/gateway.md#forced-tool-calls). Each is a prefix of what
 * the parser above reads as a call and of the template's own rendering of one (sft.ts callText).
 */
export function callOpening(format: ToolCallFormat, name?: string): string {
  switch (format) {
    case "hermes":
      return name === undefined ? "<tool_call>\n" : `<tool_call>\n{"name": ${JSON.stringify(name)}, "arguments":`;
    case "llama3_json":
      return name === undefined ? '{"name": "' : `{"name": ${JSON.stringify(name)}, "parameters":`;
    case "deepseek_v3":
      return `${DS_CALLS_BEGIN}${DS_CALL_BEGIN}function${DS_SEP}${name === undefined ? "" : `${name}\n\`\`\`json\n`}`;
  }
}

/** A call from its JSON text: `name` and the arguments under `key` (or the other of "arguments"/"parameters"). */
function callFromJson(json: string, key: "arguments" | "parameters", content: string): ParsedTurn {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (error) {
    return { kind: "malformed", error: `the tool call is not valid JSON: ${(error as Error).message}` };
  }
  const v = value as Record<string, unknown>;
  if (typeof v.name !== "string") return { kind: "malformed", error: 'the tool call has no "name"' };
  const other = key === "arguments" ? "parameters" : "arguments";
  const args = argumentsObject(v[key] ?? (key === "parameters" ? v[other] : undefined) ?? {});
  if (!args.ok) return { kind: "malformed", error: args.error };
  return { kind: "call", call: { name: v.name, arguments: args.value }, content };
}

type ArgumentsResult =
  { readonly ok: true; readonly value: Record<string, unknown> } | { readonly ok: false; readonly error: string };

const NOT_AN_OBJECT = 'the tool call\'s "arguments" is not a JSON object';

/** Arguments given as an object, or as a string holding one. */
function argumentsObject(args: unknown): ArgumentsResult {
  if (typeof args === "string") return parseArguments(args);
  if (typeof args !== "object" || args === null || Array.isArray(args)) return { ok: false, error: NOT_AN_OBJECT };
  return { ok: true, value: args as Record<string, unknown> };
}

function parseArguments(json: string): ArgumentsResult {
  let value: unknown;
  try {
    value = JSON.parse(json) as unknown;
  } catch {
    return { ok: false, error: NOT_AN_OBJECT };
  }
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? { ok: true, value: value as Record<string, unknown> }
    : { ok: false, error: NOT_AN_OBJECT };
}

/** The balanced `{...}` starting at `start`, respecting strings; undefined when unbalanced. */
function firstJsonObject(text: string, start: number): string | undefined {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text.charAt(i);
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "{") depth++;
    else if (c === "}") {
      depth--;
      if (depth === 0) return text.slice(start, i + 1);
    }
  }
  return undefined;
}

/**
 * `text_action`: the first line is `tool arg1 arg2 ...`; arguments fill the tool's parameters
 * in declaration order, the last one taking the rest of the line (`put red key box`).
 */
export function parseTextAction(text: string, tools: readonly OfferedTool[]): ParsedTurn {
  const line = text.trim().split(/\r?\n/)[0]?.trim() ?? "";
  if (line === "") return { kind: "none" };
  const [first = "", ...rest] = line.split(/\s+/);
  const name = first.toLowerCase();
  const tool = tools.find((t) => t.name === name);
  if (!tool) return { kind: "call", call: { name, arguments: {} } };
  const properties = Object.keys(
    (tool.definition.function.parameters.properties as Record<string, unknown> | undefined) ?? {},
  );
  const args: Record<string, unknown> = {};
  properties.forEach((p, i) => {
    if (rest.length === 0) return;
    args[p] = i === properties.length - 1 ? rest.splice(0).join(" ") : rest.shift();
  });
  if (rest.length > 0)
    return {
      kind: "malformed",
      error: `too many words for '${name}', which takes ${properties.length === 0 ? "none" : properties.join(", ")}`,
    };
  return { kind: "call", call: { name, arguments: coerce(args, tool) } };
}

/** Text arguments become numbers or booleans where the schema asks for them. */
function coerce(args: Record<string, unknown>, tool: OfferedTool): Record<string, unknown> {
  const props = (tool.definition.function.parameters.properties ?? {}) as Record<string, { type?: string }>;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(args)) {
    const type = props[k]?.type;
    if (
      typeof v === "string" &&
      (type === "number" || type === "integer") &&
      v.trim() !== "" &&
      Number.isFinite(Number(v))
    )
      out[k] = Number(v);
    else if (typeof v === "string" && type === "boolean" && (v === "true" || v === "false")) out[k] = v === "true";
    else out[k] = v;
  }
  return out;
}

export type CallCheck<T extends OfferedTool = OfferedTool> =
  { readonly ok: true; readonly tool: T } | { readonly ok: false; readonly error: string };

/** Validates calls against the offered tools' JSON Schemas (compiled once per tool). */
export class ToolCallValidator {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  private readonly compiled = new WeakMap<OfferedTool, ValidateFunction>();
  /** By the schema's JSON text: one run's validator compiles a schema once, whichever episode offers it. */
  private readonly bySchema = new Map<string, ValidateFunction>();

  /** How many distinct parameter schemas have been compiled. */
  get compiledSchemas(): number {
    return this.bySchema.size;
  }

  check<T extends OfferedTool>(call: ToolCall, offered: readonly T[]): CallCheck<T> {
    const tool = offered.find((t) => t.name === call.name);
    if (!tool)
      return {
        ok: false,
        error: `there is no tool '${call.name}'; available: ${offered.map((t) => t.name).join(", ")}`,
      };
    let validate = this.compiled.get(tool);
    if (!validate) {
      const key = JSON.stringify(tool.definition.function.parameters);
      validate = this.bySchema.get(key) ?? this.ajv.compile(tool.definition.function.parameters);
      this.bySchema.set(key, validate);
      this.compiled.set(tool, validate);
    }
    if (validate(call.arguments)) return { ok: true, tool };
    const problems = (validate.errors ?? []).map(
      (e) =>
        `${e.instancePath ? e.instancePath.slice(1).replace(/\//g, ".") : "arguments"} ${e.message ?? "is invalid"}${e.params && "allowedValues" in e.params ? ` (${(e.params.allowedValues as unknown[]).join(", ")})` : ""}`,
    );
    return { ok: false, error: `invalid arguments for '${call.name}': ${problems.join("; ")}` };
  }
}
