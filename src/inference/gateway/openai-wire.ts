// The OpenAI wire format on both sides of the model half (docs/gateway.md): a checked body
// becomes a ChatRequest or CompletionRequest, and a result becomes the response JSON or the
// chunks of a server-sent event stream, with the exact ids and log-probs alongside.
import type { ToolCallMessage } from "../../contracts/trainer-protocol.js";
import {
  GatewayError,
  type ChatRequest,
  type ChatResult,
  type CompletionRequest,
  type CompletionResult,
  type GatewayMessage,
} from "./contract.js";
import type { ResponseHead, WireEndpoint } from "./endpoints.js";
import { tooDeepError } from "./json-depth.js";
import {
  checkChatBody,
  checkCompletionBody,
  type ChatBody,
  type CompletionBody,
  type WireMessage,
} from "./openai-wire-schema.js";

/** Text parts are joined with a newline (as vLLM does). */
export function textOf(content: string | readonly { readonly text: string }[] | null | undefined): string {
  if (content == null) return "";
  return typeof content === "string" ? content : content.map((part) => part.text).join("\n");
}

export function parseArguments(text: string, param: string): Readonly<Record<string, unknown>> {
  const deep = tooDeepError(text, `"${param}"`, param);
  if (deep) throw deep;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new GatewayError(
      400,
      `invalid "${param}": the arguments of a tool call must be a JSON object text, as the gateway returned them`,
      "invalid_request_error",
      param,
      "invalid_value",
    );
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new GatewayError(
      400,
      `invalid "${param}": the arguments of a tool call must be a JSON object`,
      "invalid_request_error",
      param,
      "invalid_value",
    );
  }
  return value as Record<string, unknown>;
}

function toMessage(message: WireMessage, index: number): GatewayMessage {
  switch (message.role) {
    case "system":
    case "developer":
      return { role: "system", content: textOf(message.content) };
    case "user":
      return { role: "user", content: textOf(message.content) };
    case "tool":
      return { role: "tool", content: textOf(message.content), toolCallId: message.tool_call_id };
    case "assistant": {
      const calls = message.tool_calls ?? [];
      if (calls.length === 0) return { role: "assistant", content: textOf(message.content) };
      const toolCalls: ToolCallMessage[] = calls.map((call, j) => ({
        name: call.function.name,
        arguments: parseArguments(call.function.arguments, `messages[${index}].tool_calls[${j}].function.arguments`),
      }));
      return {
        role: "assistant",
        content: textOf(message.content),
        tool_calls: toolCalls,
        toolCallIds: calls.map((call) => call.id),
      };
    }
  }
}

const stopList = (stop: string | readonly string[] | null | undefined): readonly string[] =>
  stop == null ? [] : typeof stop === "string" ? [stop] : stop;

function toChatRequest(body: ChatBody): ChatRequest {
  return {
    messages: body.messages.map(toMessage),
    tools: body.tools ?? [],
    toolChoice:
      typeof body.tool_choice === "object" && body.tool_choice !== null
        ? { name: body.tool_choice.function.name }
        : (body.tool_choice ?? "auto"),
    maxTokens: body.max_completion_tokens ?? body.max_tokens ?? null,
    stop: stopList(body.stop),
    temperature: body.temperature ?? null,
    topP: body.top_p ?? null,
    seed: body.seed ?? null,
    logprobs: body.logprobs ?? false,
  };
}

function toCompletionRequest(body: CompletionBody): CompletionRequest {
  const [first] = body.prompt;
  const ids = typeof first === "number" ? (body.prompt as readonly number[]) : (first ?? []);
  return {
    prompt: Int32Array.from(ids),
    maxTokens: body.max_tokens ?? null,
    stop: stopList(body.stop),
    temperature: body.temperature ?? null,
    topP: body.top_p ?? null,
    seed: body.seed ?? null,
    logprobs: body.logprobs != null,
  };
}

