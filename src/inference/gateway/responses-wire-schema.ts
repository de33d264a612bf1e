// The JSON Schema of the OpenAI Responses request subset the gateway accepts
// (docs/gateway.md#the-responses-api), checked with the same ajv and `hint` keyword as chat's
// (wire-schema.ts): fields agent frameworks send that change nothing are accepted and ignored;
// one that would change the answer is refused with its reason and JSON path.
import { bodyChecker } from "./openai-wire-schema.js";

interface TextPart {
  readonly type: "input_text" | "output_text";
  readonly text: string;
}

export type ResponsesInputItem =
  | {
      readonly type?: "message";
      readonly role: "system" | "developer" | "user" | "assistant";
      readonly content: string | readonly TextPart[];
    }
  | { readonly type: "function_call"; readonly call_id: string; readonly name: string; readonly arguments: string }
  | { readonly type: "function_call_output"; readonly call_id: string; readonly output: string | readonly TextPart[] };

export interface ResponsesFunctionTool {
  readonly type: "function";
  readonly name: string;
  readonly description?: string | null;
  readonly parameters?: Readonly<Record<string, unknown>> | null;
  readonly strict?: boolean | null;
}

/** A `POST /v1/responses` body that passed the schema. */
export interface ResponsesBody {
  readonly model?: string;
  readonly input: string | readonly ResponsesInputItem[];
  readonly instructions?: string | null;
  readonly tools?: readonly ResponsesFunctionTool[] | null;
  readonly tool_choice?: "auto" | "none" | "required" | { readonly type: "function"; readonly name: string } | null;
  readonly max_output_tokens?: number | null;
  readonly temperature?: number | null;
  readonly top_p?: number | null;
  readonly stream?: boolean | null;
  readonly previous_response_id?: string | null;
  readonly store?: boolean | null;
  readonly include?: readonly string[] | null;
  readonly parallel_tool_calls?: boolean | null;
  readonly metadata?: Readonly<Record<string, string>> | null;
  readonly user?: string;
  readonly truncation?: "disabled" | null;
}

const nullable = (schema: Record<string, unknown>) => ({ anyOf: [schema, { type: "null" }] });

const textPart = {
  type: "object",
  required: ["type", "text"],
  properties: {
    type: {
      enum: ["input_text", "output_text"],
      hint: "only text content parts (input_text, output_text) are supported: images, files and refusals are not",
    },
    text: { type: "string" },
    annotations: { type: "array", maxItems: 0 },
    logprobs: { type: "array" },
  },
  additionalProperties: false,
};

const content = {
  anyOf: [{ type: "string" }, { type: "array", items: textPart }],
  hint: 'must be a string or a list of text parts ({"type": "input_text", "text": ...})',
};

/** Fields an SDK echoes back on an item it got in an answer, which carry nothing. */
const echoed = {
  id: nullable({ type: "string" }),
  status: nullable({ enum: ["in_progress", "completed", "incomplete"] }),
};

const messageItem = {
  required: ["role", "content"],
  properties: {
    type: { const: "message" },
    role: {
      enum: ["system", "developer", "user", "assistant"],
      hint: "role must be one of system, developer, user, assistant",
    },
    content,
    ...echoed,
  },
  additionalProperties: false,
};

const functionCallItem = {
  required: ["type", "call_id", "name", "arguments"],
  properties: {
    type: { const: "function_call" },
    call_id: { type: "string", minLength: 1 },
    name: { type: "string", minLength: 1 },
    arguments: { type: "string" },
    ...echoed,
  },
  additionalProperties: false,
};

const functionCallOutputItem = {
  required: ["type", "call_id", "output"],
  properties: {
    type: { const: "function_call_output" },
    call_id: { type: "string", minLength: 1 },
    output: content,
    ...echoed,
  },
  additionalProperties: false,
};

const isType = (type: string) => ({ required: ["type"], properties: { type: { const: type } } });

const inputItem = {
  type: "object",
  properties: {
    type: {
      enum: ["message", "function_call", "function_call_output"],
      hint: "the gateway accepts input items of type message, function_call and function_call_output: reasoning, item references and built-in tool calls are not supported",
    },
  },
  allOf: [
    // A message may come without its type (OpenAI's "easy input message").
    { if: { not: { required: ["type"], properties: { type: {} } } }, then: messageItem },
    { if: isType("message"), then: messageItem },
    { if: isType("function_call"), then: functionCallItem },
    { if: isType("function_call_output"), then: functionCallOutputItem },
  ],
};

