// The http env kind against the reference task server (runtime-gpu/reference_env_server.py,
// started here as a child process on 127.0.0.1): full episodes, isolated sessions, timeouts,
// retries and the classification of every failure kind, a closed port, and a run end to end
// through the orchestrator with the scripted trainer double and an injected step failure.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync } from "node:fs";
import { createServer as createHttpServer, type ServerResponse } from "node:http";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { readBuffer } from "../../src/episode/buffer.js";
import { httpEnv, type HttpEnv, type HttpInstance } from "../../src/envs/adapters/http.js";
import { classifyFetchError, classifyStatus } from "../../src/envs/adapters/http-wire.js";
import { FETCH_BLOCKED_PORTS } from "../../src/plan/http-url.js";
import { envKinds } from "../../src/envs/registry.js";
import { EnvError, type EnvInstance } from "../../src/contracts/env.js";
import { executePlan } from "../../src/runtime/orchestrator.js";
import { RunDirectory } from "../../src/runtime/run-dir.js";
import { splitTasks } from "../../src/plan/splits.js";
import type { ToolCall } from "../../src/contracts/tool-calls.js";
import { compilePlans, COUNTER_SIGNALS_AND_TOOLS } from "../helpers/plans.js";

const PYTHON = "/usr/bin/python3";
const serverScript = fileURLToPath(new URL("../../runtime-gpu/reference_env_server.py", import.meta.url));
const trainerScript = fileURLToPath(new URL("../doubles/scripted-trainer.mjs", import.meta.url));
const trainer = { file: process.execPath, args: [trainerScript] };

// The server's default fault indices (see the server's docstring).
const FAULT = {
  step_500: 1000,
  step_sleep: 1001,
  step_close: 1002,
  step_bad_json: 1003,
  step_missing: 1004,
  step_error: 1005,
  reset_500_once: 1006,
  reset_sleep_once: 1007,
  reset_close_once: 1008,
  reset_500: 1009,
  reset_400: 1010,
  outcome_500_once: 1011,
  close_500: 1012,
} as const;
const SLEEP_S = 2;

interface Server {
  readonly url: string;
  readonly child: ChildProcess;
  stop(): Promise<number | null>;
}

async function startServer(args: string[] = []): Promise<Server> {
  const child = spawn(PYTHON, [serverScript, "--port", "0", ...args], { stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (c: Buffer) => (stderr += c.toString("utf8")));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const first = await Promise.race([lines.next(), exited.then(() => undefined)]);
  const match = first && !first.done ? /^listening on (http:\/\/127\.0\.0\.1:(\d+))$/.exec(first.value) : null;
  if (!match) {
    child.kill("SIGKILL");
    throw new Error(`the reference env server did not start: ${first && !first.done ? first.value : ""} ${stderr}`);
  }
  return {
    url: match[1]!,
    child,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      return exited;
    },
  };
}

async function json(url: string): Promise<any> {
  return (await fetch(url)).json();
}

/** A free loopback port with nothing listening on it. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const call = (name: string, args: Record<string, unknown> = {}): ToolCall => ({ name, arguments: args });

let server: Server;
let seedCounter = 100;
const open: EnvInstance[] = [];

function makeEnv(overrides: Partial<HttpEnv> = {}): HttpEnv {
  return {
    kind: "http",
    description: null,
    version: "1",
    tasks: 2000,
    split: { train: 0.8, valid: 0, test: 0.2 },
    weight: 1,
    signals: {},
    optimal_steps: null,
    budget_is_task_rule: false,
    reward_range: [0, 1],
    timeout_s: 5,
    retries: 2,
    task: "counter",
    url: server.url,
    max_response_bytes: 8 * 1024 * 1024, // the spec's default
    ...overrides,
  };
}

/** A new instance; a fresh seed each time, so the server's "once" faults fire again. */
async function instance(task: number, overrides: Partial<HttpEnv> = {}, seed = seedCounter++): Promise<HttpInstance> {
  const env = (await httpEnv.create(makeEnv(overrides), task, seed)) as HttpInstance;
  open.push(env);
  return env;
}

/** The EnvError a promise rejects with (and that it is one: nothing else may leave an instance). */
async function failure(p: Promise<unknown>): Promise<EnvError> {
  const error = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, "expected an EnvError").toBeInstanceOf(EnvError);
  return error as EnvError;
}

const counts = async (index: number): Promise<Record<string, number>> =>
  (await json(`${server.url}/stats`)).by_index[String(index)] ?? {};

