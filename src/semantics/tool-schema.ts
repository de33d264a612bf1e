// Tool declarations -> JSON Schema 2020-12 in the OpenAI function-calling form, compiled with
// ajv when the spec is checked so that a schema ajv cannot use never reaches a run.
import { Ajv2020 } from "ajv/dist/2020.js";
import type { Tool, ToolParameter } from "./schema/tool.js";

export interface FunctionTool {
  readonly type: "function";
  readonly function: {
    readonly name: string;
    readonly description: string;
    readonly parameters: Record<string, unknown>;
  };
}

const JSON_SCHEMA_2020 = "https://json-schema.org/draft/2020-12/schema";

function parameterSchema(p: ToolParameter): Record<string, unknown> {
  const out: Record<string, unknown> = { type: p.type };
  if (p.description !== undefined) out.description = p.description;
  if (p.enum !== undefined) out.enum = p.enum;
  if (p.minimum !== undefined) out.minimum = p.minimum;
  if (p.maximum !== undefined) out.maximum = p.maximum;
  if (p.min_length !== undefined) out.minLength = p.min_length;
  if (p.max_length !== undefined) out.maxLength = p.max_length;
  if (p.pattern !== undefined) out.pattern = p.pattern;
  if (p.items !== undefined) out.items = parameterSchema(p.items);
  if (p.properties !== undefined) Object.assign(out, objectSchema(p.properties));
  return out;
}

function objectSchema(properties: Record<string, ToolParameter>): Record<string, unknown> {
  const entries = Object.entries(properties);
  return {
    type: "object",
    properties: Object.fromEntries(entries.map(([n, p]) => [n, parameterSchema(p)])),
    required: entries.filter(([, p]) => p.required).map(([n]) => n),
    additionalProperties: false,
  };
}

export function toFunctionTool(name: string, tool: Tool): FunctionTool {
  return {
    type: "function",
    function: {
      name,
      description: tool.description,
      parameters: { $schema: JSON_SCHEMA_2020, ...objectSchema(tool.parameters) },
    },
  };
}

const problemsCache = new Map<string, readonly string[]>();
/** The same answers by the typed tool itself: variants of one content share their typed config, so their tools are the same objects. */
const problemsByTool = new WeakMap<Tool, readonly string[]>();

/**
 * Problems ajv or our own consistency checks find in a tool's parameter schema. Memoised by the
 * schema's content: the same tool is checked once per process, not once per variant and edit.
 */
export function toolSchemaProblems(tool: Tool): readonly string[] {
  const known = problemsByTool.get(tool);
  if (known) return known;
  const key = JSON.stringify(tool);
  let problems = problemsCache.get(key);
  if (!problems) {
    problems = computeProblems(tool);
    if (problemsCache.size > 10_000) problemsCache.clear();
    problemsCache.set(key, problems);
  }
  problemsByTool.set(tool, problems);
  return problems;
}

/** What ajv itself rejects; the schema's own consistency is checked with the spec (schema/tool.ts). */
function computeProblems(tool: Tool): string[] {
  const problems: string[] = [];
  const schema = toFunctionTool("t", tool).function.parameters;
  const ajv = compiler();
  try {
    ajv.compile(schema);
  } catch (error) {
    problems.push((error as Error).message);
  } finally {
    // ajv caches every compiled schema; a long-lived process (the language server) must not grow.
    ajv.removeSchema(schema);
  }
  return problems;
}

let ajv: Ajv2020 | undefined;

function compiler(): Ajv2020 {
  ajv ??= new Ajv2020({ strict: true, allErrors: true });
  return ajv;
}
