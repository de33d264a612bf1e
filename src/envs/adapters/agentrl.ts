// AgentRL's task protocol (AgentBench FC): a task worker (agentrl-worker, `python -m
// agentrl.worker`) or AgentRL's controller in front of workers. OpenAI messages in and out: the
// model's tool call goes in as an assistant message, the task's tool (and user) messages come back
// as the observation; `reward` (also as `success`), `status`, `finish` and `metric` become signals. Wire format and
// fault kinds: docs/envs.md#kind-agentrl. One server session per episode, cancelled on every path
// that ends the episode before the task finished it.
import { randomInt } from "node:crypto";
import {
  EnvError,
  type EnvInstance,
  type EnvKind,
  type Observation,
  type PromptMessage,
  type Signals,
  type StepResult,
} from "../../contracts/env.js";
import type { ToolCall } from "../../contracts/tool-calls.js";
import { httpEnvUrlProblem } from "../../plan/http-url.js";
import type { PlanEnv } from "../../plan/schema.js";
import { backoffMs, classifyStatus, exchange, parseJson, sleep } from "./http-wire.js";
import { serverSlots } from "./session-slots.js";
import { requireToolsMatch } from "./tool-contract.js";

export type AgentRlEnv = Extract<PlanEnv, { kind: "agentrl" }>;

type SampleIndex = number | string;
type Api = "get_indices" | "worker_status" | "start_sample" | "interact" | "cancel";

/** What one answer of start_sample or interact says (a worker's `env_out`, a controller's body). */
interface EnvOut {
  readonly messages: readonly Record<string, unknown>[];
  readonly tools: readonly unknown[] | undefined;
  readonly status: string;
  readonly finish: boolean;
  readonly signals: Signals;
}

/** The sample indices of each server and task, learned at provision (or at the first episode). */
const indicesByServer = new Map<string, readonly SampleIndex[]>();
const serverKey = (env: AgentRlEnv) => `${env.mode} ${env.url} ${env.task ?? ""}`;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

function apiUrl(env: AgentRlEnv, api: Api): URL {
  const problem = httpEnvUrlProblem(env.url);
  if (problem) throw new EnvError(`AgentRL server URL: ${problem.message}; ${problem.hint}`, "unavailable");
  const u = new URL(env.url);
  u.pathname = `${u.pathname.replace(/\/+$/, "")}/${api}`;
  u.hash = "";
  if (api === "get_indices" && env.mode === "controller" && env.task !== null) u.searchParams.set("name", env.task);
  return u;
}

/** One call; a non-2xx status is an EnvError (406, a worker at its concurrency: unavailable). */
async function call(
  env: AgentRlEnv,
  api: Api,
  body?: object,
  headers: Record<string, string> = {},
): Promise<{ value: unknown; headers: Headers }> {
  const url = apiUrl(env, api);
  const where = `'${api}' at ${url.origin}${url.pathname}`;
  const answer = await exchange(
    url,
    body === undefined
      ? { method: "GET", headers }
      : { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) },
    { timeoutS: env.timeout_s, maxBytes: env.max_response_bytes },
    where,
  );
  const json = parseJson(answer.text);
  if (answer.status < 200 || answer.status > 299) {
    const detail =
      json.ok && isObject(json.value) && typeof json.value.detail === "string"
        ? json.value.detail
        : answer.text.trim().slice(0, 200);
    const kind =
      answer.status === 406
        ? "unavailable"
        : answer.status >= 300 && answer.status < 400
          ? "protocol"
          : classifyStatus(answer.status);
    throw new EnvError(`AgentRL server answered HTTP ${answer.status} on ${where}${detail ? `: ${detail}` : ""}`, kind);
  }
  if (!json.ok)
    throw new EnvError(
      `AgentRL server answered ${where} with something that is not JSON: ${answer.text.slice(0, 80)}`,
      "protocol",
    );
  return { value: json.value, headers: answer.headers };
}

/** A call tried up to 1 + retries times while it fails for want of the server (no connection, full, 5xx). */
async function callRetried(
  env: AgentRlEnv,
  api: Api,
  body?: object,
  headers?: Record<string, string>,
): Promise<{ value: unknown; headers: Headers }> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await call(env, api, body, headers);
    } catch (error) {
      const retryable = error instanceof EnvError && (error.kind === "unavailable" || error.kind === "crash");
      if (!retryable || attempt >= env.retries) throw error;
      await sleep(backoffMs(attempt + 1));
    }
  }
}

async function sampleIndices(env: AgentRlEnv): Promise<readonly SampleIndex[]> {
  const known = indicesByServer.get(serverKey(env));
  if (known) return known;
  const { value } = await callRetried(env, "get_indices");
  if (
    !Array.isArray(value) ||
    !value.every((i) => (typeof i === "number" && Number.isSafeInteger(i)) || typeof i === "string")
  )
    throw new EnvError(
      `AgentRL server's get_indices answer is not a JSON array of sample indices (integers or strings)`,
      "protocol",
    );
  // -1 stands for a custom task, not a sample.
  const indices = (value as SampleIndex[]).filter((i) => i !== -1);
  if (indices.length < env.tasks)
    throw new EnvError(
      `AgentRL server has ${indices.length} samples${env.task ? ` of task '${env.task}'` : ""}, but the plan declares tasks: ${env.tasks}; write tasks: ${indices.length} or fewer`,
      "protocol",
    );
  indicesByServer.set(serverKey(env), indices);
  return indices;
}

