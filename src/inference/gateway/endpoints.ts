// What a session's model-calling route is to the HTTP half (docs/gateway.md#endpoints): each API's
// wire format (wire.ts: chat and completions; responses-wire.ts; anthropic-wire.ts) checks its
// body, adapts it onto the one SessionModel and encodes the answer. server.ts routes, guards and
// writes; it knows no wire format.
import type { ErrorShape } from "./api-errors.js";
import type { ChatRequest, ChatResult, CompletionRequest, CompletionResult, GatewayMessage } from "./contract.js";

/** What every answer of one call shares. */
export interface ResponseHead {
  readonly id: string;
  readonly created: number;
  readonly model: string;
}

/** One server-sent event: `event: <name>` when named (Responses, Anthropic), then `data: <JSON>`. */
export interface ServerEvent {
  readonly event?: string;
  readonly data: object;
}

/** A JSON answer, or an event stream (`done`: ends with `data: [DONE]`, as OpenAI's chat and completions do). */
export type WireAnswer =
  { readonly json: object } | { readonly events: readonly ServerEvent[]; readonly done: boolean };

export interface EndpointCall {
  /** The parsed JSON body, not yet checked. */
  readonly body: unknown;
  readonly head: ResponseHead;
  /** The session's model half, each call counted in flight (closing the session waits for it). */
  readonly chat: (request: ChatRequest) => Promise<ChatResult>;
  readonly complete: (request: CompletionRequest) => Promise<CompletionResult>;
  /** The session's stored conversations by answer id (Responses' `previous_response_id`); dropped with the session. */
  readonly conversations: Map<string, readonly GatewayMessage[]>;
}

export interface WireEndpoint {
  /** The error shape this API's clients parse (every refusal on its route, before and after the body). */
  readonly errors: ErrorShape;
  /** The answer id's prefix, separator included (`chatcmpl-`, `cmpl-`, `resp_`, `msg_`). */
  readonly idPrefix: string;
  answer(call: EndpointCall): Promise<WireAnswer>;
}