interface Generated {
  readonly promptIds: Int32Array;
  readonly ids: Int32Array;
  readonly logprobs: Float32Array;
  readonly tokens: readonly string[];
  readonly policyVersion: number;
}

const usageOf = (result: Generated) => ({
  prompt_tokens: result.promptIds.length,
  completion_tokens: result.ids.length,
  total_tokens: result.promptIds.length + result.ids.length,
});

/** OpenAI chat log-probs of tokens [from, to): no alternatives (top_logprobs is refused). */
export function chatLogprobs(result: Generated, from = 0, to = result.tokens.length) {
  const content = [];
  for (let i = from; i < to; i++) {
    const token = result.tokens[i] ?? "";
    content.push({
      token,
      logprob: result.logprobs[i] ?? 0,
      bytes: Array.from(Buffer.from(token, "utf8")),
      top_logprobs: [],
    });
  }
  return { content };
}

const wireToolCalls = (result: ChatResult) =>
  result.toolCalls.map((call) => ({
    id: call.id,
    type: "function" as const,
    function: { name: call.name, arguments: call.arguments },
  }));

function chatCompletionJson(head: ResponseHead, result: ChatResult, logprobs: boolean) {
  const message =
    result.toolCalls.length > 0
      ? { role: "assistant", content: result.content, tool_calls: wireToolCalls(result) }
      : { role: "assistant", content: result.content };
  return {
    id: head.id,
    object: "chat.completion",
    created: head.created,
    model: head.model,
    choices: [
      {
        index: 0,
        message,
        finish_reason: result.finish,
        logprobs: logprobs ? chatLogprobs(result) : null,
        token_ids: Array.from(result.ids),
      },
    ],
    prompt_token_ids: Array.from(result.promptIds),
    usage: usageOf(result),
    arl: { policy_version: result.policyVersion },
  };
}

function completionJson(head: ResponseHead, result: CompletionResult, logprobs: boolean) {
  return {
    id: head.id,
    object: "text_completion",
    created: head.created,
    model: head.model,
    choices: [
      {
        index: 0,
        text: result.text,
        logprobs: logprobs ? { tokens: Array.from(result.tokens), token_logprobs: Array.from(result.logprobs) } : null,
        finish_reason: result.finish,
        token_ids: Array.from(result.ids),
      },
    ],
    prompt_token_ids: Array.from(result.promptIds),
    usage: usageOf(result),
    arl: { policy_version: result.policyVersion },
  };
}

interface Piece {
  readonly text: string;
  /** The tokens it covers, [from, to), for streamed log-probs. */
  readonly from: number;
  readonly to: number;
}

/**
 * The text in pieces, one per token while the tokens spell it out from the start, then the rest
 * in one piece (a call's text, an end-of-turn token or a cut stop string is not in `text`).
 * `end`: the first token no piece covers (its log-probs go with the last chunk).
 */
export function pieces(text: string, tokens: readonly string[]): { readonly parts: Piece[]; readonly end: number } {
  const parts: Piece[] = [];
  let at = 0;
  let i = 0;
  for (; i < tokens.length && at < text.length; i++) {
    const token = tokens[i] ?? "";
    if (token === "" || !text.startsWith(token, at)) break;
    parts.push({ text: token, from: i, to: i + 1 });
    at += token.length;
  }
  if (at === text.length) return { parts, end: i };
  parts.push({ text: text.slice(at), from: i, to: tokens.length });
  return { parts, end: tokens.length };
}

