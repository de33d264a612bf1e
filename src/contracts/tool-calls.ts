// Reading tool calls out of generated text, per the harness's call format, and checking their
// arguments against the plan's JSON Schemas with ajv. A call that fails either becomes an error
// observation (counted), never an exception.
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";

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
  | { readonly kind: "call"; readonly call: ToolCall }
  | { readonly kind: "none" }
  | { readonly kind: "malformed"; readonly error: string };

/**
 * `function_call`: a JSON object `{"name": ..., "arguments": {...}}`, optionally inside
 * `<tool_call>...</tool_call>` (the Hermes/Qwen convention); the first one in the turn counts.
 */
export function parseFunctionCall(text: string): ParsedTurn {
  const tagged = /<tool_call>([\s\S]*?)(?:<\/tool_call>|$)/.exec(text);
  const body = tagged?.[1] ?? text;
  const start = body.indexOf("{");
  if (start < 0) return tagged ? { kind: "malformed", error: "the <tool_call> holds no JSON object" } : { kind: "none" };
  const json = firstJsonObject(body, start);
  if (json === undefined) return { kind: "malformed", error: "the tool call is not complete JSON" };
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (error) {
    return { kind: "malformed", error: `the tool call is not valid JSON: ${(error as Error).message}` };
  }
  const v = value as { name?: unknown; arguments?: unknown };
  if (typeof v.name !== "string") return { kind: "malformed", error: 'the tool call has no "name"' };
  let args: unknown = v.arguments ?? {};
  if (typeof args === "string") {
    try {
      args = JSON.parse(args) as unknown;
    } catch {
      return { kind: "malformed", error: 'the tool call\'s "arguments" is not a JSON object' };
    }
  }
  if (typeof args !== "object" || args === null || Array.isArray(args)) return { kind: "malformed", error: 'the tool call\'s "arguments" is not a JSON object' };
  return { kind: "call", call: { name: v.name, arguments: args as Record<string, unknown> } };
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
  const properties = Object.keys((tool.definition.function.parameters.properties as Record<string, unknown> | undefined) ?? {});
  const args: Record<string, unknown> = {};
  properties.forEach((p, i) => {
    if (rest.length === 0) return;
    args[p] = i === properties.length - 1 ? rest.splice(0).join(" ") : rest.shift();
  });
  if (rest.length > 0) return { kind: "malformed", error: `too many words for '${name}', which takes ${properties.length === 0 ? "none" : properties.join(", ")}` };
  return { kind: "call", call: { name, arguments: coerce(args, tool) } };
}

/** Text arguments become numbers or booleans where the schema asks for them. */
function coerce(args: Record<string, unknown>, tool: OfferedTool): Record<string, unknown> {
  const props = (tool.definition.function.parameters.properties ?? {}) as Record<string, { type?: string }>;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(args)) {
    const type = props[k]?.type;
    if (typeof v === "string" && (type === "number" || type === "integer") && v.trim() !== "" && Number.isFinite(Number(v))) out[k] = Number(v);
    else if (typeof v === "string" && type === "boolean" && (v === "true" || v === "false")) out[k] = v === "true";
    else out[k] = v;
  }
  return out;
}

export type CallCheck<T extends OfferedTool = OfferedTool> = { readonly ok: true; readonly tool: T } | { readonly ok: false; readonly error: string };

/** Validates calls against the offered tools' JSON Schemas (compiled once per tool). */
export class ToolCallValidator {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  private readonly compiled = new Map<OfferedTool, ValidateFunction>();

  check<T extends OfferedTool>(call: ToolCall, offered: readonly T[]): CallCheck<T> {
    const tool = offered.find((t) => t.name === call.name);
    if (!tool) return { ok: false, error: `there is no tool '${call.name}'; available: ${offered.map((t) => t.name).join(", ")}` };
    let validate = this.compiled.get(tool);
    if (!validate) {
      validate = this.ajv.compile(tool.definition.function.parameters);
      this.compiled.set(tool, validate);
    }
    if (validate(call.arguments)) return { ok: true, tool };
    const problems = (validate.errors ?? []).map((e) => `${e.instancePath ? e.instancePath.slice(1).replace(/\//g, ".") : "arguments"} ${e.message ?? "is invalid"}${e.params && "allowedValues" in e.params ? ` (${(e.params.allowedValues as unknown[]).join(", ")})` : ""}`);
    return { ok: false, error: `invalid arguments for '${call.name}': ${problems.join("; ")}` };
  }
}