const functionTool = {
  type: "object",
  required: ["type", "name"],
  properties: {
    type: {
      const: "function",
      hint: 'only function tools are supported ({"type": "function", "name", "parameters"}): built-in tools (web search, file search, computer use) are not',
    },
    name: {
      type: "string",
      pattern: "^[A-Za-z0-9_-]{1,64}$",
      hint: "must be 1 to 64 letters, digits, underscores or dashes",
    },
    description: nullable({ type: "string" }),
    parameters: nullable({ type: "object" }),
    strict: nullable({ type: "boolean" }),
  },
  additionalProperties: false,
};

const NOT_STORED_STATE =
  "is not supported: the gateway keeps no server-side conversations beyond previous_response_id (send the items as input)";

const responsesSchema = {
  type: "object",
  required: ["input"],
  properties: {
    model: { type: "string" },
    input: {
      anyOf: [{ type: "string" }, { type: "array", minItems: 1, items: inputItem }],
      hint: "must be a string or a non-empty list of input items",
    },
    instructions: nullable({ type: "string" }),
    tools: nullable({ type: "array", items: functionTool }),
    tool_choice: {
      anyOf: [
        { enum: ["auto", "none", "required", null] },
        {
          type: "object",
          required: ["type", "name"],
          properties: { type: { const: "function" }, name: { type: "string", minLength: 1 } },
          additionalProperties: false,
        },
      ],
      hint: 'must be "auto", "none", "required" or {"type": "function", "name": ...}: allowed_tools, hosted and custom tools are not supported',
    },
    parallel_tool_calls: nullable({ type: "boolean" }),
    max_output_tokens: nullable({ type: "integer", minimum: 1 }),
    temperature: nullable({ type: "number", minimum: 0, maximum: 2 }),
    top_p: nullable({ type: "number", exclusiveMinimum: 0, maximum: 1 }),
    top_logprobs: nullable({
      const: 0,
      hint: 'must be 0: only the generated tokens\' own log-probs are available (include: ["message.output_text.logprobs"])',
    }),
    stream: nullable({ type: "boolean" }),
    stream_options: nullable({
      type: "object",
      properties: { include_obfuscation: nullable({ type: "boolean" }) },
      additionalProperties: false,
    }),
    previous_response_id: nullable({ type: "string", minLength: 1 }),
    store: nullable({ type: "boolean" }),
    include: nullable({
      type: "array",
      items: {
        enum: ["message.output_text.logprobs", "reasoning.encrypted_content"],
        hint: 'only "message.output_text.logprobs" adds to the answer (reasoning items are never produced)',
      },
    }),
    text: nullable({
      type: "object",
      properties: {
        format: {
          type: "object",
          required: ["type"],
          properties: {
            type: {
              const: "text",
              hint: 'must be "text": structured output (json_schema, json_object) is not supported; ask for JSON in the prompt and parse it',
            },
          },
          additionalProperties: false,
        },
        verbosity: { type: "null" },
      },
      additionalProperties: false,
    }),
    reasoning: {
      type: "null",
      hint: "reasoning settings are not supported: the model reasons as its template and the policy do",
    },
    truncation: {
      enum: ["disabled", null],
      hint: 'must be "disabled": the gateway never drops items from a context (a harness that summarises sends the shorter history itself)',
    },
    background: nullable({ const: false, hint: "background responses are not supported" }),
    conversation: { type: "null", hint: NOT_STORED_STATE },
    metadata: nullable({ type: "object" }),
    user: { type: "string" },
    service_tier: nullable({ type: "string" }),
    prompt_cache_key: nullable({ type: "string" }),
    safety_identifier: nullable({ type: "string" }),
  },
  additionalProperties: false,
};

/** The body as a Responses request, or a GatewayError (400) naming the first offending value. */
export const checkResponsesBody = bodyChecker<ResponsesBody>(responsesSchema, "docs/gateway.md#the-responses-api");
