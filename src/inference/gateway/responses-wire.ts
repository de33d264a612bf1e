// The OpenAI Responses API onto the session's model half (docs/gateway.md#the-responses-api): a
// checked body's instructions and input items become a ChatRequest (a function_call item is the
// preceding assistant message's call, a function_call_output a tool message), so the session
// alone decides continuation or rewrite; the result becomes a `response` object with message and
// function_call output items, or the Responses event stream.
import type { ToolCallMessage } from "../../contracts/trainer-protocol.js";
import { GatewayError, type ChatRequest, type ChatResult, type GatewayMessage } from "./contract.js";
import type { ResponseHead, ServerEvent, WireEndpoint } from "./endpoints.js";
import { checkResponsesBody, type ResponsesBody, type ResponsesInputItem } from "./responses-wire-schema.js";
import { chatLogprobs, parseArguments, pieces, textOf } from "./openai-wire.js";

const LOGPROBS = "message.output_text.logprobs";

/** An assistant message with one more call (function_call items follow the message they belong to). */
function withCall(message: GatewayMessage, call: ToolCallMessage, id: string): GatewayMessage {
  return {
    ...message,
    tool_calls: [...(message.tool_calls ?? []), call],
    toolCallIds: [...(message.toolCallIds ?? []), id],
  };
}

/** The input items as messages after `history` (a previous response's conversation); refuses an output without its call. */
function inputMessages(input: ResponsesBody["input"], history: readonly GatewayMessage[]): GatewayMessage[] {
  const messages = [...history];
  const items: readonly ResponsesInputItem[] = typeof input === "string" ? [{ role: "user", content: input }] : input;
  const callIds = new Set(history.flatMap((m) => m.toolCallIds ?? []));
  items.forEach((item, i) => {
    switch (item.type) {
      case "function_call": {
        const call = { name: item.name, arguments: parseArguments(item.arguments, `input[${i}].arguments`) };
        const last = messages.at(-1);
        if (last?.role === "assistant") messages[messages.length - 1] = withCall(last, call, item.call_id);
        else messages.push(withCall({ role: "assistant", content: "" }, call, item.call_id));
        callIds.add(item.call_id);
        return;
      }
      case "function_call_output":
        if (!callIds.has(item.call_id)) {
          throw new GatewayError(
            400,
            `no function_call with call_id "${item.call_id}" before this function_call_output: send the call item (as the answer gave it) before its output`,
            "invalid_request_error",
            `input[${i}].call_id`,
            "invalid_value",
          );
        }
        messages.push({ role: "tool", content: textOf(item.output), toolCallId: item.call_id });
        return;
      default:
        messages.push({ role: item.role === "developer" ? "system" : item.role, content: textOf(item.content) });
    }
  });
  return messages;
}

/** Responses' function tools in the chat shape the session takes (and the template renders). */
function chatTools(body: ResponsesBody): unknown[] {
  return (body.tools ?? []).map((t) => ({
    type: "function",
    function: {
      name: t.name,
      ...(t.description != null ? { description: t.description } : {}),
      parameters: t.parameters ?? { type: "object", properties: {} },
    },
  }));
}

function toChatRequest(body: ResponsesBody, messages: readonly GatewayMessage[]): ChatRequest {
  const system: GatewayMessage[] =
    body.instructions != null && body.instructions !== "" ? [{ role: "system", content: body.instructions }] : [];
  return {
    messages: [...system, ...messages],
    tools: chatTools(body),
    toolChoice:
      typeof body.tool_choice === "object" && body.tool_choice !== null
        ? { name: body.tool_choice.name }
        : (body.tool_choice ?? "auto"),
    maxTokens: body.max_output_tokens ?? null,
    stop: [],
    temperature: body.temperature ?? null,
    topP: body.top_p ?? null,
    seed: null,
    logprobs: body.include?.includes(LOGPROBS) === true,
  };
}

/** The served reply as the history holds it when the client sends it back, or refers to it by id. */
function servedMessage(result: ChatResult): GatewayMessage {
  const content = result.content ?? "";
  if (result.toolCalls.length === 0) return { role: "assistant", content };
  return {
    role: "assistant",
    content,
    tool_calls: result.toolCalls.map((c) => ({
      name: c.name,
      arguments: JSON.parse(c.arguments) as Record<string, unknown>,
    })),
    toolCallIds: result.toolCalls.map((c) => c.id),
  };
}

const messageItemId = (head: ResponseHead) => `msg_${head.id.slice("resp_".length)}`;
const callItemId = (callId: string, head: ResponseHead) => `fc_${head.id.slice("resp_".length)}_${callId}`;

interface Output {
  readonly items: object[];
  readonly text: string | null;
}

function outputItems(
  head: ResponseHead,
  result: ChatResult,
  logprobs: boolean,
  status: "completed" | "incomplete",
): Output {
  const items: object[] = [];
  const text = result.content ?? (result.toolCalls.length > 0 ? null : "");
  if (text !== null && (text !== "" || result.toolCalls.length === 0)) {
    const part = { type: "output_text", text, annotations: [], logprobs: logprobs ? chatLogprobs(result).content : [] };
    items.push({ type: "message", id: messageItemId(head), status, role: "assistant", content: [part] });
  }
  for (const call of result.toolCalls)
    items.push({
      type: "function_call",
      id: callItemId(call.id, head),
      call_id: call.id,
      name: call.name,
      arguments: call.arguments,
      status: "completed",
    });
  return { items, text };
}

