// External environments as HTTP task servers speaking ARL's own protocol, one server session
// per episode (isolated). The adapter speaks only to the URL the plan gives (no proxies, no
// redirects followed) with Node's global fetch.
//
// Wire format. Every call is `POST {url}/{op}` with a JSON object body (Content-Type:
// application/json) and is answered with a JSON object; `{url}` is the plan's `url` without a
// trailing slash (its query string, if any, is kept).
//
//   POST {url}/reset    {"task": <plan's task name, or null>, "index": <task id>, "seed": <int>}
//                    -> {"session": <string | integer>, "observation": <string>,
//                        "signals"?: {name: number | bool | string}, "tools"?: [<tool>, ...]}
//   POST {url}/step     {"session": <session>, "call": {"name": <string>, "arguments": {...}}}
//                    -> {"observation": <string>, "terminated": <bool>, "signals"?: {...}}
//   POST {url}/outcome  {"session": <session>}
//                    -> {"signals": {...}}
//   POST {url}/close    {"session": <session>}
//                    -> anything (body ignored)
//
// Fields marked `?` may be left out (signals default to {}; tools are accepted and not used:
// the plan declares the tools). Signal values other than numbers, booleans and strings are
// dropped, as with the subprocess adapter; a number that is not finite (1e400 parses as
// Infinity) is a protocol error. An answer body larger than the env's `max_response_bytes`
// (default 8 MiB) is a protocol error, found while it streams in (never buffered past the cap). A bad tool call (unknown name, bad arguments) is the
// policy's failure: the server answers it with an error observation, not an HTTP error. A
// server-side failure is a non-2xx status, ideally with a body {"error": "<message>"}, or a 2xx
// body {"error": "<message>"} (a server-reported error). Servers must keep a session until its
// close, and make reset, outcome and close safe to repeat (outcome answers the same signals;
// close of an unknown session may answer 404, which counts as closed).
//
// Time limits and retries. Each call, body included, is aborted after the plan's `timeout_s`.
// reset, outcome and close are idempotent and are tried up to 1 + `retries` times, waiting
// 100 ms, 200 ms, 400 ms, ... (at most 2 s) between tries, after any failure except a protocol
// one (connection failures, timeouts, 408/429/5xx statuses, server-reported errors); an
// unusable URL (src/plan/http-url.ts: not http(s), credentials, a port fetch blocks) fails at
// once, and `arl check` reports it first. step may have side effects and is tried once: a failed step is an
// env error. A reset retried after a timeout may leave the server a session it never hears of
// again (its answer was lost): servers should expire idle sessions.
//
// Failures are always EnvError (nothing else leaves an instance), of kind:
//   unavailable  no connection: refused, DNS failure, host/network unreachable, an unusable
//                URL; also a 429 (server overloaded)
//   timeout      no complete answer within timeout_s; also a 408
//   protocol     the answer breaks this format: not JSON, not an object, a missing or mistyped
//                field, a redirect, a 4xx status (the server rejected our request)
//   crash        a 5xx status (after retries, for idempotent calls), a server-reported error,
//                or the connection closed mid-call
import {
  EnvError,
  type EnvInstance,
  type EnvKind,
  type Observation,
  type Signals,
  type StepResult,
} from "../../contracts/env.js";
import type { ToolCall } from "../../contracts/tool-calls.js";
import { httpEnvUrlProblem } from "../../plan/http-url.js";
import type { PlanEnv } from "../../plan/schema.js";
import { defined } from "../../contracts/checked.js";
import { backoffMs, classifyStatus, errorText, exchange, parseJson, sleep } from "./http-wire.js";

export type HttpEnv = Extract<PlanEnv, { kind: "http" }>;

type Op = "reset" | "step" | "outcome" | "close";
type ErrorKind = EnvError["kind"];
type Session = string | number;

/** Retried for idempotent calls: anything but a protocol failure, which would only repeat. */
const retryable = (kind: ErrorKind) => kind !== "protocol";

function endpoint(url: string, op: Op): URL {
  const problem = httpEnvUrlProblem(url);
  if (problem) throw new EnvError(`env server URL: ${problem.message}; ${problem.hint}`, "unavailable");
  const u = new URL(url);
  u.pathname = `${u.pathname.replace(/\/+$/, "")}/${op}`;
  u.hash = "";
  return u;
}

function signals(v: unknown, where: string): Signals {
  if (v === undefined || v === null) return {};
  if (typeof v !== "object" || Array.isArray(v))
    throw new EnvError(`env server's ${where} answer has "signals" that is not a JSON object`, "protocol");
  const out: Record<string, number | boolean | string> = {};
  for (const [k, x] of Object.entries(v)) {
    if (typeof x === "number" && !Number.isFinite(x))
      throw new EnvError(
        `env server's ${where} answer has signal "${k}" = ${x}, which is not a finite number`,
        "protocol",
      );
    if (typeof x === "number" || typeof x === "boolean" || typeof x === "string") out[k] = x;
  }
  return out;
}

function observation(r: Record<string, unknown>, where: string): string {
  if (typeof r.observation !== "string")
    throw new EnvError(`env server's ${where} answer has no string "observation"`, "protocol");
  return r.observation;
}

export class HttpInstance implements EnvInstance {
  private session: Session | undefined;

