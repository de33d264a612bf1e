// The reference task server (runtime-gpu/reference_env_server.py) for the http env kind's tests
// (test/envs/http.test.ts, http-failures.test.ts): started as a child process on 127.0.0.1, one
// shared per test file (useReferenceServer) or one of a test's own (startServer), with http envs
// and instances against it, tool calls, its request counts, and the EnvError a call rejects with.
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, expect } from "vitest";
import { httpEnv, type HttpEnv, type HttpInstance } from "../../src/envs/adapters/http.js";
import { EnvError, type EnvInstance } from "../../src/contracts/env.js";
import type { ToolCall } from "../../src/contracts/tool-calls.js";

const PYTHON = "/usr/bin/python3";
const serverScript = fileURLToPath(new URL("../../runtime-gpu/reference_env_server.py", import.meta.url));

export const SLEEP_S = 2;

interface Server {
  readonly url: string;
  readonly child: ChildProcess;
  stop(): Promise<number | null>;
}

export async function startServer(args: string[] = []): Promise<Server> {
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

export async function json(url: string): Promise<any> {
  return (await fetch(url)).json();
}

export const call = (name: string, args: Record<string, unknown> = {}): ToolCall => ({ name, arguments: args });

/** The file's shared server (useReferenceServer), read through this live binding. */
export let server: Server;
let seedCounter = 100;
const open: EnvInstance[] = [];

export function makeEnv(overrides: Partial<HttpEnv> = {}): HttpEnv {
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
export async function instance(
  task: number,
  overrides: Partial<HttpEnv> = {},
  seed = seedCounter++,
): Promise<HttpInstance> {
  const env = (await httpEnv.create(makeEnv(overrides), task, seed)) as HttpInstance;
  open.push(env);
  return env;
}

/** The EnvError a promise rejects with (and that it is one: nothing else may leave an instance). */
export async function failure(p: Promise<unknown>): Promise<EnvError> {
  const error = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, "expected an EnvError").toBeInstanceOf(EnvError);
  return error as EnvError;
}

export const counts = async (index: number): Promise<Record<string, number>> =>
  (await json(`${server.url}/stats`)).by_index[String(index)] ?? {};

/** Starts the shared server before the file's tests, closes their instances after each, stops it after all (cleanly). */
export function useReferenceServer(): void {
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
}
