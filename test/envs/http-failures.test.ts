// The http env kind's failures against the reference task server (test/helpers/reference-env-server.ts):
// timeouts, retries and the classification of every failure kind as an EnvError, closed and
// refused ports, redirects, oversized bodies, non-finite signals, and a server that stops.
import { createServer as createHttpServer, type ServerResponse } from "node:http";
import { createServer } from "node:net";
import { describe, expect, it } from "vitest";
import { httpEnv, type HttpInstance } from "../../src/envs/adapters/http.js";
import { classifyFetchError, classifyStatus } from "../../src/envs/adapters/http-wire.js";
import { FETCH_BLOCKED_PORTS } from "../../src/plan/http-url.js";
import {
  call,
  counts,
  failure,
  instance,
  json,
  makeEnv,
  server,
  SLEEP_S,
  startServer,
  useReferenceServer,
} from "../helpers/reference-env-server.js";

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

/** A free loopback port with nothing listening on it. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

useReferenceServer();

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
