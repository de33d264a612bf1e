// The runtime's side of the trainer protocol: a child process started with execa, requests
// answered in order, stderr kept for the report when the trainer dies. Every request has a
// deadline: a trainer that stops answering (stopped, deadlocked, its stdout closed) is declared
// dead and killed, never waited for forever.
import { execa, type ResultPromise } from "execa";
import {
  PROTOCOL_NAME,
  PROTOCOL_VERSION,
  type ErrorBody,
  type HandshakeResult,
  type Method,
  type Methods,
} from "../../contracts/trainer-protocol.js";
import { FrameDecoder, writeFrame, type ProtocolError } from "./framing.js";
import { defined } from "../../contracts/checked.js";
import { killGroup, OWN_PROCESS_GROUP, trackGroup } from "../../contracts/process-group.js";
import { newProcessMark } from "../../contracts/process-mark.js";

export interface TrainerCommand {
  readonly file: string;
  readonly args: readonly string[];
  readonly cwd?: string;
  readonly env?: Readonly<Record<string, string>>;
  /** How long each request may take, in milliseconds, by method; without it requests wait forever. */
  readonly deadlineMs?: (method: Method) => number;
  /**
   * The command of cross-policy pool models (generation only) where it differs from this one: a
   * trainer spanning several machines holds their rendezvous, so its pool models run as one
   * process on node 0.
   */
  readonly pool?: Omit<TrainerCommand, "pool" | "deadlineMs">;
}

export class TrainerError extends Error {
  constructor(
    message: string,
    readonly code: ErrorBody["code"] | "died" | "protocol" | "timeout" | "stopped",
    readonly stderrTail: readonly string[] = [],
  ) {
    super(message);
  }
}

const STDERR_LINES = 40;
/** Longest stderr line kept (a trainer may write megabytes without a newline). */
const STDERR_LINE_CHARS = 2000;

/**
 * The first line of stderr that looks like the fault (a Python traceback's head, an
 * `...Error:` or `error:` line, a panic): shown with the tail when the tail has scrolled past it.
 */
