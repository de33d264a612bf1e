// Running untrusted candidate code: one fresh Node process per test run, in layers.
//  1. Process: `node` with --max-old-space-size (memory limit), --stack-size, no code generation
//     from strings, an empty environment (no inherited variables), cwd = a fresh scratch folder
//     that close() removes, its own process group (killed as a whole).
//  2. OS limits where available: a data-segment rlimit (`ulimit -d`, caps memory outside the V8
//     heap such as ArrayBuffers) and a fresh network namespace (`unshare -rn`: no network at all).
//     Where bubblewrap (`bwrap`) works, it replaces unshare and adds mount, PID and IPC
//     namespaces: the process sees only /usr (read-only) and its scratch folder, so it cannot
//     reach a unix socket by path (neither the network namespace nor Node 20's permission model
//     covers those), and it sees no process outside it to signal. Without bubblewrap, unshare
//     makes the same namespaces and root where user namespaces work (isolation.ts ROOT_SCRIPT).
//  3. Node's permission model where available (--experimental-permission on Node 20,
//     --permission later): reads only inside the scratch folder (which holds the runner), no
//     writes, no child processes, no worker threads, no native addons.
//  4. Inside the process the code runs in a node:vm context with plain JavaScript builtins only,
//     a fresh context for each test (see runner.ts), under a per-test time limit; the parent also kills the process group
//     when a test runs past the limit plus a grace period.
// The candidate's failures (syntax errors, exceptions, time or memory exhausted, a crash) are
// failed tests with a message; a failure of this machinery (cannot start, protocol broken) is an
// EnvError. Expected values never enter the sandbox: it returns what the code computed.
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { rmSync } from "node:fs";
import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { EnvError } from "../../../contracts/env.js";
import {
  detect,
  isolatedCommand,
  ROOT_MOUNT,
  withoutLayers,
  type Capabilities,
  type SandboxSwitch,
} from "./isolation.js";
import { RUNNER_SOURCE } from "./runner.js";

export { sandboxLayers } from "./isolation.js";

export interface SandboxLimits {
  /** Time limit of one test (one call of the function, or loading the code). */
  readonly timeLimitMs: number;
  readonly memoryLimitMb: number;
}

export type TestResult =
  { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: string };

export interface RunResult {
  /** Set when the code did not load (syntax error, threw at top level, no such function). */
  readonly loadError?: string;
  /** One per input: what the function returned (encoded, see runner.ts) or why it failed. */
  readonly results: readonly TestResult[];
}

const GRACE_MS = 1000;
const STARTUP_MS = 20_000;
const MAX_SOURCE_CHARS = 20_000;

/** Scratch folders not closed yet: removed when this process exits without closing them. */
const live = new Set<string>();
let exitHook = false;
function track(dir: string): void {
  live.add(dir);
  if (exitHook) return;
  exitHook = true;
  process.once("exit", () => {
    for (const d of live) rmSync(d, { recursive: true, force: true });
  });
}

type Attempt =
  | { readonly kind: "done"; readonly results: readonly TestResult[] }
  | { readonly kind: "load"; readonly error: string }
  /** The process stopped while loading the code or running test `at` (relative to the job). */
  | {
      readonly kind: "died";
      readonly at: "load" | number;
      readonly reason: string;
      readonly results: readonly TestResult[];
    };

export class Sandbox {
  private child: ChildProcessWithoutNullStreams | undefined;
  private closed = false;

  private constructor(
    readonly dir: string,
    private readonly runner: string,
    private readonly limits: SandboxLimits,
    private readonly caps: Capabilities,
  ) {}

  /**
   * A fresh scratch folder holding the runner script. `without` switches layers off (to check the
   * fallback where a machine lacks them); it never adds one the machine does not have.
   */
  static async create(limits: SandboxLimits, without: readonly SandboxSwitch[] = []): Promise<Sandbox> {
    const caps = withoutLayers(await detect(), without);
    let dir: string;
    try {
      dir = await realpath(await mkdtemp(path.join(os.tmpdir(), "arl-findmax-")));
      await writeFile(path.join(dir, "runner.mjs"), RUNNER_SOURCE, { mode: 0o444 });
      await mkdir(path.join(dir, ROOT_MOUNT));
    } catch (error) {
      throw new EnvError(`could not prepare the sandbox's scratch folder: ${(error as Error).message}`, "unavailable");
    }
    track(dir);
    return new Sandbox(dir, path.join(dir, "runner.mjs"), limits, caps);
  }

