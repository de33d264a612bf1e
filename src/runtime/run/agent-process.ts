// One run of an agent program (docs/gateway.md#agent-programs): started in its own process
// group, given its task on stdin, its stdout's last line and its stderr's tail kept, stopped
// after its time limit, and its whole group killed when it ends, with every process that carries
// its mark (children that left the group), so that no child it started outlives the episode. What the program did is returned, never thrown: its faults are the
// episode's env errors, decided by the caller.
import { spawn } from "node:child_process";
import { killGroup, OWN_PROCESS_GROUP, trackGroup } from "../../contracts/process-group.js";
import { newProcessMark } from "../../contracts/process-mark.js";

export interface AgentProcessOptions {
  readonly command: readonly string[];
  readonly cwd: string;
  /** Added to the inherited environment; with `ownEnv`, the whole environment. */
  readonly env: Readonly<Record<string, string>>;
  /** `env` is the whole environment (a sandboxed program inherits nothing). */
  readonly ownEnv?: boolean;
  /** Bytes of stdout and stderr together past which the program is stopped. */
  readonly maxOutputBytes?: number;
  /** Written to stdin, which is then closed. */
  readonly stdin: string;
  readonly timeoutS: number;
  /** Bytes of stderr kept (the tail). */
  readonly maxStderrBytes: number;
  /** Aborting stops the program as a time-out does (a budget ended the episode, the run stops). */
  readonly signal?: AbortSignal;
}

export interface AgentProcessResult {
  /** The exit code; null when a signal ended it. */
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** It ran past timeoutS and was stopped. */
  readonly timedOut: boolean;
  /** It was stopped through options.signal. */
  readonly stopped: boolean;
  /** It wrote more than maxOutputBytes and was stopped. */
  readonly outputExceeded: boolean;
  /** It could not be started (no such program): the reason. */
  readonly spawnError?: string;
  /** The last non-empty line of stdout (at most LAST_LINE_BYTES of it). */
  readonly lastLine: string;
  readonly stderrTail: string;
}

/** A program that ignores SIGTERM is killed this long after it. */
export const KILL_GRACE_MS = 2000;

/** The longest outcome line kept; a longer one is cut and then does not parse. */
const LAST_LINE_BYTES = 1024 * 1024;

/** Keeps the last `max` bytes written to it. */
class Tail {
  private chunks: Buffer[] = [];
  private size = 0;
  constructor(private readonly max: number) {}
  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.size += chunk.length;
    while (this.size - (this.chunks[0]?.length ?? 0) >= this.max) this.size -= this.chunks.shift()?.length ?? 0;
  }
  text(): string {
    const all = Buffer.concat(this.chunks);
    return all.subarray(Math.max(0, all.length - this.max)).toString("utf8");
  }
}

/** The last non-empty line of stdout, read as it streams (a chatty program's output is not kept). */
class LastLine {
  private partial = "";
  private last = "";
  push(chunk: Buffer): void {
    const lines = (this.partial + chunk.toString("utf8")).split("\n");
    this.partial = (lines.pop() ?? "").slice(-LAST_LINE_BYTES);
    for (const line of lines) if (line.trim() !== "") this.last = line.slice(-LAST_LINE_BYTES);
  }
  value(): string {
    return this.partial.trim() !== "" ? this.partial : this.last;
  }
}

/** Runs the program once, to its end or its stop; never rejects. */
export function runAgentProcess(options: AgentProcessOptions): Promise<AgentProcessResult> {
  const [file, ...args] = options.command;
  const stderr = new Tail(options.maxStderrBytes);
  const stdout = new LastLine();
  return new Promise((resolve) => {
    let timedOut = false;
    let stopped = false;
    let outputExceeded = false;
    let written = 0;
    let settled = false;
    let killTimer: NodeJS.Timeout | undefined;
    const mark = newProcessMark();
    const child = spawn(file ?? "", args, {
      cwd: options.cwd,
      env: { ...(options.ownEnv === true ? {} : process.env), ...options.env, ...mark.env },
      stdio: ["pipe", "pipe", "pipe"],
      ...OWN_PROCESS_GROUP,
    });
    const tracked = trackGroup(child, mark);
    const stop = () => {
      if (child.pid === undefined) return;
      killGroup(child.pid, "SIGTERM");
      const pid = child.pid;
      killTimer ??= setTimeout(() => killGroup(pid, "SIGKILL"), KILL_GRACE_MS);
    };
    const timer = setTimeout(() => {
      timedOut = true;
      stop();
    }, options.timeoutS * 1000);
    const onAbort = () => {
      stopped = true;
      stop();
    };
    options.signal?.addEventListener("abort", onAbort, { once: true });
    if (options.signal?.aborted) onAbort();
    const counted = (chunk: Buffer) => {
      written += chunk.length;
      if (options.maxOutputBytes !== undefined && written > options.maxOutputBytes && !outputExceeded) {
        outputExceeded = true;
        if (child.pid !== undefined) killGroup(child.pid, "SIGKILL");
      }
    };
    const finish = (
      result: Omit<AgentProcessResult, "timedOut" | "stopped" | "outputExceeded" | "lastLine" | "stderrTail">,
    ) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(killTimer);
      options.signal?.removeEventListener("abort", onAbort);
      if (child.pid !== undefined) killGroup(child.pid, "SIGKILL");
      const run = { ...result, timedOut, stopped, outputExceeded, lastLine: stdout.value(), stderrTail: stderr.text() };
      // The episode ends once nothing the program started is left (trackGroup, on its exit).
      void tracked.cleared.then(() => resolve(run));
    };
    child.stdout.on("data", (c: Buffer) => {
      counted(c);
      stdout.push(c);
    });
    child.stderr.on("data", (c: Buffer) => {
      counted(c);
      stderr.push(c);
    });
    child.on("error", (error) => finish({ code: null, signal: null, spawnError: error.message }));
    // Once the program exits, what it left behind (a server it started, a stuck tool, a daemon)
    // is killed with its group and its mark (trackGroup), which also closes the pipes a child
    // still held, so that 'close' comes.
    child.on("close", (code, signal) => finish({ code, signal }));
    // A program that does not read its stdin closes it early: that is not a fault.
    child.stdin.on("error", () => undefined);
    child.stdin.end(options.stdin);
  });
}