beforeAll(async () => {
  server = await startServer(["--sleep-s", String(SLEEP_S)]);
});

afterEach(async () => {
  await Promise.all(open.splice(0).map((e) => e.close().catch(() => undefined)));
});

afterAll(async () => {
  const code = await server?.stop();
  expect(code).toBe(0);
});

describe("http env: episodes against the reference server", () => {
  it("is registered as the kind 'http'", () => {
    expect(envKinds.get("http")).toBe(httpEnv);
    expect(httpEnv.vocabulary(makeEnv())).toEqual([]);
  });

  it("plays a full episode to success: reset, steps, outcome, close", async () => {
    const env = await instance(2);
    const start = await env.reset();
    expect(start).toEqual({ text: "Call step 3 times.", signals: { progress: 0 } });
    expect(typeof env.sessionId).toBe("string");
    const noop = await env.step(call("noop"));
    expect(noop).toEqual({ text: "count 0", signals: { progress: 0 }, terminated: false });
    await env.step(call("step"));
    const second = await env.step(call("step"));
    expect(second.terminated).toBe(false);
    expect(second.signals.progress).toBeCloseTo(2 / 3);
    const last = await env.step(call("step"));
    expect(last).toEqual({ text: "count 3", signals: { progress: 1 }, terminated: true });
    expect(await env.outcome()).toEqual({ success: true, steps: 4 });
    // outcome is idempotent.
    expect(await env.outcome()).toEqual({ success: true, steps: 4 });
    const before = (await json(`${server.url}/stats`)).sessions as number;
    await env.close();
    expect(env.sessionId).toBeUndefined();
    expect((await json(`${server.url}/stats`)).sessions).toBe(before - 1);
    await env.close(); // a second close is a no-op
  });

  it("serves the 'reach' family (the default for task null) and a URL with a path prefix", async () => {
    const env = await instance(3, { task: null, url: `${server.url}/agentbench/reach/` });
    const start = await env.reset();
    expect(start.text).toBe("The value is 4. Make it exactly 8 with add (1, 2 or 3) and double.");
    expect(start.signals).toEqual({ value: 4, remaining: 4 });
    // A bad tool call is the policy's failure: an error observation, not an env error.
    const bad = await env.step(call("add", { amount: 9 }));
    expect(bad.text).toMatch(/^Error: add needs/);
    expect(bad.terminated).toBe(false);
    expect((await env.step(call("fly"))).text).toMatch(/^Error: unknown tool 'fly'/);
    expect(await env.step(call("double"))).toEqual({
      text: "The value is 8: the target.",
      signals: { value: 8, remaining: 0 },
      terminated: true,
    });
    expect(await env.outcome()).toEqual({ success: true, steps: 3 });
  });

  it("isolates concurrent sessions of the same task", async () => {
    const [a, b] = await Promise.all([instance(2), instance(2)]);
    await Promise.all([a.reset(), b.reset()]);
    expect(a.sessionId).not.toBe(b.sessionId);
    // Concurrent sessions (each one's own steps in order, as the harness sends them): a steps
    // three times while b steps once.
    const [aSteps, bSteps] = await Promise.all([
      (async () => [await a.step(call("step")), await a.step(call("step")), await a.step(call("step"))])(),
      (async () => [await b.step(call("step"))])(),
    ]);
    expect(aSteps.map((r) => r.text)).toEqual(["count 1", "count 2", "count 3"]);
    expect(aSteps.map((r) => r.terminated)).toEqual([false, false, true]);
    expect(bSteps.map((r) => [r.text, r.terminated])).toEqual([["count 1", false]]);
    expect(await a.outcome()).toEqual({ success: true, steps: 3 });
    expect(await b.outcome()).toEqual({ success: false, steps: 1 });
    const c = await instance(2);
    await c.reset();
    expect(await c.outcome()).toEqual({ success: false, steps: 0 });
  });

  it("runs many episodes in parallel without mixing them up", async () => {
    const envs = await Promise.all(Array.from({ length: 12 }, (_, i) => instance(i % 3)));
    await Promise.all(envs.map((e) => e.reset()));
    const outcomes = await Promise.all(
      envs.map(async (e, i) => {
        for (let s = 0; s < i % 3; s++) await e.step(call("step"));
        return e.outcome();
      }),
    );
    // Task t needs 1 + t % 3 steps; episode i took i % 3 (< goal), so none succeeded.
    expect(outcomes).toEqual(envs.map((_, i) => ({ success: false, steps: i % 3 })));
  });
});

