// The JSON Schemas of the OpenAI request subset the gateway accepts (docs/gateway.md#errors-and-limits),
// checked with ajv. Fields real SDKs and harnesses send that do not change the answer are
// accepted and ignored; a field that would change the answer and is not supported is refused
// with a `hint` (an annotation keyword of ours) saying why and what to do, and its JSON path.
import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import { GatewayError } from "./contract.js";

/** A text part of a message's content (the only kind accepted). */
interface TextPart {
  readonly type: "text";
  readonly text: string;
}

type Content = string | readonly TextPart[];

interface WireToolCall {
  readonly id: string;
  readonly type: "function";
  readonly function: { readonly name: string; readonly arguments: string };
}

export type WireMessage =
  | { readonly role: "system" | "developer" | "user"; readonly content: Content }
  | {
      readonly role: "assistant";
      readonly content?: Content | null;
      readonly tool_calls?: readonly WireToolCall[] | null;
    }
  | { readonly role: "tool"; readonly content: Content; readonly tool_call_id: string };

interface SamplingFields {
  readonly model?: string;
  readonly temperature?: number | null;
  readonly top_p?: number | null;
  readonly max_tokens?: number | null;
  readonly stop?: string | readonly string[] | null;
  readonly seed?: number | null;
  readonly stream?: boolean | null;
  readonly stream_options?: { readonly include_usage?: boolean | null } | null;
}

/** A `POST /v1/chat/completions` body that passed the schema. */
export interface ChatBody extends SamplingFields {
  readonly messages: readonly WireMessage[];
  readonly tools?: readonly unknown[] | null;
  readonly tool_choice?:
    "auto" | "none" | "required" | { readonly type: "function"; readonly function: { readonly name: string } } | null;
  readonly max_completion_tokens?: number | null;
  readonly logprobs?: boolean | null;
}

/** A `POST /v1/completions` body that passed the schema. */
export interface CompletionBody extends SamplingFields {
  readonly prompt: readonly number[] | readonly [readonly number[]];
  readonly logprobs?: number | null;
}

const nullable = (schema: Record<string, unknown>) => ({ anyOf: [schema, { type: "null" }] });

const ONE_CHOICE =
  "must be 1: the gateway serves one choice per call (send several requests for several samples; while training, the plan's group size decides how many episodes share a task)";
const NO_PENALTY = "must be 0: sampling penalties are not supported (the plan's sampling decides while training)";
const NO_LOGIT_BIAS = "must be empty: logit_bias is not supported (it would change the policy's distribution)";

/** Fields of both endpoints: sampling, streaming and the ones accepted and ignored. */
const commonFields = {
  model: { type: "string" },
  temperature: nullable({ type: "number", minimum: 0, maximum: 2 }),
  top_p: nullable({ type: "number", exclusiveMinimum: 0, maximum: 1 }),
  max_tokens: nullable({ type: "integer", minimum: 1 }),
  n: nullable({ const: 1, hint: ONE_CHOICE }),
  stop: {
    anyOf: [
      { type: "string", minLength: 1 },
      { type: "array", maxItems: 4, items: { type: "string", minLength: 1 } },
      { type: "null" },
    ],
    hint: "must be a non-empty string or a list of at most 4 non-empty strings",
  },
  seed: nullable({ type: "integer" }),
  stream: nullable({ type: "boolean" }),
  stream_options: nullable({
    type: "object",
    properties: { include_usage: nullable({ type: "boolean" }), include_obfuscation: nullable({ type: "boolean" }) },
    additionalProperties: false,
  }),
  frequency_penalty: nullable({ const: 0, hint: NO_PENALTY }),
  presence_penalty: nullable({ const: 0, hint: NO_PENALTY }),
  logit_bias: nullable({ type: "object", maxProperties: 0, hint: NO_LOGIT_BIAS }),
  user: { type: "string" },
  metadata: nullable({ type: "object" }),
  store: nullable({ type: "boolean" }),
  service_tier: nullable({ type: "string" }),
  prompt_cache_key: nullable({ type: "string" }),
  safety_identifier: nullable({ type: "string" }),
  // vLLM's flag for the ids, which the gateway always returns.
  return_token_ids: nullable({ type: "boolean" }),
};

const textPart = {
  type: "object",
  required: ["type", "text"],
  properties: {
    type: { const: "text", hint: "only text content parts are supported: images, audio and files are not (send text)" },
    text: { type: "string" },
  },
  additionalProperties: false,
};

