// One error vocabulary for the gateway's three APIs (docs/gateway.md#errors-and-limits): every
// refusal is a GatewayError (status, message, OpenAI type, param, code), and each API's wire
// shape is made from it here, so a route decides only which shape its clients parse.
import type { GatewayError } from "./contract.js";

/** Whose error shape a route answers in: OpenAI's (chat, completions, responses) or Anthropic's (messages). */
export type ErrorShape = "openai" | "anthropic";

/** Anthropic's error types by HTTP status (its SDKs pick their error class by status too). */
const ANTHROPIC_TYPES: Readonly<Record<number, string>> = {
  400: "invalid_request_error",
  401: "authentication_error",
  403: "permission_error",
  404: "not_found_error",
  410: "invalid_request_error",
  413: "request_too_large",
  429: "rate_limit_error",
  500: "api_error",
  503: "overloaded_error",
};

/** The JSON body of a refusal in the route's shape. */
export function errorBody(error: GatewayError, shape: ErrorShape): object {
  if (shape === "openai")
    return { error: { message: error.message, type: error.type, param: error.param, code: error.code } };
  // Anthropic's errors carry no param or code: the path leads the message, as Anthropic's own do.
  const message =
    error.param !== null && !error.message.includes(error.param) ? `${error.param}: ${error.message}` : error.message;
  return {
    type: "error",
    error: {
      type: ANTHROPIC_TYPES[error.status] ?? (error.status >= 500 ? "api_error" : "invalid_request_error"),
      message,
    },
  };
}