describe("http env: failures are classified EnvErrors", () => {
  it("step answering 500 is a crash, and step is never retried", async () => {
    const env = await instance(FAULT.step_500, { retries: 3 });
    await env.reset();
    const e = await failure(env.step(call("step")));
    expect(e.kind).toBe("crash");
    expect(e.message).toContain("HTTP 500");
    expect(e.message).toContain("injected fault: step_500");
    expect((await counts(FAULT.step_500)).step).toBe(1);
  });

  it("a step past timeout_s is a timeout, not retried", async () => {
    const env = await instance(FAULT.step_sleep, { timeout_s: 0.3, retries: 2 });
    await env.reset();
    const t0 = Date.now();
    const e = await failure(env.step(call("step")));
    expect(e.kind).toBe("timeout");
    expect(e.message).toContain("within 0.3 s");
    expect(Date.now() - t0).toBeLessThan(SLEEP_S * 1000 - 500);
    expect((await counts(FAULT.step_sleep)).step).toBe(1);
  });

  it("a connection closed mid-step is a crash", async () => {
    const env = await instance(FAULT.step_close);
    await env.reset();
    expect((await failure(env.step(call("step")))).kind).toBe("crash");
    expect((await counts(FAULT.step_close)).step).toBe(1);
  });

  it("non-JSON and incomplete answers are protocol errors; a reported error is a crash", async () => {
    const badJson = await instance(FAULT.step_bad_json);
    await badJson.reset();
    const e1 = await failure(badJson.step(call("step")));
    expect(e1.kind).toBe("protocol");
    expect(e1.message).toContain("not JSON");
    const missing = await instance(FAULT.step_missing);
    await missing.reset();
    const e2 = await failure(missing.step(call("step")));
    expect(e2.kind).toBe("protocol");
    expect(e2.message).toContain('"terminated"');
    const reported = await instance(FAULT.step_error);
    await reported.reset();
    const e3 = await failure(reported.step(call("step")));
    expect(e3.kind).toBe("crash");
    expect(e3.message).toContain("injected fault: step_error");
  });

  it("a reset that fails once (500) is retried and succeeds; without retries it is a crash", async () => {
    const seed = 7001;
    const env = await instance(FAULT.reset_500_once, { retries: 1 }, seed);
    const start = await env.reset();
    expect(start.text).toBe("Call step 2 times."); // goal 1 + 1006 % 3
    expect((await counts(FAULT.reset_500_once)).reset).toBe(2);
    const strict = await instance(FAULT.reset_500_once, { retries: 0 }, seed + 1);
    const e = await failure(strict.reset());
    expect(e.kind).toBe("crash");
    expect((await counts(FAULT.reset_500_once)).reset).toBe(3);
  });

  it("a reset that times out once, or whose connection is closed once, is retried", async () => {
    const slow = await instance(FAULT.reset_sleep_once, { timeout_s: 0.3, retries: 1 });
    await slow.reset();
    expect((await counts(FAULT.reset_sleep_once)).reset).toBe(2);
    const noRetry = await instance(FAULT.reset_sleep_once, { timeout_s: 0.3, retries: 0 });
    expect((await failure(noRetry.reset())).kind).toBe("timeout");
    const dropped = await instance(FAULT.reset_close_once, { retries: 1 });
    await dropped.reset();
    expect((await counts(FAULT.reset_close_once)).reset).toBe(2);
  });

  it("a reset failing every time is a crash after 1 + retries tries, with backoff", async () => {
    const env = await instance(FAULT.reset_500, { retries: 2 });
    const t0 = Date.now();
    const e = await failure(env.reset());
    expect(e.kind).toBe("crash");
    expect(e.message).toContain("after 3 tries");
    expect(Date.now() - t0).toBeGreaterThanOrEqual(250); // 100 ms + 200 ms of backoff
    expect((await counts(FAULT.reset_500)).reset).toBe(3);
  });

  it("4xx answers are protocol errors and are not retried", async () => {
    const env = await instance(FAULT.reset_400, { retries: 3 });
    const e = await failure(env.reset());
    expect(e.kind).toBe("protocol");
    expect(e.message).toContain("HTTP 400");
    expect((await counts(FAULT.reset_400)).reset).toBe(1);
    const unknownTask = await instance(0, { task: "no-such-task" });
    const e2 = await failure(unknownTask.reset());
    expect(e2.kind).toBe("protocol");
    expect(e2.message).toContain("unknown task 'no-such-task'");
    // A session the server no longer knows (404) is a protocol error for step; for close it
    // counts as closed.
    const lost = await instance(0, { retries: 2 });
    await lost.reset();
    const gone = await fetch(`${server.url}/close`, {
      method: "POST",
      body: JSON.stringify({ session: lost.sessionId }),
    });
    expect(gone.status).toBe(200);
    const e3 = await failure(lost.step(call("step")));
    expect(e3.kind).toBe("protocol");
    expect(e3.message).toContain("HTTP 404");
    expect((await failure(lost.outcome())).kind).toBe("protocol");
    await lost.close();
  });

  it("outcome is retried on a 5xx; close failing every time is a crash after retries", async () => {
    const env = await instance(FAULT.outcome_500_once, { retries: 1 });
    await env.reset();
    await env.step(call("step"));
    expect(await env.outcome()).toEqual({ success: true, steps: 1 });
    expect((await counts(FAULT.outcome_500_once)).outcome).toBe(2);
    const closing = await instance(FAULT.close_500, { retries: 1 });
    await closing.reset();
    const e = await failure(closing.close());
    expect(e.kind).toBe("crash");
    expect((await counts(FAULT.close_500)).close).toBe(2);
  });

  it("a closed port is unavailable (and retried for reset); calls before reset are protocol errors", async () => {
    const port = await closedPort();
    const env = await instance(0, { url: `http://127.0.0.1:${port}`, retries: 1 });
    const e = await failure(env.reset());
    expect(e.kind).toBe("unavailable");
    expect(e.message).toContain("ECONNREFUSED");
    expect(e.message).toContain("after 2 tries");
    const fresh = await instance(0);
    expect((await failure(fresh.step(call("step")))).kind).toBe("protocol");
    expect((await failure(fresh.outcome())).kind).toBe("protocol");
    await fresh.close(); // nothing to close
  });

  it("an unusable URL is unavailable at once, without retries", async () => {
    for (const url of ["not a url", "ftp://127.0.0.1/x", "http://user:pw@127.0.0.1:1/"]) {
      const env = await instance(0, { url, retries: 3 });
      const t0 = Date.now();
      expect((await failure(env.reset())).kind, url).toBe("unavailable");
      // Retrying would wait 100 + 200 + 400 ms of backoff first.
      expect(Date.now() - t0, url).toBeLessThan(600);
    }
  });

  it("a port fetch refuses (6000: 'bad port') is unavailable at once, naming the port, never a crash after retries", async () => {
    for (const url of ["http://127.0.0.1:6000", "http://127.0.0.1:6666/api", "https://127.0.0.1:995"]) {
      const env = await instance(0, { url, retries: 3 });
      const e = await failure(env.reset());
      expect(e.kind, url).toBe("unavailable");
      expect(e.message, url).toMatch(/port \d+ of .* is one that fetch refuses to call/);
      expect(e.message, url).not.toContain("tries");
    }
  });

  it("the blocked ports are exactly those the running Node's fetch refuses (checked on each and on its neighbours)", async () => {
    const refused = async (port: number) => {
      const error = await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(3000) }).then(
        async (r) => void (await r.body?.cancel()),
        (e: unknown) => e,
      );
      return /bad port/.test(String((error as { cause?: unknown } | undefined)?.cause ?? ""));
    };
    const ports = [...new Set([...FETCH_BLOCKED_PORTS].flatMap((p) => [p - 1, p, p + 1]).filter((p) => p > 0))];
    const answers = await Promise.all(ports.map(async (p) => [p, await refused(p)] as const));
    expect(answers.filter(([p, r]) => r !== FETCH_BLOCKED_PORTS.has(p))).toEqual([]);
  });

  it("does not follow redirects: a 3xx is a protocol error", async () => {
    const redirector = createHttpServer((req, res) => {
      res.writeHead(307, { location: `${server.url}${req.url}` });
      res.end();
    });
    await new Promise<void>((resolve) => redirector.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = redirector.address() as { port: number };
      const before = ((await json(`${server.url}/stats`)).requests.reset ?? 0) as number;
      const env = await instance(0, { url: `http://127.0.0.1:${port}`, retries: 2 });
      const e = await failure(env.reset());
      expect(e.kind).toBe("protocol");
      expect(e.message).toContain("redirect");
      expect((await json(`${server.url}/stats`)).requests.reset ?? 0).toBe(before);
    } finally {
      await new Promise<void>((resolve) => redirector.close(() => resolve()));
    }
  });

  /** A local server answering every request with `answer`; resolves to its URL and a closer. */
  async function answering(
    answer: (res: ServerResponse) => void,
  ): Promise<{ url: string; close: () => Promise<void> }> {
    const local = createHttpServer((_req, res) => answer(res));
    await new Promise<void>((resolve) => local.listen(0, "127.0.0.1", resolve));
    const { port } = local.address() as { port: number };
    return {
      url: `http://127.0.0.1:${port}`,
      close: () =>
        new Promise<void>((resolve) => {
          local.closeAllConnections();
          local.close(() => resolve());
        }),
    };
  }

  it("a body past max_response_bytes is a protocol error found while streaming, never read whole", async () => {
    let sent = 0;
    // An endless chunked body: only a reader that stops at the cap ever returns.
    const endless = await answering((res) => {
      res.writeHead(200, { "content-type": "application/json" });
      const chunk = Buffer.alloc(256 * 1024, 0x20);
      const more = () => {
        while (!res.destroyed && res.write(chunk)) sent += chunk.length;
        if (!res.destroyed) res.once("drain", more);
      };
      res.on("close", () => res.removeAllListeners("drain"));
      more();
    });
    try {
      const small = await failure(
        (await instance(0, { url: endless.url, retries: 0, max_response_bytes: 1024 * 1024 })).reset(),
      );
      expect(small.kind).toBe("protocol");
      expect(small.message).toContain("above the env's max_response_bytes (1048576)");
      sent = 0;
      const byDefault = await failure((await instance(0, { url: endless.url, retries: 0, timeout_s: 30 })).reset());
      expect(byDefault.kind).toBe("protocol");
      expect(byDefault.message).toContain("max_response_bytes (8388608)");
      expect(sent).toBeLessThan(64 * 1024 * 1024);
    } finally {
      await endless.close();
    }
    const declared = await answering((res) => {
      res.writeHead(200, { "content-type": "application/json", "content-length": String(300 * 1024 * 1024) });
      res.write("{");
    });
    try {
      const e = await failure((await instance(0, { url: declared.url, retries: 0 })).reset());
      expect(e.kind).toBe("protocol");
      expect(e.message).toContain(`is ${300 * 1024 * 1024} bytes, above`);
    } finally {
      await declared.close();
    }
  });

  it("a signal that is not a finite number (1e400 reads as Infinity) is a protocol error", async () => {
    const infinite = await answering((res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end('{"session": "s1", "observation": "hello", "signals": {"progress": 1e400}}');
    });
    try {
      const e = await failure((await instance(0, { url: infinite.url, retries: 0 })).reset());
      expect(e.kind).toBe("protocol");
      expect(e.message).toContain('signal "progress" = Infinity');
    } finally {
      await infinite.close();
    }
  });

  it("classifies fetch failures and statuses", () => {
    const fetchFailed = (code: string) =>
      new TypeError("fetch failed", { cause: Object.assign(new Error(code), { code }) });
    expect(classifyFetchError(fetchFailed("ECONNREFUSED"))).toBe("unavailable");
    expect(classifyFetchError(fetchFailed("ENOTFOUND"))).toBe("unavailable");
    expect(classifyFetchError(fetchFailed("EAI_AGAIN"))).toBe("unavailable");
    expect(classifyFetchError(fetchFailed("UND_ERR_CONNECT_TIMEOUT"))).toBe("unavailable");
    expect(
      classifyFetchError(
        new TypeError("fetch failed", {
          cause: new AggregateError([Object.assign(new Error("x"), { code: "ECONNREFUSED" })]),
        }),
      ),
    ).toBe("unavailable");
    expect(classifyFetchError(fetchFailed("UND_ERR_HEADERS_TIMEOUT"))).toBe("timeout");
    expect(classifyFetchError(fetchFailed("ECONNRESET"))).toBe("crash");
    expect(classifyFetchError(fetchFailed("UND_ERR_SOCKET"))).toBe("crash");
    expect(classifyFetchError(new Error("anything else"))).toBe("crash");
    expect([400, 404, 409, 413, 408, 429, 500, 502, 503].map(classifyStatus)).toEqual([
      "protocol",
      "protocol",
      "protocol",
      "protocol",
      "timeout",
      "unavailable",
      "crash",
      "crash",
      "crash",
    ]);
  });

  it("a server that stops mid-episode leaves the instance unavailable; SIGTERM stops it cleanly", async () => {
    const own = await startServer();
    const env = (await httpEnv.create(makeEnv({ url: own.url, retries: 0 }), 2, 1)) as HttpInstance;
    await env.reset();
    await env.step(call("step"));
    expect(await own.stop()).toBe(0);
    expect((await failure(env.step(call("step")))).kind).toBe("unavailable");
    expect((await failure(env.close())).kind).toBe("unavailable");
  });
});

