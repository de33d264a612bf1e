// The chat messages of an agent gateway session (docs/gateway.md#exact-tokens-and-rewrites): what a
// request's messages are as the chat template renders them, what the harness is expected to send
// back for a served reply, and whether a request's history is the one the session served.
import type { ParsedTurn } from "../../contracts/tool-calls.js";
import type { Message } from "../../episode/policy.js";
import { describeFunctions, systemWithTools } from "../../episode/tool-descriptions.js";
import type { GatewayMessage } from "./contract.js";

/** A request message as encode takes it: role, content and calls; the OpenAI ids stay behind. */
export function renderable(message: GatewayMessage): Message {
  return {
    role: message.role,
    content: message.content,
    ...(message.tool_calls && message.tool_calls.length > 0 ? { tool_calls: message.tool_calls } : {}),
  };
}

/**
 * The request's messages as the template is given them. Tools a template does not render are
 * described in the system message (one is put first when the request has none), as the harness
 * describes the plan's tools.
 */
export function renderedMessages(messages: readonly GatewayMessage[], describedTools: readonly unknown[]): Message[] {
  const out = messages.map(renderable);
  if (describedTools.length === 0) return out;
  const description = describeFunctions(describedTools);
  const first = out[0];
  if (first?.role === "system") out[0] = { ...first, content: systemWithTools(first.content, description) };
  else out.unshift({ role: "system", content: systemWithTools(null, description) });
  return out;
}

/**
 * The assistant message of a served reply, as the template renders it again: the text, and a
 * parsed call apart from its content (the harness does the same with its own turns).
 */
export function servedAssistant(parsed: ParsedTurn | undefined, text: string): Message {
  if (parsed?.kind !== "call" || parsed.content === undefined) return { role: "assistant", content: text };
  return {
    role: "assistant",
    content: parsed.content.trimEnd(),
    tool_calls: [{ name: parsed.call.name, arguments: parsed.call.arguments }],
  };
}

/** JSON text with every object's keys sorted: two argument objects are equal when their texts are. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  const entries = Object.keys(value)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`);
  return `{${entries.join(",")}}`;
}

/**
 * The same message as far as the model's context goes: role, content modulo trailing whitespace
 * (SDKs and harnesses strip it), calls by name and parsed arguments. Ids are not compared: the
 * served ids are ours, and some SDKs drop or rewrite them.
 */
function sameMessage(a: Message, b: Message): boolean {
  if (a.role !== b.role || a.content.trimEnd() !== b.content.trimEnd()) return false;
  const ca = a.tool_calls ?? [];
  const cb = b.tool_calls ?? [];
  return (
    ca.length === cb.length &&
    ca.every((c, i) => c.name === cb[i]?.name && canonical(c.arguments) === canonical(cb[i]?.arguments))
  );
}

/** How many leading messages of `messages` are `served`, when all of them are; undefined otherwise. */
export function continuesFrom(messages: readonly Message[], served: readonly Message[]): number | undefined {
  if (messages.length < served.length) return undefined;
  for (let i = 0; i < served.length; i++) {
    const [m, s] = [messages[i], served[i]];
    if (!m || !s || !sameMessage(m, s)) return undefined;
  }
  return served.length;
}
