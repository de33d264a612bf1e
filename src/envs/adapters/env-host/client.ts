// The client of the env host (docs/env-host.md): one persistent Python process
// (`python -m arl_envhost`, runtime-gpu/arl_envhost/) that the runtime starts, health-checks and
// stops, in a process group of its own. Requests go one at a time, each with its own deadline
// counted from when it is sent (never while it waits its turn): the host's own limit stops
// runaway Python code, and the deadline here, a little longer, ends a host stuck in C code. A
// host that died or was ended is started again on the next request, with the verifiers it had
// loaded loaded again and the env libraries' tasks prepared again, so one bad call costs its own
// episode and nothing else. Episodes live in one host: those opened on a host that has since
// died are gone, and their next request fails as an env error (`generation` tells them apart).
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import path from "node:path";
import { createInterface } from "node:readline";
import { EnvError } from "../../../contracts/env.js";
import { killGroup, OWN_PROCESS_GROUP, trackGroup } from "../../../contracts/process-group.js";
import { newProcessMark } from "../../../contracts/process-mark.js";
import { pythonCandidates, RUNTIME_GPU_DIR } from "../../../contracts/python.js";

/** An error answer of the host: what kind of failure, its last line, and the Python traceback. */
export interface HostFailure {
  readonly kind: "raised" | "timeout" | "result" | "request" | "load" | "missing" | "config";
  readonly message: string;
  readonly traceback: string | null;
}

/** A request the host answered with an error: the episode's env error, with the host's traceback. */
export class EnvHostError extends EnvError {
  constructor(
    message: string,
    readonly failure: HostFailure,
  ) {
    super(
      message,
      failure.kind === "timeout"
        ? "timeout"
        : failure.kind === "request"
          ? "protocol"
          : failure.kind === "missing"
            ? "unavailable"
            : "crash",
    );
  }
}

export interface EnvHostOptions {
  /** The Python to run; default: the first of pythonCandidates(). */
  readonly python?: string;
  /** The working directory of the host (the run's data root: user files read relative paths from there). */
  readonly cwd?: string;
  /** Seconds the host may take to start and say it is ready. */
  readonly startTimeoutS?: number;
  /** What to do when the Python cannot be started (which variable or setup command). */
  readonly setupHint?: string;
}

interface Pending {
  readonly resolve: (result: unknown) => void;
  readonly reject: (error: Error) => void;
}

/** The env host protocol this client speaks (docs/env-host.md, "Protocol"). */
const ENV_HOST_PROTOCOL = 2;

/** Added to a call's own limit before the host is declared stuck and ended. */
const GRACE_S = 5;
const STDERR_LINES = 40;

export class EnvHost {
  private child: ChildProcessWithoutNullStreams | undefined;
  private ready: Promise<void> | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private queue: Promise<unknown> = Promise.resolve();
  private readonly stderr: string[] = [];
  /** Requests to replay on a fresh host, in order: verifier loads by the handle they returned, library preparations by their key. */
  private readonly replays = new Map<string, { readonly method: string; readonly params: Record<string, unknown> }>();
  private closed = false;
  private startedOnce = false;
  /** Fresh hosts started after the first (a crash or a stuck call ended the previous one). */
  restarts = 0;
  /** Which host is running: 1 for the first, one more for each fresh one (an episode belongs to the host it was opened on). */
  generation = 0;
  private stopping: Promise<void> | undefined;

  constructor(private readonly options: EnvHostOptions = {}) {}

  /** The host's stderr, its last lines (user code's prints, Python's warnings). */
  stderrTail(): readonly string[] {
    return [...this.stderr];
  }

