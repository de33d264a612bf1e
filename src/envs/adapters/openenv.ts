// OpenEnv servers (openenv-core's create_fastapi_app): one WebSocket session on `/ws` per episode,
// since HTTP /reset and /step each make a fresh env. The action is the env's one declared tool
// (its arguments are the action's fields), compared at provision with the server's /schema.
// Episodes open at once are held to `max_sessions` (the server's max_concurrent_envs); a full
// server (CAPACITY_REACHED) and a refused connection are retried, then unavailable; a dropped
// connection or a time-out ends the episode as an env error (the server's env is gone with its
// socket). Wire format: docs/envs.md#kind-openenv.
import WebSocket from "ws";
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
import { backoffMs, classifyFetchError, classifyStatus, errorText, exchange, parseJson, sleep } from "./http-wire.js";
import { serverSlots } from "./session-slots.js";
import { requireToolsMatch } from "./tool-contract.js";

export type OpenEnvEnv = Extract<PlanEnv, { kind: "openenv" }>;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

function baseUrl(env: OpenEnvEnv, path: string, protocol?: "ws"): URL {
  const problem = httpEnvUrlProblem(env.url);
  if (problem) throw new EnvError(`OpenEnv server URL: ${problem.message}; ${problem.hint}`, "unavailable");
  const u = new URL(env.url);
  u.pathname = `${u.pathname.replace(/\/+$/, "")}/${path}`;
  u.hash = "";
  if (protocol) u.protocol = u.protocol === "https:" ? "wss:" : "ws:";
  return u;
}

/** OpenEnv's error codes (WSErrorCode) as fault kinds: ours to fix (protocol), the server's (crash), or a full server. */
function errorKind(code: unknown): EnvError["kind"] {
  if (code === "CAPACITY_REACHED") return "unavailable";
  if (code === "INVALID_JSON" || code === "UNKNOWN_TYPE" || code === "VALIDATION_ERROR") return "protocol";
  return "crash"; // EXECUTION_ERROR, FACTORY_ERROR, SESSION_ERROR, anything newer
}

/** One WebSocket session: JSON messages in order, each request awaiting the next message. */
class Session {
  private readonly queue: unknown[] = [];
  private waiter: ((v: unknown) => void) | undefined;
  private failure: EnvError | undefined;

  private constructor(
    private readonly ws: WebSocket,
    private readonly where: string,
  ) {
    ws.on("message", (data: Buffer) => {
      const parsed = parseJson(data.toString("utf8"));
      this.push(
        parsed.ok
          ? parsed.value
          : new EnvError(
              `OpenEnv server sent ${where} a message that is not JSON: ${data.toString("utf8").slice(0, 80)}`,
              "protocol",
            ),
      );
    });
    ws.on("error", (error: Error & { code?: string }) => {
      const tooLarge = error.code === "WS_ERR_UNSUPPORTED_MESSAGE_LENGTH";
      this.fail(
        new EnvError(
          tooLarge
            ? `OpenEnv server sent ${where} a message above the env's max_response_bytes`
            : `the connection to ${where} failed: ${errorText(error)}`,
          tooLarge ? "protocol" : "crash",
        ),
      );
    });
    ws.on("close", (code: number) =>
      this.fail(new EnvError(`OpenEnv server closed ${where} mid-episode (WebSocket close ${code})`, "crash")),
    );
  }

  private push(v: unknown): void {
    if (this.waiter) {
      const w = this.waiter;
      this.waiter = undefined;
      w(v);
    } else this.queue.push(v);
  }

  private fail(error: EnvError): void {
    this.failure ??= error;
    this.push(this.failure);
  }