const content = {
  anyOf: [{ type: "string" }, { type: "array", items: textPart }],
  hint: 'must be a string or a list of text parts ({"type": "text", "text": ...})',
};

const toolCall = {
  type: "object",
  required: ["id", "type", "function"],
  properties: {
    id: { type: "string", minLength: 1 },
    type: { const: "function", hint: "only function tool calls are supported" },
    function: {
      type: "object",
      required: ["name", "arguments"],
      properties: { name: { type: "string", minLength: 1 }, arguments: { type: "string" } },
      additionalProperties: false,
    },
  },
  additionalProperties: false,
};

/** Message fields SDKs echo back (a response message appended to the history) that carry nothing. */
const echoedNulls = {
  refusal: { type: "null" },
  audio: { type: "null" },
  function_call: { type: "null" },
  annotations: { type: "array" },
};

const message = {
  type: "object",
  required: ["role"],
  properties: { role: { type: "string" } },
  discriminator: { propertyName: "role" },
  hint: "role must be one of system, developer, user, assistant, tool",
  oneOf: [
    {
      required: ["content"],
      properties: { role: { enum: ["system", "developer", "user"] }, content, name: { type: "string" } },
      additionalProperties: false,
    },
    {
      properties: {
        role: { const: "assistant" },
        content: {
          anyOf: [...content.anyOf, { type: "null" }],
          hint: "must be a string, a list of text parts, or null with tool_calls",
        },
        tool_calls: nullable({ type: "array", items: toolCall }),
        name: { type: "string" },
        ...echoedNulls,
      },
      additionalProperties: false,
    },
    {
      required: ["content", "tool_call_id"],
      properties: {
        role: { const: "tool" },
        content,
        tool_call_id: { type: "string", minLength: 1 },
        name: { type: "string" },
      },
      additionalProperties: false,
    },
  ],
};

const tool = {
  type: "object",
  required: ["type", "function"],
  properties: {
    type: { const: "function", hint: 'only function tools are supported ({"type": "function", "function": {...}})' },
    function: {
      type: "object",
      required: ["name"],
      properties: {
        name: {
          type: "string",
          pattern: "^[A-Za-z0-9_-]{1,64}$",
          hint: "must be 1 to 64 letters, digits, underscores or dashes",
        },
        description: { type: "string" },
        parameters: { type: "object" },
        strict: nullable({ type: "boolean" }),
      },
      additionalProperties: false,
    },
  },
  additionalProperties: false,
};

const chatSchema = {
  type: "object",
  required: ["messages"],
  properties: {
    ...commonFields,
    messages: { type: "array", minItems: 1, items: message },
    tools: nullable({ type: "array", items: tool }),
    tool_choice: {
      anyOf: [
        { enum: ["auto", "none", "required", null] },
        {
          type: "object",
          required: ["type", "function"],
          properties: {
            type: { const: "function" },
            function: {
              type: "object",
              required: ["name"],
              properties: { name: { type: "string", minLength: 1 } },
              additionalProperties: false,
            },
          },
          additionalProperties: false,
        },
      ],
      hint: 'must be "auto", "none", "required" or {"type": "function", "function": {"name": ...}}: allowed_tools and custom tools are not supported',
    },
    parallel_tool_calls: nullable({ type: "boolean" }),
    max_completion_tokens: nullable({ type: "integer", minimum: 1 }),
    logprobs: nullable({ type: "boolean" }),
    top_logprobs: nullable({
      const: 0,
      hint: "must be 0: only the generated tokens' own log-probs are available (logprobs: true)",
    }),
    response_format: {
      anyOf: [
        { type: "object", required: ["type"], properties: { type: { const: "text" } }, additionalProperties: false },
        { type: "null" },
      ],
      hint: 'must be {"type": "text"}: structured output (json_object, json_schema) is not supported; ask for JSON in the prompt and parse it',
    },
    modalities: nullable({ type: "array", items: { const: "text" }, hint: "only text output is supported" }),
    audio: { type: "null", hint: "audio output is not supported" },
  },
  additionalProperties: false,
};

const tokenIds = { type: "array", minItems: 1, items: { type: "integer", minimum: 0, maximum: 2147483647 } };