  /** Runs `name(...args)` for each inputs entry on `source`; never throws for the code's faults. */
  async run(name: string, source: string, inputs: readonly (readonly unknown[])[]): Promise<RunResult> {
    if (this.closed) throw new EnvError("the sandbox was already closed", "crash");
    const failAll = (error: string): RunResult => ({
      loadError: error,
      results: inputs.map(() => ({ ok: false, error: "the code did not load" })),
    });
    if (source.length > MAX_SOURCE_CHARS) return failAll(`the code is longer than ${MAX_SOURCE_CHARS} characters`);
    if (/\bimport\b/.test(source)) return failAll("import is not available to the code");
    const results: TestResult[] = [];
    while (results.length < inputs.length) {
      const from = results.length;
      const attempt = await this.attempt(name, source, inputs.slice(from));
      if (attempt.kind === "load") return failAll(attempt.error);
      if (attempt.kind === "done") {
        results.push(...attempt.results);
        break;
      }
      if (attempt.at === "load") {
        if (from === 0) return failAll(attempt.reason);
        // It loaded before: the remaining tests fail for the same reason.
        while (results.length < inputs.length) results.push({ ok: false, error: attempt.reason });
        break;
      }
      results.push(...attempt.results.slice(0, attempt.at), { ok: false, error: attempt.reason });
      // The rest of the tests run in a fresh process.
    }
    return { results };
  }

  private attempt(name: string, source: string, inputs: readonly (readonly unknown[])[]): Promise<Attempt> {
    const [file, ...args] = isolatedCommand(this.runner, this.dir, this.limits, this.caps);
    const limit = this.limits.timeLimitMs;
    return new Promise<Attempt>((resolve, reject) => {
      let child: ChildProcessWithoutNullStreams;
      try {
        child = spawn(file, args, { cwd: this.dir, env: {}, detached: true, stdio: ["pipe", "pipe", "pipe"] });
      } catch (error) {
        reject(new EnvError(`could not start the sandbox process: ${(error as Error).message}`, "unavailable"));
        return;
      }
      this.child = child;
      let ready = false;
      let stage: "start" | "load" | number = "start";
      let outcome: Attempt | undefined;
      let killedFor: "startup" | "time" | undefined;
      let failure: EnvError | undefined;
      let stderr = "";
      const results: TestResult[] = [];
      let timer: NodeJS.Timeout | undefined;
      const killGroup = () => {
        try {
          if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
        } catch {
          child.kill("SIGKILL");
        }
      };
      const arm = (ms: number, why: "startup" | "time") => {
        clearTimeout(timer);
        timer = setTimeout(() => {
          killedFor = why;
          killGroup();
        }, ms);
      };
      arm(STARTUP_MS, "startup");
      child.stderr.on("data", (c: Buffer) => {
        stderr = (stderr + c.toString("utf8")).slice(-4000);
      });
      child.stdin.on("error", () => {
        // The process stopped before reading its job: reported by 'close'.
      });
      child.on("error", (error) => {
        failure ??= new EnvError(`could not start the sandbox process: ${error.message}`, "unavailable");
      });
      const protocol = (why: string) => {
        failure ??= new EnvError(`the sandbox process broke its protocol: ${why}`, "protocol");
        killGroup();
      };
      createInterface({ input: child.stdout }).on("line", (line) => {
        if (outcome || failure) return;
        let m: Record<string, unknown>;
        try {
          m = JSON.parse(line) as Record<string, unknown>;
        } catch {
          return protocol(`a line that is not JSON: ${line.slice(0, 80)}`);
        }
        if (m === null || typeof m !== "object") return protocol("a line that is not an object");
        if (m.ready === true) {
          ready = true;
          clearTimeout(timer);
          timer = undefined;
        } else if (m.load === true && ready) {
          stage = "load";
          arm(limit + GRACE_MS, "time");
        } else if (typeof m.loadError === "string") {
          outcome = { kind: "load", error: m.loadError };
          clearTimeout(timer);
          killGroup();
        } else if (typeof m.begin === "number" && m.begin === results.length) {
          stage = m.begin;
          // A test loads the code into a fresh context, then calls it: each under the limit.
          arm(2 * limit + GRACE_MS, "time");
        } else if (typeof m.result === "number" && m.result === results.length && typeof m.data === "string") {
          results.push(decodeResult(m.data));
          clearTimeout(timer);
          timer = undefined;
          stage = results.length;
        } else if (m.done === true && results.length === inputs.length) {
          outcome = { kind: "done", results };
          killGroup();
        } else if (typeof m.fatal === "string") {
          failure ??= new EnvError(`the sandbox runner failed: ${m.fatal.split("\n")[0]}`, "crash");
          killGroup();
        } else protocol(`an unexpected message ${line.slice(0, 80)}`);
      });
      child.on("close", (code, signal) => {
        clearTimeout(timer);
        if (this.child === child) this.child = undefined;
        if (failure) return reject(failure);
        if (outcome) return resolve(outcome);
        if (this.closed) return reject(new EnvError("the sandbox was closed while the code ran", "crash"));
        const tail = stderr.trim().split("\n").slice(-3).join(" | ");
        if (!ready) {
          if (killedFor === "startup")
            return reject(new EnvError(`the sandbox process did not start within ${STARTUP_MS / 1000} s`, "timeout"));
          return reject(
            new EnvError(
              `the sandbox process stopped before it was ready (${signal ?? `exit code ${code}`})${tail ? `: ${tail}` : ""}`,
              "crash",
            ),
          );
        }
        if (stage === "start")
          return reject(
            new EnvError(`the sandbox process stopped before it read its job${tail ? `: ${tail}` : ""}`, "crash"),
          );
        if (results.length === inputs.length) return resolve({ kind: "done", results });
        const reason =
          killedFor === "time"
            ? `time limit exceeded (${limit} ms)`
            : deathReason(code, signal, stderr, this.limits.memoryLimitMb);
        resolve({ kind: "died", at: stage, reason, results });
      });
      child.stdin.end(JSON.stringify({ name, source, inputs: inputs.map((a) => JSON.stringify(a)), timeoutMs: limit }));
    });
  }