  /** Opens `url`; a refused or failed handshake is an EnvError of its kind. */
  static open(url: URL, env: OpenEnvEnv): Promise<Session> {
    const where = `${url.origin}${url.pathname}`;
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, {
        handshakeTimeout: Math.min(env.timeout_s * 1000, 2 ** 31 - 1),
        maxPayload: env.max_response_bytes,
        perMessageDeflate: false,
        followRedirects: false,
      });
      const failed = (error: EnvError) => {
        ws.removeAllListeners();
        ws.on("error", () => undefined);
        ws.terminate();
        reject(error);
      };
      ws.once("unexpected-response", (_req, res) =>
        failed(
          new EnvError(
            `OpenEnv server refused the WebSocket at ${where} with HTTP ${res.statusCode ?? "?"}`,
            classifyStatus(res.statusCode ?? 500),
          ),
        ),
      );
      ws.once("error", (error: Error) => {
        const timedOut = /timed out/i.test(error.message);
        failed(
          new EnvError(
            `could not open the WebSocket at ${where}: ${errorText(error)}`,
            timedOut ? "timeout" : classifyFetchError(error),
          ),
        );
      });
      ws.once("open", () => {
        ws.removeAllListeners();
        resolve(new Session(ws, where));
      });
    });
  }

  /** Sends `message` and waits up to `timeoutS` for the answer; an error answer is an EnvError of its code's kind. */
  async request(message: object, timeoutS: number, what: string): Promise<Record<string, unknown>> {
    if (this.failure) throw this.failure;
    this.ws.send(JSON.stringify(message));
    let timer: NodeJS.Timeout | undefined;
    const answer =
      this.queue.length > 0
        ? this.queue.shift()
        : await new Promise<unknown>((resolve) => {
            this.waiter = resolve;
            timer = setTimeout(
              () =>
                resolve(
                  new EnvError(
                    `OpenEnv server did not answer '${what}' at ${this.where} within ${timeoutS} s`,
                    "timeout",
                  ),
                ),
              Math.min(timeoutS * 1000, 2 ** 31 - 1),
            );
          });
    clearTimeout(timer);
    this.waiter = undefined;
    if (answer instanceof EnvError) throw answer;
    if (!isObject(answer) || typeof answer.type !== "string")
      throw new EnvError(
        `OpenEnv server answered '${what}' at ${this.where} with something other than a {type, data} object`,
        "protocol",
      );
    const data = isObject(answer.data) ? answer.data : {};
    if (answer.type === "error")
      throw new EnvError(
        `OpenEnv server answered '${what}' at ${this.where} with error ${typeof data.code === "string" ? data.code : JSON.stringify(data.code ?? "?")}: ${typeof data.message === "string" ? data.message : JSON.stringify(data.message ?? "")}`,
        errorKind(data.code),
      );
    return answer;
  }

  /** Says close and closes the socket (the server then drops the session's env); never throws. */
  async close(): Promise<void> {
    if (this.ws.readyState === WebSocket.OPEN) {
      this.ws.send(JSON.stringify({ type: "close" }));
      this.ws.close(1000);
    }
    const closed = new Promise<void>((resolve) =>
      this.ws.readyState === WebSocket.CLOSED ? resolve() : this.ws.once("close", () => resolve()),
    );
    await Promise.race([closed, sleep(2000)]);
    this.ws.terminate();
  }
}

/** The observation's scalar fields as signals. */
function scalars(observation: Record<string, unknown>): Record<string, number | boolean | string> {
  const out: Record<string, number | boolean | string> = {};
  for (const [k, v] of Object.entries(observation))
    if ((typeof v === "number" && Number.isFinite(v)) || typeof v === "boolean" || typeof v === "string") out[k] = v;
  return out;
}

class OpenEnvInstance implements EnvInstance {
  private session: Session | undefined;
  private release: (() => void) | undefined;
  private last: Record<string, number | boolean | string> = {};
  private lastReward = 0;
  private total = 0;

  constructor(
    private readonly env: OpenEnvEnv,
    private readonly task: number,
  ) {}

  private result(answer: Record<string, unknown>, what: string): { text: string; signals: Signals; done: boolean } {
    const data = answer.data;
    if (answer.type !== "observation" || !isObject(data) || !isObject(data.observation))
      throw new EnvError(
        `OpenEnv server answered '${what}' with a '${String(answer.type)}' message without an observation object`,
        "protocol",
      );
    const { observation } = data;
    if (data.done !== undefined && typeof data.done !== "boolean")
      throw new EnvError(`OpenEnv server's '${what}' answer has "done" that is not a boolean`, "protocol");
    if (
      data.reward !== undefined &&
      data.reward !== null &&
      !(typeof data.reward === "number" && Number.isFinite(data.reward)) &&
      typeof data.reward !== "boolean"
    )
      throw new EnvError(`OpenEnv server's '${what}' answer has "reward" that is not a finite number`, "protocol");
    const reward = Number(data.reward ?? 0);
    const field = this.env.observation_field;
    if (field !== null && !(field in observation))
      throw new EnvError(
        `OpenEnv server's observation has no field '${field}' (observation_field); it has ${Object.keys(observation).join(", ") || "none"}`,
        "protocol",
      );
    const shown = field === null ? observation : observation[field];
    const text = typeof shown === "string" ? shown : JSON.stringify(shown);
    this.last = scalars(observation);
    this.lastReward = reward;
    this.total += reward;
    return { text, signals: { ...this.last, reward, done: data.done === true }, done: data.done === true };
  }

