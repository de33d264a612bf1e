// The HTTP plumbing the env adapters that call servers share (http.ts, agentrl.ts, openenv.ts):
// one request with a time limit and a capped answer body, and the classification of what failed
// into the env fault kinds (docs/envs.md#faults). Every failure is an EnvError.
import { EnvError } from "../../contracts/env.js";

type ErrorKind = EnvError["kind"];

/** Error codes (Node's and undici's) meaning no connection to the server could be made. */
const UNAVAILABLE_CODES = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EAI_NONAME",
  "EAI_FAIL",
  "EAI_NODATA",
  "EHOSTUNREACH",
  "EHOSTDOWN",
  "ENETUNREACH",
  "ENETDOWN",
  "EADDRNOTAVAIL",
  "UND_ERR_CONNECT_TIMEOUT",
]);
const TIMEOUT_CODES = new Set(["ETIMEDOUT", "UND_ERR_HEADERS_TIMEOUT", "UND_ERR_BODY_TIMEOUT"]);

/** The error code of a fetch failure: on the error, its cause, or the first of an AggregateError. */
function errorCode(error: unknown): string | undefined {
  for (let e: unknown = error, depth = 0; e && typeof e === "object" && depth < 5; depth++) {
    const o = e as { code?: unknown; cause?: unknown; errors?: unknown };
    if (typeof o.code === "string") return o.code;
    if (Array.isArray(o.errors) && o.errors.length > 0) e = o.errors[0];
    else e = o.cause;
  }
  return undefined;
}

export function errorText(error: unknown): string {
  const code = errorCode(error);
  const cause = (error as { cause?: unknown } | undefined)?.cause;
  const message =
    cause instanceof Error && cause.message ? cause.message : error instanceof Error ? error.message : String(error);
  return code && !message.includes(code) ? `${code}: ${message}` : message;
}

/** The kind of a failure thrown by fetch (or by reading a body) that was not our timeout. */
export function classifyFetchError(error: unknown): ErrorKind {
  const code = errorCode(error);
  if (code && UNAVAILABLE_CODES.has(code)) return "unavailable";
  if (code && TIMEOUT_CODES.has(code)) return "timeout";
  if (error instanceof Error && (error.name === "AbortError" || error.name === "TimeoutError")) return "timeout";
  return "crash";
}

/** The kind of a non-2xx status. */
export function classifyStatus(status: number): ErrorKind {
  if (status === 408) return "timeout";
  if (status === 429) return "unavailable";
  if (status >= 500) return "crash";
  return "protocol";
}

/** The body as text, refused as soon as it grows past `cap` bytes (the rest is not read). */
async function cappedText(response: Response, cap: number, where: string): Promise<string> {
  const tooLarge = (bytes: string) =>
    new EnvError(
      `env server's answer to ${where} is ${bytes} bytes, above the env's max_response_bytes (${cap})`,
      "protocol",
    );
  const declared = Number(response.headers.get("content-length") ?? Number.NaN);
  if (Number.isFinite(declared) && declared > cap) {
    await response.body?.cancel().catch(() => undefined);
    throw tooLarge(String(declared));
  }
  if (!response.body) return "";
  const reader: ReadableStreamDefaultReader<Uint8Array> = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > cap) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge(`more than ${cap}`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** A server's answer: its status, headers and whole body (at most the cap). */
export interface WireAnswer {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
}

/** How long one request may take, body included, and the largest body read. */
export interface WireLimits {
  readonly timeoutS: number;
  readonly maxBytes: number;
}

/**
 * One request, no redirect followed, aborted after `limits.timeoutS`; a failure to connect, a
 * time-out, a body past the cap or a cut connection is an EnvError of its kind. `where` names
 * the call in messages ("'reset' at http://host/path").
 */
export async function exchange(
  url: URL,
  init: { readonly method: "GET" | "POST"; readonly headers?: Record<string, string>; readonly body?: string },
  limits: WireLimits,
  where: string,
): Promise<WireAnswer> {
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(
    () => {
      timedOut = true;
      controller.abort();
    },
    Math.min(limits.timeoutS * 1000, 2 ** 31 - 1),
  ); // setTimeout's largest delay
  try {
    const response = await fetch(url, {
      method: init.method,
      headers: { accept: "application/json", ...init.headers },
      body: init.body,
      redirect: "manual",
      signal: controller.signal,
    });
    return {
      status: response.status,
      headers: response.headers,
      text: await cappedText(response, limits.maxBytes, where),
    };
  } catch (error) {
    if (error instanceof EnvError) throw error;
    if (timedOut) throw new EnvError(`env server did not answer ${where} within ${limits.timeoutS} s`, "timeout");
    const kind = classifyFetchError(error);
    const what =
      kind === "unavailable"
        ? "could not reach env server for"
        : kind === "timeout"
          ? "timed out on"
          : "connection failed during";
    throw new EnvError(`${what} ${where}: ${errorText(error)}`, kind);
  } finally {
    clearTimeout(timer);
  }
}

/** A parsed JSON body, or undefined when the body is empty or not JSON. */
export function parseJson(text: string): { readonly ok: true; readonly value: unknown } | { readonly ok: false } {
  if (text.length === 0) return { ok: true, value: undefined };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

const BACKOFF_BASE_MS = 100;
const BACKOFF_MAX_MS = 2000;

/** The wait before try `attempt` (1, 2, ...): 100 ms, 200 ms, 400 ms, ... at most 2 s. */
export const backoffMs = (attempt: number) => Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** (attempt - 1));
