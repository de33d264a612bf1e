// The JSON Schema of the Anthropic Messages request subset the gateway accepts
// (docs/gateway.md#the-anthropic-messages-api), checked with the same ajv and `hint` keyword as
// chat's (wire-schema.ts); refusals are answered in Anthropic's error shape (api-errors.ts).
import { bodyChecker } from "./openai-wire-schema.js";

interface TextBlock {
  readonly type: "text";
  readonly text: string;
}

export type AnthropicBlock =
  | TextBlock
  | {
      readonly type: "tool_use";
      readonly id: string;
      readonly name: string;
      readonly input: Readonly<Record<string, unknown>>;
    }
  | {
      readonly type: "tool_result";
      readonly tool_use_id: string;
      readonly content?: string | readonly TextBlock[];
      readonly is_error?: boolean;
    };

export interface AnthropicMessage {
  readonly role: "user" | "assistant";
  readonly content: string | readonly AnthropicBlock[];
}

export interface AnthropicTool {
  readonly name: string;
  readonly description?: string;
  readonly input_schema: Readonly<Record<string, unknown>>;
}

/** A `POST /v1/messages` body that passed the schema. */
export interface AnthropicBody {
  readonly model: string;
  readonly max_tokens: number;
  readonly messages: readonly AnthropicMessage[];
  readonly system?: string | readonly TextBlock[];
  readonly tools?: readonly AnthropicTool[];
  readonly tool_choice?: { readonly type: "auto" | "none" | "any" } | { readonly type: "tool"; readonly name: string };
  readonly stop_sequences?: readonly string[];
  readonly temperature?: number;
  readonly top_p?: number;
  readonly stream?: boolean;
}

/** Fields Anthropic's SDKs send or echo on a block that change nothing here. */
const cacheControl = { anyOf: [{ type: "object" }, { type: "null" }] };

const textBlock = {
  type: "object",
  required: ["type", "text"],
  properties: {
    type: { const: "text" },
    text: { type: "string" },
    cache_control: cacheControl,
    citations: { anyOf: [{ type: "null" }, { type: "array", maxItems: 0 }] },
  },
  additionalProperties: false,
};

const isType = (type: string) => ({ required: ["type"], properties: { type: { const: type } } });

const block = (types: readonly string[], hint: string) => ({
  type: "object",
  required: ["type"],
  properties: { type: { enum: types, hint } },
  allOf: [
    { if: isType("text"), then: textBlock },
    {
      if: isType("tool_use"),
      then: {
        required: ["type", "id", "name", "input"],
        properties: {
          type: { const: "tool_use" },
          id: { type: "string", minLength: 1 },
          name: { type: "string", minLength: 1 },
          input: { type: "object" },
          cache_control: cacheControl,
        },
        additionalProperties: false,
      },
    },
    {
      if: isType("tool_result"),
      then: {
        required: ["type", "tool_use_id"],
        properties: {
          type: { const: "tool_result" },
          tool_use_id: { type: "string", minLength: 1 },
          content: {
            anyOf: [{ type: "string" }, { type: "array", items: textBlock }],
            hint: "must be a string or a list of text blocks: images and documents are not supported",
          },
          is_error: { type: "boolean" },
          cache_control: cacheControl,
        },
        additionalProperties: false,
      },
    },
  ],
});

const NO_THINKING =
  "thinking blocks are not served: the model's reasoning is in its text, as its chat template gives it";

const message = {
  type: "object",
  required: ["role", "content"],
  properties: {
    role: { enum: ["user", "assistant"], hint: 'role must be user or assistant (the system prompt goes in "system")' },
  },
  allOf: [
    {
      if: { required: ["role"], properties: { role: { const: "user" } } },
      then: {
        properties: {
          role: {},
          content: {
            anyOf: [
              { type: "string" },
              {
                type: "array",
                minItems: 1,
                items: block(
                  ["text", "tool_result"],
                  "a user message holds text and tool_result blocks: images, documents and search results are not supported",
                ),
              },
            ],
          },
        },
        additionalProperties: false,
      },
    },
    {
      if: { required: ["role"], properties: { role: { const: "assistant" } } },
      then: {
        properties: {
          role: {},
          content: {
            anyOf: [
              { type: "string" },
              {
                type: "array",
                items: block(
                  ["text", "tool_use"],
                  `an assistant message holds text and tool_use blocks (${NO_THINKING})`,
                ),
              },
            ],
          },
        },
        additionalProperties: false,
      },
    },
  ],
};

const tool = {
  type: "object",
  required: ["name", "input_schema"],
  properties: {
    type: {
      const: "custom",
      hint: "only client tools with an input_schema are supported: server tools (web search, code execution, bash, text editor) are not",
    },
    name: {
      type: "string",
      pattern: "^[A-Za-z0-9_-]{1,64}$",
      hint: "must be 1 to 64 letters, digits, underscores or dashes",
    },
    description: { type: "string" },
    input_schema: { type: "object" },
    cache_control: cacheControl,
    strict: { type: "boolean" },
  },
  additionalProperties: false,
};

const anthropicSchema = {
  type: "object",
  required: ["model", "max_tokens", "messages"],
  properties: {
    model: { type: "string" },
    max_tokens: { type: "integer", minimum: 1 },
    messages: { type: "array", minItems: 1, items: message },
    system: {
      anyOf: [{ type: "string" }, { type: "array", items: textBlock }],
      hint: "must be a string or a list of text blocks",
    },
    tools: { type: "array", items: tool },
    tool_choice: {
      type: "object",
      required: ["type"],
      properties: {
        type: { enum: ["auto", "none", "any", "tool"], hint: "must be auto, none, any or tool" },
        name: { type: "string", minLength: 1 },
        disable_parallel_tool_use: { type: "boolean" },
      },
      if: { properties: { type: { const: "tool" } } },
      then: { required: ["name"], properties: { name: { type: "string" } } },
      additionalProperties: false,
    },
    stop_sequences: {
      type: "array",
      items: { type: "string", minLength: 1 },
      hint: "must be a list of non-empty strings",
    },
    temperature: { type: "number", minimum: 0, maximum: 1 },
    top_p: { type: "number", exclusiveMinimum: 0, maximum: 1 },
    top_k: { type: "integer", minimum: 0 },
    stream: { type: "boolean" },
    thinking: {
      type: "object",
      required: ["type"],
      properties: { type: { const: "disabled", hint: `extended thinking is not supported (${NO_THINKING})` } },
      additionalProperties: false,
    },
    metadata: { type: "object" },
    service_tier: { type: "string" },
  },
  additionalProperties: false,
};

/** The body as a Messages request, or a GatewayError (400) naming the first offending value. */
export const checkAnthropicBody = bodyChecker<AnthropicBody>(
  anthropicSchema,
  "docs/gateway.md#the-anthropic-messages-api",
);