const completionSchema = {
  type: "object",
  required: ["prompt"],
  properties: {
    ...commonFields,
    prompt: {
      anyOf: [tokenIds, { type: "array", minItems: 1, maxItems: 1, items: tokenIds }],
      hint: "must be a list of token ids (or a list holding one such list): text prompts are not supported here; send token ids, or use /v1/chat/completions with messages",
    },
    logprobs: nullable({
      const: 0,
      hint: "must be 0 or null: 0 returns each generated token's log-prob; top alternatives are not available",
    }),
    echo: nullable({
      const: false,
      hint: "must be false: echoing the prompt is not supported (prompt_token_ids has it)",
    }),
    best_of: nullable({ const: 1, hint: ONE_CHOICE }),
    suffix: { type: "null", hint: "suffix (insertion) is not supported" },
  },
  additionalProperties: false,
};

const ajv = new Ajv2020({ strict: true, allErrors: true, verbose: true, discriminator: true, allowUnionTypes: true });
ajv.addKeyword({ keyword: "hint", schemaType: "string" });

const validateChat = ajv.compile<ChatBody>(chatSchema);
const validateCompletion = ajv.compile<CompletionBody>(completionSchema);

/** The body as a chat request, or a GatewayError (400) naming the first offending value. */
export function checkChatBody(body: unknown): ChatBody {
  return check(validateChat, body);
}

/** The body as a token-id completion request, or a GatewayError (400). */
export function checkCompletionBody(body: unknown): CompletionBody {
  return check(validateCompletion, body);
}

function check<T>(validate: ValidateFunction<T>, body: unknown, docs = "docs/gateway.md#errors-and-limits"): T {
  if (validate(body)) return body;
  throw refusal(validate.errors ?? [], docs);
}

/**
 * A checker for another body schema (engine mode's, engine-wire-schema.ts): compiled with the same
 * `hint` keyword, refusing with the same GatewayError; `docs` is where an unknown field's message
 * sends the reader.
 */
export function bodyChecker<T>(schema: object, docs: string): (body: unknown) => T {
  const validate = ajv.compile<T>(schema);
  return (body) => check(validate, body, docs);
}

/** `/messages/0/content` as `messages[0].content` (OpenAI's `param`). */
function paramOf(instancePath: string): string {
  return instancePath
    .split("/")
    .slice(1)
    .map((part) => part.replaceAll("~1", "/").replaceAll("~0", "~"))
    .reduce((path, part) => (/^\d+$/.test(part) ? `${path}[${part}]` : path === "" ? part : `${path}.${part}`), "");
}

const hintOf = (error: ErrorObject): string | undefined => (error.parentSchema as { hint?: string } | undefined)?.hint;

/**
 * One error for the client out of ajv's list: the deepest one that carries a hint (a value we
 * refuse on purpose), else an unknown field, else the deepest plain one.
 */
function refusal(errors: readonly ErrorObject[], docs: string): GatewayError {
  const depth = (e: ErrorObject) => e.instancePath.split("/").length;
  const deepest = (list: ErrorObject[]) =>
    list.reduce<ErrorObject | undefined>(
      (best, e) => (best === undefined || depth(e) > depth(best) ? e : best),
      undefined,
    );
  const hinted = deepest(errors.filter((e) => hintOf(e) !== undefined && e.keyword !== "additionalProperties"));
  const unknown = errors.find((e) => e.keyword === "additionalProperties");
  const plain = deepest(errors.filter((e) => !["anyOf", "oneOf", "if"].includes(e.keyword)));
  const chosen = hinted ?? unknown ?? plain ?? errors[0];
  if (chosen === undefined) return new GatewayError(400, "the request body was refused", "invalid_request_error");
  if (chosen.keyword === "additionalProperties") {
    const field = String((chosen.params as { additionalProperty: string }).additionalProperty);
    const param = paramOf(`${chosen.instancePath}/${field}`);
    const accepted = Object.keys((chosen.parentSchema as { properties?: object }).properties ?? {}).join(", ");
    return new GatewayError(
      400,
      `unsupported field "${param}": the gateway accepts ${accepted} here (${docs})`,
      "invalid_request_error",
      param,
      "unsupported_field",
    );
  }
  if (chosen.keyword === "required") {
    const field = String((chosen.params as { missingProperty: string }).missingProperty);
    const param = paramOf(`${chosen.instancePath}/${field}`);
    return new GatewayError(400, `missing required field "${param}"`, "invalid_request_error", param, "missing_field");
  }
  const param = paramOf(chosen.instancePath);
  const where = param === "" ? "the request body" : `"${param}"`;
  return new GatewayError(
    400,
    `invalid ${where}: ${hintOf(chosen) ?? chosen.message ?? "is not accepted"}`,
    "invalid_request_error",
    param === "" ? null : param,
    "invalid_value",
  );
}