  /**
   * Runs `script` (an ES module) as the sandbox process would run the runner: same command line,
   * environment, folder and limits. For tests and diagnostics of the process layers, i.e. what
   * code that escaped the vm context could still do.
   */
  async probe(
    script: string,
    timeoutMs = 10_000,
  ): Promise<{ readonly stdout: string; readonly stderr: string; readonly code: number | null }> {
    const file = path.join(this.dir, "probe.mjs");
    await writeFile(file, script, { mode: 0o444 });
    const [bin, ...args] = isolatedCommand(file, this.dir, this.limits, this.caps);
    return new Promise((resolve, reject) => {
      const child = spawn(bin, args, { cwd: this.dir, env: {}, detached: true, stdio: ["ignore", "pipe", "pipe"] });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (c: Buffer) => (stdout += c.toString("utf8")));
      child.stderr.on("data", (c: Buffer) => (stderr += c.toString("utf8")));
      const timer = setTimeout(() => {
        try {
          if (child.pid === undefined) child.kill("SIGKILL");
          else process.kill(-child.pid, "SIGKILL");
        } catch {
          child.kill("SIGKILL");
        }
      }, timeoutMs);
      child.on("error", reject);
      child.on("close", (code) => {
        clearTimeout(timer);
        resolve({ stdout, stderr, code });
      });
    });
  }

  /** Stops a running process and removes the scratch folder. */
  async close(): Promise<void> {
    this.closed = true;
    const child = this.child;
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((resolve) => child.once("close", () => resolve()));
      try {
        if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
      } catch {
        child.kill("SIGKILL");
      }
      await exited;
    }
    await rm(this.dir, { recursive: true, force: true });
    live.delete(this.dir);
  }
}

function decodeResult(data: string): TestResult {
  let parsed: unknown;
  try {
    parsed = JSON.parse(data);
  } catch {
    return { ok: false, error: "its result could not be read" };
  }
  if (parsed !== null && typeof parsed === "object" && !Array.isArray(parsed)) {
    const r = parsed as { value?: unknown; error?: unknown };
    if (typeof r.error === "string") return { ok: false, error: r.error };
    if ("value" in r) return { ok: true, value: r.value };
  }
  return { ok: false, error: "its result could not be read" };
}

function deathReason(code: number | null, signal: NodeJS.Signals | null, stderr: string, memoryMb: number): string {
  if (
    /heap out of memory|Reached heap limit|Fatal process OOM|Allocation failed|out of memory|std::bad_alloc/i.test(
      stderr,
    )
  )
    return `memory limit exceeded (${memoryMb} MB)`;
  if (signal === "SIGKILL")
    return "the process running the code was killed (SIGKILL), probably for using too much memory";
  return `the process running the code stopped unexpectedly (${signal ?? `exit code ${code}`})`;
}

/** The largest code write_code accepts. */
export const maxSourceChars = MAX_SOURCE_CHARS;
