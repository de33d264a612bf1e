// The Anthropic Messages API onto the session's model half (docs/gateway.md#the-anthropic-messages-api):
// a checked body's system prompt and messages become a ChatRequest (tool_use blocks are the
// assistant message's calls, tool_result blocks tool messages), so the session alone decides
// continuation or rewrite; the result becomes a `message` with text and tool_use blocks, or
// Anthropic's event stream.
import { GatewayError, type ChatRequest, type ChatResult, type GatewayMessage, type ToolChoice } from "./contract.js";
import type { ResponseHead, ServerEvent, WireEndpoint } from "./endpoints.js";
import { checkAnthropicBody, type AnthropicBody, type AnthropicMessage } from "./anthropic-wire-schema.js";
import { pieces, textOf } from "./openai-wire.js";

/** One Anthropic message as chat messages: a user turn's tool results become tool messages, in order. */
function toMessages(
  message: AnthropicMessage,
  index: number,
  previous: AnthropicMessage | undefined,
): GatewayMessage[] {
  if (typeof message.content === "string") return [{ role: message.role, content: message.content }];
  if (message.role === "assistant") {
    const text = message.content.flatMap((b) => (b.type === "text" ? [b] : []));
    const calls = message.content.flatMap((b) => (b.type === "tool_use" ? [b] : []));
    if (calls.length === 0) return [{ role: "assistant", content: textOf(text) }];
    return [
      {
        role: "assistant",
        content: textOf(text),
        tool_calls: calls.map((c) => ({ name: c.name, arguments: { ...c.input } })),
        toolCallIds: calls.map((c) => c.id),
      },
    ];
  }
  // As on Anthropic's API: a tool_result answers a tool_use of the assistant message just before.
  const asked = new Set(
    typeof previous?.content === "object" ? previous.content.flatMap((b) => (b.type === "tool_use" ? [b.id] : [])) : [],
  );
  const out: GatewayMessage[] = [];
  message.content.forEach((b, j) => {
    if (b.type === "tool_result") {
      if (!asked.has(b.tool_use_id)) {
        throw new GatewayError(
          400,
          `tool_result block with tool_use_id "${b.tool_use_id}" has no tool_use block with that id in the previous (assistant) message`,
          "invalid_request_error",
          `messages[${index}].content[${j}].tool_use_id`,
          "invalid_value",
        );
      }
      out.push({ role: "tool", content: textOf(b.content), toolCallId: b.tool_use_id });
      return;
    }
    if (b.type !== "text") return;
    const last = out.at(-1);
    if (last?.role === "user") out[out.length - 1] = { role: "user", content: `${last.content}\n${b.text}` };
    else out.push({ role: "user", content: b.text });
  });
  return out;
}

/** Anthropic's `any` is OpenAI's "required"; `{"type": "tool", name}` names the call. */
function anthropicToolChoice(choice: AnthropicBody["tool_choice"]): ToolChoice {
  if (choice === undefined) return "auto";
  if (choice.type === "tool") return { name: choice.name };
  return choice.type === "any" ? "required" : choice.type;
}

function toChatRequest(body: AnthropicBody): ChatRequest {
  const system = body.system === undefined ? "" : textOf(body.system);
  return {
    messages: [
      ...(system === "" ? [] : [{ role: "system" as const, content: system }]),
      ...body.messages.flatMap((m, i) => toMessages(m, i, body.messages[i - 1])),
    ],
    tools: (body.tools ?? []).map((t) => ({
      type: "function",
      function: {
        name: t.name,
        ...(t.description !== undefined ? { description: t.description } : {}),
        parameters: t.input_schema,
      },
    })),
    toolChoice: anthropicToolChoice(body.tool_choice),
    maxTokens: body.max_tokens,
    stop: body.stop_sequences ?? [],
    temperature: body.temperature ?? null,
    topP: body.top_p ?? null,
    seed: null,
    logprobs: false,
  };
}

function stopReason(result: ChatResult): string {
  if (result.finish === "tool_calls") return "tool_use";
  if (result.finish === "length") return "max_tokens";
  return result.stopString === null ? "end_turn" : "stop_sequence";
}

function contentBlocks(result: ChatResult): object[] {
  const text = result.content ?? "";
  const blocks: object[] = text !== "" || result.toolCalls.length === 0 ? [{ type: "text", text }] : [];
  for (const call of result.toolCalls)
    blocks.push({ type: "tool_use", id: call.id, name: call.name, input: JSON.parse(call.arguments) as unknown });
  return blocks;
}

const usageOf = (result: ChatResult) => ({
  input_tokens: result.promptIds.length,
  output_tokens: result.ids.length,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 0,
});

function messageJson(head: ResponseHead, result: ChatResult) {
  return {
    id: head.id,
    type: "message",
    role: "assistant",
    model: head.model,
    content: contentBlocks(result),
    stop_reason: stopReason(result),
    stop_sequence: result.stopString,
    usage: usageOf(result),
    prompt_token_ids: Array.from(result.promptIds),
    token_ids: Array.from(result.ids),
    arl: { policy_version: result.policyVersion },
  };
}

/** Anthropic's event stream of one answer: message_start, each block's start, deltas and stop, message_delta, message_stop. */
function messageEvents(head: ResponseHead, result: ChatResult): ServerEvent[] {
  const events: ServerEvent[] = [];
  const emit = (type: string, data: object) => events.push({ event: type, data: { type, ...data } });
  const start = {
    id: head.id,
    type: "message",
    role: "assistant",
    model: head.model,
    content: [],
    stop_reason: null,
    stop_sequence: null,
    prompt_token_ids: Array.from(result.promptIds),
  };
  emit("message_start", { message: { ...start, usage: { ...usageOf(result), output_tokens: 0 } } });
  contentBlocks(result).forEach((block, index) => {
    const b = block as { type: string; text?: string; input?: unknown };
    if (b.type === "text") {
      emit("content_block_start", { index, content_block: { type: "text", text: "" } });
      for (const piece of pieces(b.text ?? "", result.tokens).parts)
        emit("content_block_delta", { index, delta: { type: "text_delta", text: piece.text } });
    } else {
      emit("content_block_start", { index, content_block: { ...block, input: {} } });
      emit("content_block_delta", {
        index,
        delta: { type: "input_json_delta", partial_json: JSON.stringify(b.input) },
      });
    }
    emit("content_block_stop", { index });
  });
  emit("message_delta", {
    delta: { stop_reason: stopReason(result), stop_sequence: result.stopString },
    usage: { output_tokens: result.ids.length },
    token_ids: Array.from(result.ids),
    arl: { policy_version: result.policyVersion },
  });
  emit("message_stop", {});
  return events;
}

/** `POST /v1/messages`. */
export const anthropicMessagesEndpoint: WireEndpoint = {
  errors: "anthropic",
  idPrefix: "msg_",
  async answer({ body, head, chat }) {
    const checked = checkAnthropicBody(body);
    const result = await chat(toChatRequest(checked));
    if (checked.stream === true) return { events: messageEvents(head, result), done: false };
    return { json: messageJson(head, result) };
  },
};