/** A message's text: a string content, or the text parts of a list. */
function messageText(m: Record<string, unknown>): string {
  const c = m.content;
  if (typeof c === "string") return c;
  if (Array.isArray(c)) return c.map((p) => (isObject(p) && typeof p.text === "string" ? p.text : "")).join("");
  return "";
}

function envOut(v: unknown, where: string): EnvOut {
  if (!isObject(v)) throw new EnvError(`AgentRL server's ${where} answer is not a JSON object`, "protocol");
  const bad = (field: string, what: string) =>
    new EnvError(`AgentRL server's ${where} answer has ${field} that is not ${what}`, "protocol");
  const messages = v.messages ?? [];
  if (!Array.isArray(messages) || !messages.every(isObject)) throw bad('"messages"', "a list of message objects");
  if (v.tools !== undefined && v.tools !== null && !Array.isArray(v.tools)) throw bad('"tools"', "a list");
  if (v.finish !== undefined && typeof v.finish !== "boolean") throw bad('"finish"', "a boolean");
  if (v.status !== undefined && typeof v.status !== "string") throw bad('"status"', "a string");
  const reward = v.reward ?? 0;
  if (typeof reward !== "number" || !Number.isFinite(reward)) throw bad('"reward"', "a finite number");
  const metric = v.metric ?? v.metrics ?? {}; // a worker says metric, the controller's client reads metrics
  if (!isObject(metric)) throw bad('"metric"', "a JSON object");
  const finish = v.finish === true;
  const status = typeof v.status === "string" ? v.status : finish ? "unknown" : "running";
  const signals: Record<string, number | boolean | string> = {};
  for (const [k, x] of Object.entries(metric)) {
    if (typeof x === "number" && !Number.isFinite(x)) throw bad(`metric "${k}"`, "a finite number");
    if (typeof x === "number" || typeof x === "boolean" || typeof x === "string") signals[k] = x;
  }
  // `success` is the name ARL's envs give their own score (eval.success's default); AgentBench's
  // tasks score success as their reward (0 or 1; WebShop's graded in [0, 1]).
  Object.assign(signals, { reward, success: reward, status, completed: status === "completed" });
  if (status === "task error")
    throw new EnvError(`the AgentRL task failed on its side (status 'task error') at ${where}`, "crash");
  if (status === "cancelled") throw new EnvError(`the AgentRL server cancelled the session at ${where}`, "crash");
  return {
    messages,
    tools: Array.isArray(v.tools) ? v.tools : undefined,
    status,
    finish: finish || status !== "running",
    signals,
  };
}

/** The tools a server sent, by name: OpenAI function tools, or Anthropic tools (input_schema). */
function servedTools(tools: readonly unknown[]): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (const t of tools) {
    if (isObject(t) && isObject(t.function) && typeof t.function.name === "string")
      out.set(t.function.name, t.function.parameters ?? {});
    else if (isObject(t) && typeof t.name === "string") out.set(t.name, t.input_schema ?? {});
    else
      throw new EnvError(
        `AgentRL server sent a tool that is neither an OpenAI nor an Anthropic tool definition: ${JSON.stringify(t).slice(0, 120)}`,
        "protocol",
      );
  }
  return out;
}

class AgentRlInstance implements EnvInstance {
  /** The server's session while it runs (undefined before start_sample and once finished or cancelled). */
  private session: number | undefined;
  private last: EnvOut | undefined;
  private calls = 0;
  private release: (() => void) | undefined;

  constructor(
    private readonly env: AgentRlEnv,
    private readonly task: number,
  ) {}

  /** start_sample; returns the session id and the first answer. A worker's session id is ours. */
  private async start(index: SampleIndex): Promise<{ session: number; out: EnvOut }> {
    const worker = this.env.mode === "worker";
    const ours = randomInt(1, 2 ** 47);
    const body = worker ? { index, session_id: ours } : { name: this.env.task, index, custom_task: null };
    const { value, headers } = await callRetried(this.env, "start_sample", body);
    const header = headers.get("session_id");
    const session = worker ? ours : header === null || !/^[0-9]+$/.test(header) ? Number.NaN : Number(header);
    if (!Number.isSafeInteger(session))
      throw new EnvError(
        `AgentRL controller's start_sample answer has no integer session_id header (got ${header === null ? "none" : `'${header}'`})`,
        "protocol",
      );
    try {
      return { session, out: envOut(value, "start_sample") };
    } catch (error) {
      await this.cancel(session).catch(() => undefined);
      throw error;
    }
  }

