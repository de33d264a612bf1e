// One HTTP call to an inference server (docs/engines.md), with its deadline. What went wrong is
// sorted into what another attempt may cure (no connection, a reset, a timeout, a 5xx, an answer
// that is not JSON) and what it would meet again (a 4xx: the request itself is refused).
import type { EngineHttpCall } from "./contract.js";

export class EngineCallError extends Error {
  override readonly name = "EngineCallError";
  constructor(
    message: string,
    /** Whether another server (or the same one later) may answer it. */
    readonly retryable: boolean,
  ) {
    super(message);
  }
}

/** The first characters of an answer's body (raw text: it may not be JSON), on one line, for a message. */
function bodyExcerpt(text: string, limit = 200): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > limit ? `${flat.slice(0, limit)}...` : flat;
}

/** Why fetch failed, in words: a timeout, or the socket's error code (ECONNREFUSED, ECONNRESET). */
function fetchFailure(error: unknown, timeoutMs: number): string {
  const e = error as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e.name === "TimeoutError" || e.name === "AbortError") return `no answer within ${timeoutMs / 1000} s`;
  const cause = e.cause?.code ?? e.cause?.message;
  return cause ? `${e.message ?? "fetch failed"} (${cause})` : (e.message ?? String(error));
}

/** `base` joined with the call's path, whatever slashes either has. */
function callUrl(base: string, call: EngineHttpCall): string {
  return `${base.replace(/\/+$/, "")}/${call.path.replace(/^\/+/, "")}`;
}

/**
 * Makes `call` on the server at `base` and returns its JSON answer (null for an empty body), or
 * its text for a call whose answer is text.
 * Node's fetch keeps connections alive between calls; the deadline covers the whole answer.
 */
export async function callServer(base: string, call: EngineHttpCall, timeoutMs: number): Promise<unknown> {
  const what = `${call.method} ${call.path}`;
  const signal = AbortSignal.timeout(timeoutMs);
  let status: number;
  let text: string;
  try {
    const response = await fetch(callUrl(base, call), {
      method: call.method,
      ...(call.body !== undefined
        ? { headers: { "content-type": "application/json" }, body: JSON.stringify(call.body) }
        : {}),
      signal,
    });
    status = response.status;
    text = await response.text();
  } catch (error) {
    throw new EngineCallError(`${what}: ${fetchFailure(error, timeoutMs)}`, true);
  }
  if (status >= 500) throw new EngineCallError(`${what} answered ${status}: ${bodyExcerpt(text)}`, true);
  if (status >= 400) throw new EngineCallError(`${what} answered ${status}: ${bodyExcerpt(text)}`, false);
  if (call.answer === "text") return text;
  if (text.trim() === "") return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new EngineCallError(`${what} answered what is not JSON: ${bodyExcerpt(text)}`, true);
  }
}