function responseJson(head: ResponseHead, body: ResponsesBody, result: ChatResult | null, logprobs: boolean) {
  const incomplete = result?.finish === "length";
  const status = result === null ? "in_progress" : incomplete ? "incomplete" : "completed";
  const output =
    result === null ? [] : outputItems(head, result, logprobs, incomplete ? "incomplete" : "completed").items;
  return {
    id: head.id,
    object: "response",
    created_at: head.created,
    status,
    error: null,
    incomplete_details: incomplete ? { reason: "max_output_tokens" } : null,
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    model: head.model,
    output,
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: body.previous_response_id ?? null,
    reasoning: null,
    store: body.store ?? true,
    temperature: body.temperature ?? null,
    text: { format: { type: "text" } },
    tool_choice: body.tool_choice ?? "auto",
    tools: (body.tools ?? []).map((t) => ({
      ...t,
      description: t.description ?? null,
      parameters: t.parameters ?? null,
      strict: t.strict ?? null,
    })),
    top_p: body.top_p ?? null,
    truncation: "disabled",
    user: body.user ?? null,
    metadata: body.metadata ?? {},
    usage:
      result === null
        ? null
        : {
            input_tokens: result.promptIds.length,
            input_tokens_details: { cached_tokens: 0 },
            output_tokens: result.ids.length,
            output_tokens_details: { reasoning_tokens: 0 },
            total_tokens: result.promptIds.length + result.ids.length,
          },
    ...(result === null
      ? {}
      : {
          prompt_token_ids: Array.from(result.promptIds),
          token_ids: Array.from(result.ids),
          arl: { policy_version: result.policyVersion },
        }),
  };
}

/** The Responses event stream of one answer: created, each output item added, its deltas and done, then completed. */
function responseEvents(head: ResponseHead, body: ResponsesBody, result: ChatResult, logprobs: boolean): ServerEvent[] {
  const events: ServerEvent[] = [];
  const emit = (type: string, data: object) =>
    events.push({ event: type, data: { type, sequence_number: events.length, ...data } });
  emit("response.created", { response: responseJson(head, body, null, false) });
  emit("response.in_progress", { response: responseJson(head, body, null, false) });
  const final = responseJson(head, body, result, logprobs);
  final.output.forEach((item, outputIndex) => {
    const { type, id } = item as { type: string; id: string };
    if (type === "message") {
      const done = item as { content: { text: string; logprobs: object[] }[] };
      const text = done.content[0]?.text ?? "";
      emit("response.output_item.added", {
        output_index: outputIndex,
        item: { ...item, status: "in_progress", content: [] },
      });
      const at = { item_id: id, output_index: outputIndex, content_index: 0 };
      emit("response.content_part.added", {
        ...at,
        part: { type: "output_text", text: "", annotations: [], logprobs: [] },
      });
      for (const piece of pieces(text, result.tokens).parts)
        emit("response.output_text.delta", {
          ...at,
          delta: piece.text,
          logprobs: logprobs ? chatLogprobs(result, piece.from, piece.to).content : [],
        });
      emit("response.output_text.done", { ...at, text, logprobs: done.content[0]?.logprobs ?? [] });
      emit("response.content_part.done", { ...at, part: done.content[0] });
    } else {
      const call = item as { name: string; arguments: string };
      emit("response.output_item.added", {
        output_index: outputIndex,
        item: { ...item, arguments: "", status: "in_progress" },
      });
      emit("response.function_call_arguments.delta", { item_id: id, output_index: outputIndex, delta: call.arguments });
      emit("response.function_call_arguments.done", {
        item_id: id,
        output_index: outputIndex,
        name: call.name,
        arguments: call.arguments,
      });
    }
    emit("response.output_item.done", { output_index: outputIndex, item });
  });
  emit(final.status === "incomplete" ? "response.incomplete" : "response.completed", { response: final });
  return events;
}

/** `POST /v1/responses`. */
export const responsesEndpoint: WireEndpoint = {
  errors: "openai",
  idPrefix: "resp_",
  async answer({ body, head, chat, conversations }) {
    const checked = checkResponsesBody(body);
    const previous = checked.previous_response_id ?? null;
    const history = previous === null ? [] : conversations.get(previous);
    if (history === undefined) {
      throw new GatewayError(
        400,
        `previous response with id "${previous ?? ""}" not found: this session did not serve it, or it was made with store: false`,
        "invalid_request_error",
        "previous_response_id",
        "previous_response_not_found",
      );
    }
    const messages = inputMessages(checked.input, history);
    const request = toChatRequest(checked, messages);
    const result = await chat(request);
    if (checked.store !== false) conversations.set(head.id, [...messages, servedMessage(result)]);
    if (checked.stream === true)
      return { events: responseEvents(head, checked, result, request.logprobs), done: false };
    return { json: responseJson(head, checked, result, request.logprobs) };
  },
};