  constructor(
    private readonly env: HttpEnv,
    private readonly task: number,
    private readonly seed: number,
  ) {}

  /** The server's session of the current episode (undefined before reset and after close). */
  get sessionId(): Session | undefined {
    return this.session;
  }

  /** One try of one call; every failure becomes an EnvError. */
  private async once(op: Op, url: URL, body: object): Promise<Record<string, unknown>> {
    const where = `'${op}' at ${url.origin}${url.pathname}`;
    let payload: string;
    try {
      payload = JSON.stringify(body);
    } catch (error) {
      throw new EnvError(`could not encode the ${op} request as JSON: ${(error as Error).message}`, "protocol");
    }
    const answer = await exchange(
      url,
      { method: "POST", headers: { "content-type": "application/json" }, body: payload },
      { timeoutS: this.env.timeout_s, maxBytes: this.env.max_response_bytes },
      where,
    );
    const { status, text } = answer;

    const json = parseJson(text);
    const isJson = json.ok;
    const parsed = json.ok ? json.value : undefined;
    const reported =
      isJson && parsed && typeof parsed === "object" && typeof (parsed as { error?: unknown }).error === "string"
        ? (parsed as { error: string }).error
        : undefined;

    if (status < 200 || status > 299) {
      if (op === "close" && status === 404) return {};
      const detail = reported ?? text.trim().slice(0, 200);
      const what = status >= 300 && status < 400 ? "redirected (not followed)" : `answered HTTP ${status}`;
      throw new EnvError(
        `env server ${what} on ${where}${detail ? `: ${detail}` : ""}`,
        status >= 300 && status < 400 ? "protocol" : classifyStatus(status),
      );
    }
    if (op === "close") return {};
    if (!isJson)
      throw new EnvError(
        `env server answered ${where} with something that is not JSON: ${text.slice(0, 80)}`,
        "protocol",
      );
    if (!parsed || typeof parsed !== "object" || Array.isArray(parsed))
      throw new EnvError(`env server answered ${where} with something other than a JSON object`, "protocol");
    if (reported !== undefined) throw new EnvError(`env server reported an error on ${where}: ${reported}`, "crash");
    return parsed as Record<string, unknown>;
  }

  /** A call with retries (idempotent ones only) and backoff; throws the last EnvError. */
  private async call(op: Op, body: object): Promise<Record<string, unknown>> {
    const url = endpoint(this.env.url, op); // an unusable URL fails at once, without retries
    const tries = op === "step" ? 1 : 1 + this.env.retries;
    let last: EnvError | undefined;
    for (let attempt = 0; attempt < tries; attempt++) {
      if (attempt > 0) await sleep(backoffMs(attempt));
      try {
        return await this.once(op, url, body);
      } catch (error) {
        last =
          error instanceof EnvError
            ? error
            : new EnvError(`unexpected failure of '${op}': ${errorText(error)}`, "crash");
        if (!retryable(last.kind)) break;
      }
    }
    const failure = defined(last, "the error of the last attempt");
    if (tries > 1 && retryable(failure.kind))
      throw new EnvError(`${failure.message} (after ${tries} tries)`, failure.kind);
    throw failure;
  }

  private requireSession(op: Op): Session {
    if (this.session === undefined)
      throw new EnvError(`'${op}' before reset: the episode has no server session`, "protocol");
    return this.session;
  }

  async reset(): Promise<Observation> {
    if (this.session !== undefined) await this.close().catch(() => undefined);
    const r = await this.call("reset", { task: this.env.task, index: this.task, seed: this.seed });
    const session = r.session;
    if (!(
      (typeof session === "string" && session.length > 0) ||
      (typeof session === "number" && Number.isSafeInteger(session))
    ))
      throw new EnvError(`env server's reset answer has no "session" (a non-empty string or an integer)`, "protocol");
    this.session = session;
    if (r.tools !== undefined && !Array.isArray(r.tools))
      throw new EnvError(`env server's reset answer has "tools" that is not an array`, "protocol");
    return { text: observation(r, "reset"), signals: signals(r.signals, "reset") };
  }

  async step(call: ToolCall): Promise<StepResult> {
    const session = this.requireSession("step");
    const r = await this.call("step", { session, call: { name: call.name, arguments: call.arguments ?? {} } });
    if (typeof r.terminated !== "boolean")
      throw new EnvError(`env server's step answer has no boolean "terminated"`, "protocol");
    return { text: observation(r, "step"), signals: signals(r.signals, "step"), terminated: r.terminated };
  }

  async outcome(): Promise<Signals> {
    const session = this.requireSession("outcome");
    const r = await this.call("outcome", { session });
    if (!r.signals || typeof r.signals !== "object" || Array.isArray(r.signals))
      throw new EnvError(`env server's outcome answer has no "signals" object`, "protocol");
    return signals(r.signals, "outcome");
  }

  async close(): Promise<void> {
    const session = this.session;
    if (session === undefined) return;
    this.session = undefined;
    await this.call("close", { session });
  }
}

export const httpEnv: EnvKind<HttpEnv> = {
  kind: "http",
  async create(env, task, seed) {
    return new HttpInstance(env, task, seed);
  },
  vocabulary() {
    return [];
  },
};
