// The agent gateway's two halves and what joins them (docs/gateway.md). The HTTP half
// (server.ts) speaks the OpenAI wire format: routing, per-session keys, body limits, JSON Schema
// validation of the accepted subset, OpenAI error objects, server-sent events. The model half
// (model-session.ts) turns a validated request into tokens through the trainer protocol and
// keeps the exact ids it served, so that an episode can be trained on them. An agent episode
// (src/runtime/run/agent-episode.ts) opens one session per episode and closes it at the end.
import type { Message } from "../../episode/policy.js";

/** A tool call as the gateway returns it: OpenAI's shape less the wrapper (arguments: a JSON text). */
export interface ServedToolCall {
  readonly id: string;
  readonly name: string;
  readonly arguments: string;
}

/**
 * What a request lets the model do with its tools: "auto" (it decides), "none" (not offered),
 * "required" (a call of any of them), or a call of the one named (OpenAI's named function,
 * Anthropic's `{"type": "tool"}`).
 */
export type ToolChoice = "auto" | "none" | "required" | { readonly name: string };

/** A chat completion request, validated and converted from the OpenAI body. */
export interface ChatRequest {
  /**
   * The conversation as the harness sent it. Text content parts are joined; an assistant
   * message's calls are parsed (`arguments` as an object); a tool message keeps its
   * `tool_call_id` in `toolCallId`.
   */
  readonly messages: readonly GatewayMessage[];
  /** OpenAI function definitions as sent ({type: "function", function: {name, description, parameters}}); empty: none. */
  readonly tools: readonly unknown[];
  /** "none": the tools are not offered on this call and no call is parsed; "required" or a name: a call is forced (docs/gateway.md#forced-tool-calls). */
  readonly toolChoice: ToolChoice;
  /** max_completion_tokens, else max_tokens; null: the plan's limit alone. */
  readonly maxTokens: number | null;
  /** Stop strings: the text is cut before the first one, and the tokens after it are dropped. */
  readonly stop: readonly string[];
  /** What the request asked for; the plan's sampling decides while training (docs/gateway.md). */
  readonly temperature: number | null;
  readonly topP: number | null;
  readonly seed: number | null;
  /** The OpenAI `logprobs` flag: per-token log-probs in the OpenAI format besides the ids. */
  readonly logprobs: boolean;
}

export interface GatewayMessage extends Message {
  readonly toolCallId?: string;
  /** The ids of the calls of an assistant message, in order (matched against what was served). */
  readonly toolCallIds?: readonly string[];
}

/** What the model half answers a chat request with. */
export interface ChatResult {
  /** The text without the parsed call and without the end-of-turn token(s); null when a call is all there is. */
  readonly content: string | null;
  readonly toolCalls: readonly ServedToolCall[];
  readonly finish: "stop" | "length" | "tool_calls";
  /** The request's stop string that cut the text, when one did (Anthropic's `stop_sequence`). */
  readonly stopString: string | null;
  /** Exactly the ids the model was given and the ids it generated, with their log-probs. */
  readonly promptIds: Int32Array;
  readonly ids: Int32Array;
  readonly logprobs: Float32Array;
  /** Each generated token's text (OpenAI logprobs `token`). */
  readonly tokens: readonly string[];
  readonly policyVersion: number;
}

/** A text completion request with a prompt of token ids (`POST /v1/completions`). */
export interface CompletionRequest {
  readonly prompt: Int32Array;
  readonly maxTokens: number | null;
  readonly stop: readonly string[];
  readonly temperature: number | null;
  readonly topP: number | null;
  readonly seed: number | null;
  readonly logprobs: boolean;
}

export interface CompletionResult {
  readonly text: string;
  readonly finish: "stop" | "length";
  readonly promptIds: Int32Array;
  readonly ids: Int32Array;
  readonly logprobs: Float32Array;
  readonly tokens: readonly string[];
  readonly policyVersion: number;
}

/** The model half of one session. Errors it means for the client are thrown as GatewayError. */
export interface SessionModel {
  /** The model name `GET /v1/models` lists and responses carry. */
  readonly modelName: string;
  chat(request: ChatRequest): Promise<ChatResult>;
  complete(request: CompletionRequest): Promise<CompletionResult>;
}

/**
 * An error the client gets as an OpenAI error object: {"error": {message, type, param, code}}
 * with the HTTP status. Anything else a handler throws is answered 500 with a generic message
 * (and logged by the gateway), never a crash of the gateway.
 */