  private async cancel(session: number): Promise<void> {
    const worker = this.env.mode === "worker";
    try {
      await callRetried(
        this.env,
        "cancel",
        worker ? { session_id: session } : {},
        worker ? {} : { session_id: String(session) },
      );
    } catch (error) {
      // 400 "No such session": the task had already ended it.
      if (!(error instanceof EnvError && error.kind === "protocol" && /HTTP 400/.test(error.message))) throw error;
    }
  }

  async reset(): Promise<Observation> {
    await this.close().catch(() => undefined);
    const indices = await sampleIndices(this.env);
    const index = indices[this.task];
    if (index === undefined)
      throw new EnvError(`task ${this.task} is past the AgentRL server's ${indices.length} samples`, "protocol");
    if (this.env.mode === "worker") this.release = await serverSlots(this.env.url, Number.MAX_SAFE_INTEGER).acquire();
    try {
      const { session, out } = await this.start(index);
      this.session = out.finish ? undefined : session;
      this.last = out;
      const messages: PromptMessage[] = out.messages.map((m) => ({
        role: m.role === "system" || m.role === "assistant" ? m.role : "user",
        content: messageText(m),
      }));
      return { text: messages.map((m) => m.content).join("\n"), messages, signals: out.signals };
    } catch (error) {
      this.release?.();
      throw error;
    }
  }

  /** Sends one assistant message; the answer's messages are the observation. */
  private async send(message: Record<string, unknown>): Promise<EnvOut> {
    const session = this.session;
    if (session === undefined)
      throw new EnvError(
        this.last?.finish
          ? `the AgentRL task already ended (status '${this.last.status}')`
          : "'interact' before start_sample: the episode has no server session",
        "protocol",
      );
    const worker = this.env.mode === "worker";
    const { value } = await call(
      this.env,
      "interact",
      worker ? { session_id: session, messages: [message] } : { messages: [message] },
      worker ? {} : { session_id: String(session) },
    );
    if (worker && !isObject(value))
      throw new EnvError("AgentRL worker's interact answer is not a JSON object", "protocol");
    const out = envOut(worker ? (value as Record<string, unknown>).env_out : value, "interact");
    this.last = out;
    if (out.finish) this.session = undefined; // the task ended it; nothing left to cancel
    return out;
  }

  async step(call: ToolCall): Promise<StepResult> {
    const id = `call_${this.calls++}`;
    const out = await this.send({
      role: "assistant",
      content: null,
      tool_calls: [
        { id, type: "function", function: { name: call.name, arguments: JSON.stringify(call.arguments ?? {}) } },
      ],
    });
    return { text: out.messages.map(messageText).join("\n"), signals: out.signals, terminated: out.finish };
  }

  /** A turn without a tool call goes to the task as the assistant's text (KG's "Final Answer: #3"); the episode ends. */
  async finalAnswer(text: string): Promise<Signals> {
    const out = await this.send({ role: "assistant", content: text });
    return out.signals;
  }

  async outcome(): Promise<Signals> {
    if (!this.last) throw new EnvError("'outcome' before start_sample", "protocol");
    return this.last.signals;
  }

  async close(): Promise<void> {
    const session = this.session;
    this.session = undefined;
    try {
      if (session !== undefined) await this.cancel(session);
    } finally {
      this.release?.();
      this.release = undefined;
    }
  }

  /** Provision's look at the server: its concurrency (a worker's) and the tools of its first sample. */
  async probe(): Promise<Map<string, unknown>> {
    if (this.env.mode === "worker") {
      const { value } = await callRetried(this.env, "worker_status");
      if (
        !isObject(value) ||
        typeof value.concurrency !== "number" ||
        !Number.isSafeInteger(value.concurrency) ||
        value.concurrency < 1
      )
        throw new EnvError('AgentRL worker\'s worker_status answer has no positive integer "concurrency"', "protocol");
      serverSlots(this.env.url, value.concurrency).setLimit(value.concurrency);
    }
    await this.reset();
    try {
      const tools = this.last?.tools;
      if (tools === undefined)
        throw new EnvError(
          "AgentRL server's start_sample answer lists no tools, so the declared ones cannot be checked",
          "protocol",
        );
      return servedTools(tools);
    } finally {
      await this.close();
    }
  }
}

export const agentrlEnv: EnvKind<AgentRlEnv> = {
  kind: "agentrl",
  async create(env, task) {
    return new AgentRlInstance(env, task);
  },
  vocabulary() {
    return [];
  },
  async provision(env, context) {
    indicesByServer.delete(serverKey(env)); // a new run learns the server afresh
    const served = await new AgentRlInstance(env, 0).probe();
    requireToolsMatch(
      context.name,
      context.tools,
      served,
      `the AgentRL ${env.mode} at ${env.url}${env.task ? ` (task '${env.task}')` : ""}`,
      context.log,
    );
    context.log(
      `env '${context.name}': AgentRL ${env.mode} at ${env.url} serves ${indicesByServer.get(serverKey(env))?.length ?? 0} samples; its tools match the plan's`,
    );
  },
};