function looksLikeFault(line: string): boolean {
  return /^Traceback \(most recent call last\)|\b[A-Z][A-Za-z]*(Error|Exception)\b:|^(error|fatal|panic)\b[:[]|^thread '.*' panicked|Segmentation fault|core dumped/i.test(
    line,
  );
}

const clip = (line: string) =>
  line.length > STDERR_LINE_CHARS
    ? `${line.slice(0, STDERR_LINE_CHARS)} ... (${line.length - STDERR_LINE_CHARS} more characters)`
    : line;

export class TrainerClient {
  private readonly decoder = new FrameDecoder();
  private readonly pending: {
    id: number;
    resolve: (v: unknown) => void;
    reject: (e: Error) => void;
    method: string;
  }[] = [];
  private nextId = 1;
  private readonly stderrLines: string[] = [];
  private stderrPartial = "";
  /** The first fault-looking stderr line and how many lines came before it. */
  private firstFault: { line: string; number: number } | undefined;
  private stderrCount = 0;
  private exited: { code: number | undefined; signal: string | undefined } | undefined;
  /** Set once `shutdown` is sent: the trainer then closes its stdout and exits in its own time. */
  private shuttingDown = false;
  private failure: TrainerError | undefined;
  handshakeResult: HandshakeResult | undefined;

  /** The trainer's stdin; the child is started with all three streams piped. */
  private readonly stdin: NonNullable<ResultPromise["stdin"]>;

  private constructor(
    private readonly child: ResultPromise,
    private readonly deadlineMs?: (method: Method) => number,
  ) {
    this.stdin = defined(child.stdin, "the trainer's stdin pipe");
    const stdout = defined(child.stdout, "the trainer's stdout pipe");
    const stderr = defined(child.stderr, "the trainer's stderr pipe");
    stdout.on("data", (chunk: Buffer) => this.onData(chunk));
    // A trainer that closes its stdout can never answer again, even if it stays alive. A dying
    // one closes it too, just before its exit is seen: that is reported as the exit it is. After
    // `shutdown` it is expected (Python's teardown of torch can take seconds after that): the
    // shutdown's own deadline covers a trainer that never exits.
    stdout.on("end", () => {
      const timer = setTimeout(() => {
        if (this.exited || this.shuttingDown) return;
        this.fail(
          new TrainerError(
            "the trainer closed its stdout while still running (it can no longer answer requests); it was killed",
            "died",
            this.stderrTail(),
          ),
        );
        this.killProcesses();
      }, 1000);
      timer.unref();
    });
    stderr.on("data", (chunk: Buffer) => this.onStderr(chunk));
    // The exit is reported once stderr is drained (its last lines say why), or after a second.
    const stderrDrained = new Promise<void>((resolve) => {
      stderr.once("close", resolve);
      setTimeout(resolve, 1000).unref();
    });
    child.then(
      (r) => stderrDrained.then(() => this.onExit(r.exitCode, r.signal)),
      (e: { exitCode?: number; signal?: string }) => stderrDrained.then(() => this.onExit(e.exitCode, e.signal)),
    );
  }

  /** Starts the trainer and performs the handshake. */
  static async start(command: TrainerCommand, runtimeVersion: string, stop?: AbortSignal): Promise<TrainerClient> {
    // Marked, so that what leaves its group (torchrun's workers start sessions of their own) is found too.
    const mark = newProcessMark();
    const child = execa(command.file, [...command.args], {
      cwd: command.cwd,
      env: { ...command.env, ...mark.env },
      stdin: "pipe",
      stdout: "pipe",
      stderr: "pipe",
      encoding: "buffer",
      buffer: false,
      reject: true,
      // Its own process group: a terminal's Ctrl-C reaches the runtime alone, which shuts it down.
      ...OWN_PROCESS_GROUP,
    });
    trackGroup(child, mark);
    const client = new TrainerClient(child, command.deadlineMs);
    if (stop) {
      const halt = () => client.halt();
      if (stop.aborted) halt();
      else stop.addEventListener("abort", halt, { once: true });
      const unlisten = () => stop.removeEventListener("abort", halt);
      child.then(unlisten, unlisten);
    }
    const hello = await client.request("handshake", {
      protocol: PROTOCOL_NAME,
      version: PROTOCOL_VERSION,
      runtime: { name: "arl", version: runtimeVersion },
    });
    if (hello.protocol !== PROTOCOL_NAME || hello.version !== PROTOCOL_VERSION) {
      await client.kill();
      throw new TrainerError(
        `trainer speaks ${hello.protocol} version ${hello.version}; this runtime speaks ${PROTOCOL_NAME} version ${PROTOCOL_VERSION}`,
        "protocol",
      );
    }
    client.handshakeResult = hello;
    return client;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /**
   * The last lines of the trainer's stderr, preceded by the first line that looked like the
   * fault (and a marker of the lines left out) when the tail no longer shows it. Bounded.
   */
  stderrTail(): string[] {
    const lines = this.stderrLines.slice(this.stderrPartial ? 1 - STDERR_LINES : -STDERR_LINES);
    const tail = this.stderrPartial ? [...lines, clip(this.stderrPartial)] : lines;
    const fault = this.firstFault;
    const firstShown = this.stderrCount - lines.length;
    if (!fault || fault.number >= firstShown) return tail;
    const skipped = firstShown - fault.number - 1;
    return [fault.line, ...(skipped > 0 ? [`... (${skipped} lines left out)`] : []), ...tail];
  }

  request<M extends Method>(method: M, params: Methods[M][0]): Promise<Methods[M][1]> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.exited) return Promise.reject(this.diedError());
    const id = this.nextId++;
    return new Promise<Methods[M][1]>((resolve, reject) => {
      const ms = this.deadlineMs?.(method);
      // Requests are answered in order, so each one's clock starts when the one before it is answered
      // would be fairer; starting at sending is simpler and only more generous to later ones.
      const timer =
        ms === undefined
          ? undefined
          : setTimeout(
              () => {
                this.fail(
                  new TrainerError(
                    `the trainer did not answer '${method}' within ${formatSeconds(ms)} (stopped, hung or deadlocked?); it was declared dead and killed (raise the limit with --trainer-timeout SECONDS)`,
                    "timeout",
                    this.stderrTail(),
                  ),
                );
                this.killProcesses();
              },
              Math.min(ms, 2 ** 31 - 1),
            );
      const settle =
        <T>(f: (v: T) => void) =>
        (v: T) => {
          clearTimeout(timer);
          f(v);
        };
      const entry = { id, resolve: settle(resolve as (v: unknown) => void), reject: settle(reject), method };
      this.pending.push(entry);
      try {
        // The params' arrays are written from where they are: they must not change until answered.
        writeFrame(this.stdin, { id, method, params });
      } catch (error) {
        // Params that cannot be framed (a value nested past the stack) were never sent: this request fails, the trainer serves on.
        this.pending.splice(this.pending.indexOf(entry), 1);
        entry.reject(error);
      }
    });
  }

  /** Stops at once (the user asked): pending requests fail with code "stopped" and the trainer is killed. */
  halt(): void {
    this.fail(new TrainerError("stopped at once on request; the trainer was killed", "stopped", this.stderrTail()));
    if (!this.exited) this.killProcesses();
  }

  /** Asks the trainer to exit; kills it if it does not within `timeoutMs`. */
  async shutdown(timeoutMs = 10_000): Promise<void> {
    if (this.exited) return;
    const timer = setTimeout(() => this.killProcesses(), timeoutMs);
    try {
      this.shuttingDown = true;
      await this.request("shutdown", {});
      this.stdin.end();
      await this.child.catch(() => undefined);
    } catch {
      // Already dead or refused: the kill below settles it.
    } finally {
      clearTimeout(timer);
      if (!this.exited) this.killProcesses();
    }
  }

  async kill(): Promise<void> {
    if (!this.exited) this.killProcesses();
    await this.child.catch(() => undefined);
  }

  /** How the trainer process ended (undefined while it runs): its exit status, or the signal that killed it. */
  get exit(): { readonly code: number | null; readonly signal: string | null } | undefined {
    const { exitCode, signalCode } = this.child;
    return exitCode === null && signalCode === null ? undefined : { code: exitCode, signal: signalCode };
  }

  /** The trainer and every process of its group (torchrun's workers): SIGKILL. */
  private killProcesses(): void {
    killGroup(this.child.pid);
  }

  private onData(chunk: Buffer): void {
    let messages: unknown[];
    try {
      messages = this.decoder.push(chunk);
    } catch (error) {
      this.fail(
        new TrainerError(`trainer protocol error: ${(error as ProtocolError).message}`, "protocol", this.stderrTail()),
      );
      this.killProcesses();
      return;
    }
    for (const m of messages) {
      const msg = m as { id?: number; result?: unknown; error?: ErrorBody };
      const waiting = this.pending[0];
      if (!waiting || msg.id !== waiting.id) {
        this.fail(
          new TrainerError(
            `trainer answered request ${String(msg.id)} while ${waiting ? `${waiting.id} (${waiting.method})` : "nothing"} was pending`,
            "protocol",
            this.stderrTail(),
          ),
        );
        return;
      }
      this.pending.shift();
      if (msg.error)
        waiting.reject(
          new TrainerError(
            `trainer ${waiting.method} failed (${msg.error.code}): ${msg.error.message}`,
            msg.error.code,
            this.stderrTail(),
          ),
        );
      else waiting.resolve(msg.result);
    }
  }

  private onStderr(chunk: Buffer): void {
    const text = this.stderrPartial + chunk.toString("utf8");
    const lines = text.split(/\r?\n/);
    // An unfinished line is kept only up to the clip length (plus one, to know it was clipped).
    const partial = lines.pop() ?? "";
    this.stderrPartial = partial.length > STDERR_LINE_CHARS * 2 ? partial.slice(0, STDERR_LINE_CHARS * 2) : partial;
    for (const line of lines) {
      if (!this.firstFault && looksLikeFault(line)) this.firstFault = { line: clip(line), number: this.stderrCount };
      this.stderrCount++;
      this.stderrLines.push(clip(line));
      if (this.stderrLines.length > STDERR_LINES * 2)
        this.stderrLines.splice(0, this.stderrLines.length - STDERR_LINES);
    }
    if (this.stderrLines.length > STDERR_LINES) this.stderrLines.splice(0, this.stderrLines.length - STDERR_LINES);
  }

  private onExit(code: number | undefined, signal: string | undefined): void {
    this.exited = { code, signal };
    if (this.pending.length > 0) this.fail(this.diedError());
  }

  private diedError(): TrainerError {
    const how = this.exited?.signal
      ? `was killed by ${this.exited.signal}`
      : `exited with status ${this.exited?.code ?? "?"}`;
    return new TrainerError(`the trainer process ${how}`, "died", this.stderrTail());
  }

  private fail(error: TrainerError): void {
    this.failure ??= error;
    for (const p of this.pending.splice(0)) p.reject(error);
  }
}

function formatSeconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`;
}