export class GatewayError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly type:
      | "invalid_request_error"
      | "authentication_error"
      | "not_found_error"
      | "conflict_error"
      | "rate_limit_error"
      | "server_error" = "invalid_request_error",
    readonly param: string | null = null,
    readonly code: string | null = null,
  ) {
    super(message);
  }
}

/** What a session saw that makes its episode an env error, in the order seen. */
export interface SessionFault {
  readonly kind: "wrong_key" | "after_end";
  readonly message: string;
}

/** One open session: the per-episode URL and key handed to the agent program. */
export interface SessionHandle {
  readonly id: string;
  /** `http://127.0.0.1:PORT/s/<id>/v1`: what OPENAI_BASE_URL is set to. */
  readonly baseUrl: string;
  /** `http://127.0.0.1:PORT/s/<id>`: what ANTHROPIC_BASE_URL is set to (Anthropic's SDKs add `/v1/messages`). */
  readonly anthropicBaseUrl: string;
  /** `http://127.0.0.1:PORT/s/<id>/outcome`: where a program may POST {"signals": {...}}. */
  readonly outcomeUrl: string;
  /** The per-session secret (OPENAI_API_KEY); a request with another key is refused (401) and recorded as a fault. */
  readonly apiKey: string;
  readonly faults: readonly SessionFault[];
  /** The body of the last accepted outcome POST, if any (validated as a JSON object, not interpreted). */
  readonly postedOutcome: unknown;
  /** Resolves once the session's own socket listens (at once for a session without one). */
  readonly ready: Promise<void>;
  /** Ends the session: later requests get a 410 error (recorded as an `after_end` fault); waits for calls in flight. */
  close(): Promise<void>;
}

/** How a session is reached. */
export interface SessionOptions {
  /**
   * A unix socket path this session alone is served on (a sandboxed episode's way in,
   * docs/envs.md#what-an-episode-can-reach): its requests then come through that socket only,
   * and the socket serves no other session.
   */
  readonly socket?: string;
}

export interface GatewayOptions {
  /** Largest request body accepted, in bytes (larger: 413, the body is not read further). */
  readonly maxBodyBytes?: number;
  /** Called for unexpected handler errors (they are answered 500). */
  readonly log?: (line: string) => void;
  /** Where to listen: 127.0.0.1 and a free port unless given (`arl serve --host --port`). */
  readonly host?: string;
  readonly port?: number;
  /** Engine mode: these routes answer every path outside `/s/<id>` (engine-routes.ts). */
  readonly engine?: EngineEndpoints;
  /** How long a client has to send its headers, and its whole request, in ms (defaults: 30 s and 120 s). */
  readonly headersTimeoutMs?: number;
  readonly requestTimeoutMs?: number;
}

/** A request to an engine-mode route; `body` is the parsed JSON, null when there is none. */
export interface EngineCall {
  readonly method: string;
  readonly path: string;
  readonly query: URLSearchParams;
  readonly body: unknown;
}

/** An engine-mode answer: `body` JSON, a string (sent as text/plain), or null (no body). */
export interface EngineAnswer {
  readonly status: number;
  readonly body: unknown;
}

/** The routes of one engine's token-in subset, at the root of the gateway (docs/gateway.md#engine-mode). */
export interface EngineEndpoints {
  /** Answers every call, its refusals included (unknown routes: 404), in the engine's error shape. */
  answer(call: EngineCall): Promise<EngineAnswer>;
  /** A refusal of the HTTP half (a body that is not JSON or is too large) in the engine's error shape. */
  refusal(error: GatewayError): EngineAnswer;
}

/** The gateway of one run: one HTTP server on 127.0.0.1 (a random port), sessions by id. */
export interface Gateway {
  /** `http://127.0.0.1:PORT`. */
  readonly origin: string;
  open(model: SessionModel, options?: SessionOptions): SessionHandle;
  /** Counters for the run's metrics. */
  readonly stats: GatewayStats;
  close(): Promise<void>;
}

export interface GatewayStats {
  requests: number;
  /** Requests answered with an error object (any status >= 400). */
  errors: number;
  unauthorized: number;
  afterEnd: number;
}

/** Default request body limit: 8 MiB (long agent contexts, well below memory trouble). */
export const DEFAULT_MAX_BODY_BYTES = 8 * 1024 * 1024;