/** The `chat.completion.chunk` events of one answer, in order (without the final `[DONE]`). */
function chatChunks(head: ResponseHead, result: ChatResult, logprobs: boolean, includeUsage: boolean): object[] {
  const chunk = (delta: object, extra: object = {}, finish: string | null = null, lp: object | null = null) => ({
    id: head.id,
    object: "chat.completion.chunk",
    created: head.created,
    model: head.model,
    choices: [{ index: 0, delta, logprobs: lp, finish_reason: finish, ...extra }],
  });
  const chunks: object[] = [
    { ...chunk({ role: "assistant", content: "" }), prompt_token_ids: Array.from(result.promptIds) },
  ];
  const { parts, end } = pieces(result.content ?? "", result.tokens);
  for (const part of parts)
    chunks.push(chunk({ content: part.text }, {}, null, logprobs ? chatLogprobs(result, part.from, part.to) : null));
  wireToolCalls(result).forEach((call, index) => chunks.push(chunk({ tool_calls: [{ index, ...call }] })));
  // Log-probs of tokens no content piece covered (a call's text, the end of the turn) come last.
  chunks.push({
    ...chunk({}, { token_ids: Array.from(result.ids) }, result.finish, logprobs ? chatLogprobs(result, end) : null),
    arl: { policy_version: result.policyVersion },
  });
  if (includeUsage)
    chunks.push({
      id: head.id,
      object: "chat.completion.chunk",
      created: head.created,
      model: head.model,
      choices: [],
      usage: usageOf(result),
    });
  return chunks;
}

/** The streamed `text_completion` events of one completion (without the final `[DONE]`). */
function completionChunks(
  head: ResponseHead,
  result: CompletionResult,
  logprobs: boolean,
  includeUsage: boolean,
): object[] {
  const chunk = (text: string, extra: object, finish: string | null, lp: object | null) => ({
    id: head.id,
    object: "text_completion",
    created: head.created,
    model: head.model,
    choices: [{ index: 0, text, logprobs: lp, finish_reason: finish, ...extra }],
  });
  const legacy = (from: number, to: number) => ({
    tokens: result.tokens.slice(from, to),
    token_logprobs: Array.from(result.logprobs.subarray(from, to)),
  });
  const { parts, end } = pieces(result.text, result.tokens);
  const chunks: object[] = parts.map((part, i) => ({
    ...chunk(part.text, {}, null, logprobs ? legacy(part.from, part.to) : null),
    ...(i === 0 ? { prompt_token_ids: Array.from(result.promptIds) } : {}),
  }));
  chunks.push({
    ...chunk(
      "",
      { token_ids: Array.from(result.ids) },
      result.finish,
      logprobs ? legacy(end, result.tokens.length) : null,
    ),
    ...(parts.length === 0 ? { prompt_token_ids: Array.from(result.promptIds) } : {}),
    arl: { policy_version: result.policyVersion },
  });
  if (includeUsage)
    chunks.push({
      id: head.id,
      object: "text_completion",
      created: head.created,
      model: head.model,
      choices: [],
      usage: usageOf(result),
    });
  return chunks;
}

const wantsUsage = (body: { readonly stream_options?: { readonly include_usage?: boolean | null } | null }) =>
  body.stream_options?.include_usage === true;

/** `POST /v1/chat/completions`. */
export const chatEndpoint: WireEndpoint = {
  errors: "openai",
  idPrefix: "chatcmpl-",
  async answer({ body, head, chat }) {
    const checked = checkChatBody(body);
    const request = toChatRequest(checked);
    const result = await chat(request);
    if (checked.stream === true)
      return {
        events: chatChunks(head, result, request.logprobs, wantsUsage(checked)).map((data) => ({ data })),
        done: true,
      };
    return { json: chatCompletionJson(head, result, request.logprobs) };
  },
};

/** `POST /v1/completions` with a prompt of token ids. */
export const completionEndpoint: WireEndpoint = {
  errors: "openai",
  idPrefix: "cmpl-",
  async answer({ body, head, complete }) {
    const checked = checkCompletionBody(body);
    const request = toCompletionRequest(checked);
    const result = await complete(request);
    if (checked.stream === true)
      return {
        events: completionChunks(head, result, request.logprobs, wantsUsage(checked)).map((data) => ({ data })),
        done: true,
      };
    return { json: completionJson(head, result, request.logprobs) };
  },
};