  async reset(): Promise<Observation> {
    await this.close();
    this.total = 0;
    this.release = await serverSlots(this.env.url, this.env.max_sessions).acquire();
    try {
      for (let attempt = 0; ; attempt++) {
        try {
          this.session = await Session.open(baseUrl(this.env, "ws", "ws"), this.env);
          // The task id is the seed: every episode of a task (a group) starts from the same state.
          const { text, signals } = this.result(
            await this.session.request({ type: "reset", data: { seed: this.task } }, this.env.timeout_s, "reset"),
            "reset",
          );
          return { text, signals };
        } catch (error) {
          await this.session?.close();
          this.session = undefined;
          if (!(error instanceof EnvError && error.kind === "unavailable") || attempt >= this.env.retries) throw error;
          await sleep(backoffMs(attempt + 1));
        }
      }
    } catch (error) {
      this.release();
      this.release = undefined;
      throw error;
    }
  }

  async step(call: ToolCall): Promise<StepResult> {
    if (!this.session) throw new EnvError("'step' before reset: the episode has no OpenEnv session", "protocol");
    const { text, signals, done } = this.result(
      await this.session.request({ type: "step", data: call.arguments ?? {} }, this.env.timeout_s, "step"),
      "step",
    );
    return { text, signals, terminated: done };
  }

  async outcome(): Promise<Signals> {
    return { ...this.last, reward: this.lastReward, return: this.total };
  }

  async close(): Promise<void> {
    const session = this.session;
    this.session = undefined;
    await session?.close();
    this.release?.();
    this.release = undefined;
  }
}

/** GET a JSON answer from the server (provision's /health and /schema), retried while it is unavailable. */
async function getJson(env: OpenEnvEnv, path: string): Promise<unknown> {
  const url = baseUrl(env, path);
  const where = `'${path}' at ${url.origin}${url.pathname}`;
  for (let attempt = 0; ; attempt++) {
    try {
      const answer = await exchange(
        url,
        { method: "GET" },
        { timeoutS: env.timeout_s, maxBytes: env.max_response_bytes },
        where,
      );
      if (answer.status < 200 || answer.status > 299)
        throw new EnvError(`OpenEnv server answered HTTP ${answer.status} on ${where}`, classifyStatus(answer.status));
      const json = parseJson(answer.text);
      if (!json.ok) throw new EnvError(`OpenEnv server answered ${where} with something that is not JSON`, "protocol");
      return json.value;
    } catch (error) {
      if (!(error instanceof EnvError && error.kind === "unavailable") || attempt >= env.retries) throw error;
      await sleep(backoffMs(attempt + 1));
    }
  }
}

export const openenvEnv: EnvKind<OpenEnvEnv> = {
  kind: "openenv",
  async create(env, task) {
    return new OpenEnvInstance(env, task);
  },
  vocabulary() {
    return [];
  },
  async provision(env, context) {
    await getJson(env, "health");
    const schema = await getJson(env, "schema");
    if (!isObject(schema) || !isObject(schema.action))
      throw new EnvError(`OpenEnv server's /schema at ${env.url} has no "action" JSON Schema`, "protocol");
    const [tool] = context.tools;
    if (!tool || context.tools.length !== 1)
      throw new EnvError(
        `env '${context.name}' offers ${context.tools.length} tools; an OpenEnv env's action is exactly one (arl check reports this as openenv-tools)`,
        "protocol",
      );
    requireToolsMatch(
      context.name,
      context.tools,
      new Map([[tool.name, schema.action]]),
      `the OpenEnv server at ${env.url} (its /schema action)`,
      context.log,
    );
    context.log(
      `env '${context.name}': OpenEnv server at ${env.url}: its action matches tool '${tool.name}'; at most ${env.max_sessions} episode${env.max_sessions === 1 ? "" : "s"} at once`,
    );
  },
};
