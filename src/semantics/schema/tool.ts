// `tool NAME { description, parameters { ... } }`: lowered to JSON Schema 2020-12 in the
// OpenAI function-calling form and compiled with ajv at check time.
import * as z from "zod";
import { doc, enumOf } from "./common.js";

export const parameterTypes = ["string", "integer", "number", "boolean", "array", "object"] as const;

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
  z.strictObject({
    type: doc(enumOf(parameterTypes), "JSON type of the argument."),
    description: doc(z.string().optional(), "What the argument means, shown to the model."),
    required: doc(z.boolean().default(true), "Whether a call must give this argument."),
    enum: doc(z.array(z.union([z.string(), z.number(), z.boolean()])).optional(), "The only values allowed."),
    minimum: doc(z.number().optional(), "Smallest allowed number."),
    maximum: doc(z.number().optional(), "Largest allowed number."),
    min_length: doc(z.number().int().nonnegative().optional(), "Shortest allowed string."),
    max_length: doc(z.number().int().nonnegative().optional(), "Longest allowed string."),
    pattern: doc(z.string().optional(), "A regular expression (ECMA-262) the string must match."),
    items: doc(toolParameterSchema.optional(), "For arrays: the schema of each item."),
    properties: doc(z.record(z.string(), toolParameterSchema).optional(), "For objects: the schema of each property."),
  }),
);

export const toolSchema = z.strictObject({
  description: doc(z.string().min(1), "What the tool does, shown to the model."),
  parameters: doc(z.record(z.string(), toolParameterSchema).default({}), "The tool's arguments, by name."),
  timeout_s: doc(
    z.number().positive().nullable().default(null),
    "A call running longer is stopped and its observation is a timeout error; none: the harness's tool_timeout_s.",
  ),
});

export type Tool = z.output<typeof toolSchema>;