describe("http env: a run end to end", () => {
  const spec = (url: string) => `
experiment http_counting {
  seed: 3
  policy { model: "builtin:tiny" }
  env counter {
    kind: http
    url: "${url}"
    task: "counter"
    tasks: 4
    split { train: 0.5, test: 0.5 }
    timeout_s: 5
    retries: 1
${COUNTER_SIGNALS_AND_TOOLS}
  }
  harness { max_turns: 4 }
  reward { success: outcome.success }
  algorithm {
    group_size: 4
    advantage { baseline: leave_one_out }
  }
  rollout { tasks_per_batch: 3, iterations: 4, concurrency: 6 }
  eval { every: 2, tasks: 2, k: [1] }
}
`;

  it("trains through the orchestrator, writes metrics and counts env errors of an injected step failure", async () => {
    // The task ids of the train split do not depend on the URL: pick one of them to fail (the
    // second: the first batch draws the first alone, and a first batch of nothing but env errors
    // would fail the run).
    const [probe] = compilePlans(spec("http://127.0.0.1:8000"));
    const train = splitTasks("counter", probe!.envs.counter!, "train");
    expect(train.length).toBe(2);
    const failing = train[1]!;
    const own = await startServer(["--fault", `${failing}=step_500`]);
    try {
      const [plan] = compilePlans(spec(own.url));
      expect(plan!.envs.counter).toMatchObject({
        kind: "http",
        url: own.url,
        task: "counter",
        timeout_s: 5,
        retries: 1,
      });
      const out = mkdtempSync(path.join(tmpdir(), "arl-http-runs-"));
      const runDir = RunDirectory.create(out, plan!);
      const summary = await executePlan({ plan: plan!, runDir, trainer, envs: envKinds, log: () => undefined });
      expect(summary.iterations).toBe(4);
      for (const f of ["plan.json", "manifest.json", "metrics.jsonl", "buffer.arlbuf", "state.json"])
        expect(existsSync(path.join(runDir.dir, f)), f).toBe(true);
      const metrics = runDir.readMetrics();
      expect(metrics.map((m) => m.iteration)).toEqual([1, 2, 3, 4]);
      for (const m of metrics) {
        for (const key of ["success", "reward", "env_errors", "end_reasons", "tool_calls", "tokens"])
          expect(m, key).toHaveProperty(key);
        expect((m.end_reasons as Record<string, number>).env_error).toBe(m.env_errors);
      }
      const envErrors = metrics.reduce((s, m) => s + (m.env_errors as number), 0);
      // Every episode of the failing task is an env error (its first step answers 500) ...
      expect(envErrors).toBeGreaterThan(0);
      expect(envErrors % 4).toBe(0); // whole groups of 4
      const stats = await json(`${own.url}/stats`);
      const failingStats = stats.by_index[String(failing)] as Record<string, number>;
      expect(failingStats.step).toBe(envErrors); // one step each, never retried
      // ... and the other tasks' episodes played normally; every session was closed.
      expect(stats.sessions).toBe(0);
      expect(stats.requests.close).toBe(stats.requests.reset);
      const { records } = readBuffer(runDir.bufferPath);
      expect(records.length).toBeGreaterThan(0);
      // The buffer keeps every episode; the env errors are exactly the failing task's.
      const errored = records.filter((r) => r.end === "env_error");
      expect(errored.length).toBe(envErrors);
      expect(errored.every((r) => r.task === failing)).toBe(true);
      expect(
        records
          .filter((r) => r.task !== failing)
          .every((r) => r.end === "finished" || r.end === "truncated" || r.end === "aborted"),
      ).toBe(true);
      expect(metrics.some((m) => (m.success as number) > 0)).toBe(true);
    } finally {
      expect(await own.stop()).toBe(0);
    }
  });
});
