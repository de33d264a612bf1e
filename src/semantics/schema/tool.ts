// `tool NAME { description, parameters { ... } }`: lowered to JSON Schema 2020-12 in the
// OpenAI function-calling form and compiled with ajv at check time.
import * as z from "zod";
import { doc, enumOf, reportDiagnostic } from "./common.js";

export const parameterTypes = ["string", "integer", "number", "boolean", "array", "object"] as const;

/** What other languages call the JSON types (Python, TypeScript, C, Go, YAML users). */
const parameterTypeAliases: Readonly<Record<string, (typeof parameterTypes)[number]>> = {
  int: "integer",
  long: "integer",
  uint: "integer",
  str: "string",
  text: "string",
  char: "string",
  bool: "boolean",
  float: "number",
  double: "number",
  decimal: "number",
  list: "array",
  tuple: "array",
  dict: "object",
  map: "object",
  record: "object",
  struct: "object",
};

export interface ToolParameter {
  type: (typeof parameterTypes)[number];
  description?: string | undefined;
  required: boolean;
  enum?: unknown[] | undefined;
  minimum?: number | undefined;
  maximum?: number | undefined;
  min_length?: number | undefined;
  max_length?: number | undefined;
  pattern?: string | undefined;
  items?: ToolParameter | undefined;
  properties?: Record<string, ToolParameter> | undefined;
}

export const toolParameterSchema: z.ZodType<ToolParameter> = z.lazy(() =>
  z
    .strictObject({
      type: doc(enumOf(parameterTypes, parameterTypeAliases), "JSON type of the argument."),
      description: doc(z.string().optional(), "What the argument means, shown to the model."),
      required: doc(z.boolean().default(true), "Whether a call must give this argument."),
      enum: doc(z.array(z.union([z.string(), z.number(), z.boolean()])).optional(), "The only values allowed."),
      minimum: doc(z.number().optional(), "Smallest allowed number."),
      maximum: doc(z.number().optional(), "Largest allowed number."),
      min_length: doc(z.number().int().nonnegative().optional(), "Shortest allowed string."),
      max_length: doc(z.number().int().nonnegative().optional(), "Longest allowed string."),
      pattern: doc(z.string().optional(), "A regular expression (ECMA-262) the string must match."),
      items: doc(toolParameterSchema.optional(), "For arrays: the schema of each item."),
      properties: doc(
        z.record(z.string(), toolParameterSchema).optional(),
        "For objects: the schema of each property.",
      ),
    })
    .superRefine((p, ctx) => {
      for (const problem of parameterProblems(p))
        reportDiagnostic(
          ctx,
          { code: "invalid-tool-schema", message: problem.message, ...(problem.hint ? { hint: problem.hint } : {}) },
          problem.path,
        );
    }),
);

/**
 * What JSON Schema would accept but cannot mean, in one parameter (its items and properties
 * are parameters checked on their own): each at the field that is wrong, so that every problem
 * of a tool is reported at once, next to its cause.
 */
function parameterProblems(p: ToolParameter): { path: (string | number)[]; message: string; hint?: string }[] {
  const out: { path: (string | number)[]; message: string; hint?: string }[] = [];
  const numeric = p.type === "number" || p.type === "integer";
  const a = p.type === "array" || p.type === "integer" || p.type === "object" ? "an" : "a";
  const appliesTo = (key: keyof ToolParameter, kinds: string, fix: string) => {
    if (p[key] !== undefined)
      out.push({ path: [key], message: `${key} applies to ${kinds}, not to ${a} ${p.type} parameter`, hint: fix });
  };
  if (p.minimum !== undefined && p.maximum !== undefined && p.minimum > p.maximum)
    out.push({ path: ["minimum"], message: `minimum ${p.minimum} is above maximum ${p.maximum}` });
  if (p.min_length !== undefined && p.max_length !== undefined && p.min_length > p.max_length)
    out.push({ path: ["min_length"], message: `min_length ${p.min_length} is above max_length ${p.max_length}` });
  if (!numeric)
    for (const key of ["minimum", "maximum"] as const)
      appliesTo(key, "numbers", "remove it, or make the type number or integer");
  if (p.type !== "string")
    for (const key of ["pattern", "min_length", "max_length"] as const)
      appliesTo(key, "strings", "remove it, or make the type string");
  if (p.type !== "array") appliesTo("items", "arrays", "remove it, or make the type array");
  if (p.type !== "object") appliesTo("properties", "objects", "remove it, or make the type object");
  if (p.type === "array" && p.items === undefined)
    out.push({
      path: ["type"],
      message: "an array parameter needs 'items', the schema of each item",
      hint: "add e.g. items { type: string }",
    });
  if (p.pattern !== undefined) {
    try {
      new RegExp(p.pattern, "u");
    } catch (error) {
      out.push({
        path: ["pattern"],
        message: `the pattern is not a valid regular expression: ${(error as Error).message}`,
      });
    }
  }
  (p.enum ?? []).forEach((v, i) => {
    const ok =
      p.type === "string"
        ? typeof v === "string"
        : numeric
          ? typeof v === "number" && (p.type === "number" || Number.isInteger(v))
          : p.type === "boolean"
            ? typeof v === "boolean"
            : false;
    if (!ok) out.push({ path: ["enum", i], message: `enum value ${JSON.stringify(v)} is not of type ${p.type}` });
  });
  return out;
}

export const toolSchema = z.strictObject({
  description: doc(z.string().min(1), "What the tool does, shown to the model."),
  parameters: doc(z.record(z.string(), toolParameterSchema).default({}), "The tool's arguments, by name."),
  timeout_s: doc(
    z.number().positive().nullable().default(null),
    "A call running longer is stopped and its observation is a timeout error; none: the harness's tool_timeout_s.",
  ),
});

export type Tool = z.output<typeof toolSchema>;