  /** Sends `method` once the calls before it are done; rejects with EnvHostError on an error answer, EnvError when the host fails. */
  request(method: string, params: Record<string, unknown>, limitS: number): Promise<unknown> {
    const run = this.queue.then(() => this.send(method, params, limitS));
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Loads a verifier function; the handle names it in later requests, also across host restarts. */
  async load(file: string, fn: string, limitS: number): Promise<string> {
    const params = { path: file, function: fn, timeout_s: limitS };
    const result = (await this.request("verifier.load", params, limitS)) as { handle: string };
    this.replays.set(`verifier:${result.handle}`, { method: "verifier.load", params });
    return result.handle;
  }

  /** Sends a request that a fresh host needs again before anything else (a library's prepare); `key` names it. */
  async requestReplayed(
    key: string,
    method: string,
    params: Record<string, unknown>,
    limitS: number,
  ): Promise<unknown> {
    const result = await this.request(method, params, limitS);
    this.replays.set(key, { method, params });
    return result;
  }

  /** Sends `method` only while the host that answers is host `generation`; otherwise fails with `gone` (an episode of a host that died). */
  requestOn(
    generation: number,
    method: string,
    params: Record<string, unknown>,
    limitS: number,
    gone: () => Error,
  ): Promise<unknown> {
    const run = this.queue.then(async () => {
      if (this.generation !== generation || !this.ready) throw gone();
      await this.ready;
      if (this.generation !== generation) throw gone();
      return this.write(method, params, limitS);
    });
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Asks the host to end; ends its process group if it does not within a few seconds. */
  /** Stops the host; every caller of a concurrent or later close waits for the same stop (the host library kinds share one host). */
  close(): Promise<void> {
    this.closed = true;
    this.stopping ??= this.shutdownChild();
    return this.stopping;
  }

  private async shutdownChild(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    child.stdin.end(`${JSON.stringify({ id: 0, method: "shutdown", params: {} })}\n`);
    const timer = setTimeout(() => killGroup(child.pid), 3000);
    await exited;
    clearTimeout(timer);
  }

  private async send(method: string, params: Record<string, unknown>, limitS: number): Promise<unknown> {
    if (this.closed) throw new EnvError("the env host was closed", "unavailable");
    await this.started();
    return this.write(method, params, limitS);
  }

  private write(method: string, params: Record<string, unknown>, limitS: number): Promise<unknown> {
    const child = this.child;
    if (!child) return Promise.reject(new EnvError("the env host is not running", "unavailable"));
    const id = this.nextId++;
    return new Promise<unknown>((resolve, reject) => {
      const timer = setTimeout(
        () => {
          this.pending.delete(id);
          // Stuck beyond the host's own limit (in C code, or ignoring the alarm): end it; the next request starts a fresh one.
          this.stop(child);
          reject(
            new EnvError(
              `the env host did not answer '${method}' within ${limitS + GRACE_S} s; it was stopped and will be started again`,
              "timeout",
            ),
          );
        },
        (limitS + GRACE_S) * 1000,
      );
      this.pending.set(id, {
        resolve: (r) => {
          clearTimeout(timer);
          resolve(r);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
      child.stdin.write(`${JSON.stringify({ id, method, params })}\n`);
    });
  }

  private stop(child: ChildProcessWithoutNullStreams): void {
    if (this.child === child) {
      this.child = undefined;
      this.ready = undefined;
    }
    killGroup(child.pid);
  }

  /** The host, started (and its verifiers loaded again) when there is none. */
  private started(): Promise<void> {
    if (this.ready) return this.ready;
    if (this.startedOnce) this.restarts++;
    this.startedOnce = true;
    this.generation++;
    this.ready = this.start().then(async () => {
      for (const { method, params } of this.replays.values())
        await this.write(method, params, Number(params.timeout_s));
    });
    this.ready.catch(() => {
      this.ready = undefined;
    });
    return this.ready;
  }

  private start(): Promise<void> {
    const python = this.options.python ?? pythonCandidates()[0] ?? "python3";
    // Marked: what an env library starts outside the host's group is found too.
    const mark = newProcessMark();
    const env = {
      ...process.env,
      PYTHONPATH: [RUNTIME_GPU_DIR, process.env.PYTHONPATH].filter(Boolean).join(path.delimiter),
      PYTHONUNBUFFERED: "1",
      ...mark.env,
    };
    const child = spawn(python, ["-m", "arl_envhost"], {
      cwd: this.options.cwd ?? process.cwd(),
      env,
      stdio: ["pipe", "pipe", "pipe"],
      ...OWN_PROCESS_GROUP,
    });
    trackGroup(child, mark);
    this.child = child;
    // A write to a host that has just died fails with EPIPE; its exit (below) fails the requests, so the pipe's error adds nothing (unhandled, it would crash the run).
    child.stdin.on("error", () => undefined);
    createInterface({ input: child.stderr }).on("line", (line) => {
      this.stderr.push(line);
      if (this.stderr.length > STDERR_LINES) this.stderr.shift();
    });
    return new Promise<void>((resolve, reject) => {
      const startTimeoutS = this.options.startTimeoutS ?? 60;
      const timer = setTimeout(() => {
        this.stop(child);
        reject(
          new EnvError(
            `the env host (${python} -m arl_envhost) did not start within ${startTimeoutS} s${this.tail()}`,
            "unavailable",
          ),
        );
      }, startTimeoutS * 1000);
      createInterface({ input: child.stdout }).on("line", (line) => {
        let message: { ready?: unknown; id?: number; result?: unknown; error?: HostFailure };
        try {
          message = JSON.parse(line) as typeof message;
        } catch {
          return this.fail(child, `the env host wrote a line that is not JSON: ${line.slice(0, 200)}`);
        }
        if (message.ready) {
          clearTimeout(timer);
          const protocol = (message.ready as { protocol?: unknown }).protocol;
          if (protocol !== ENV_HOST_PROTOCOL) {
            this.stop(child);
            return reject(
              new EnvError(
                `the env host (${python} -m arl_envhost) speaks protocol ${String(protocol)}, and this runtime speaks ${ENV_HOST_PROTOCOL}: runtime-gpu/arl_envhost does not match this arl`,
                "unavailable",
              ),
            );
          }
          return resolve();
        }
        const waiting = typeof message.id === "number" ? this.pending.get(message.id) : undefined;
        if (!waiting || message.id === undefined) return;
        this.pending.delete(message.id);
        if (message.error) waiting.reject(new EnvHostError(message.error.message, message.error));
        else waiting.resolve(message.result);
      });
      child.once("error", (error) => {
        clearTimeout(timer);
        this.stop(child);
        reject(
          new EnvError(
            `cannot start the env host with '${python}': ${error.message} (${this.options.setupHint ?? "set ARL_PYTHON, or run 'npm run setup:python' to make .venv"})`,
            "unavailable",
          ),
        );
      });
      child.once("exit", (code, signal) => {
        clearTimeout(timer);
        const how = signal ? `was killed (${signal})` : `exited with status ${code}`;
        reject(new EnvError(`the env host ${how} before it was ready${this.tail()}`, "unavailable"));
        this.fail(child, `the env host ${how}${this.tail()}`);
      });
    });
  }

  /** Every request in flight on `child` fails; the next request starts a fresh host. */
  private fail(child: ChildProcessWithoutNullStreams, message: string): void {
    if (this.child === child) this.stop(child);
    for (const [id, waiting] of this.pending) {
      this.pending.delete(id);
      waiting.reject(new EnvError(message, "crash"));
    }
  }

  private tail(): string {
    const last = this.stderr.slice(-5).join("\n");
    return last ? `; its stderr ends with:\n${last}` : "";
  }
}
