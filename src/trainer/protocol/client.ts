// The runtime's side of the trainer protocol: a child process started with execa, requests
// answered in order, stderr kept for the report when the trainer dies.
import { execa, type ResultPromise } from "execa";
import { encodeFrame, FrameDecoder, ProtocolError } from "./framing.js";
import { PROTOCOL_NAME, PROTOCOL_VERSION, type ErrorBody, type HandshakeResult, type Method, type Methods } from "./messages.js";

export interface TrainerCommand {
  readonly file: string;
  readonly args: readonly string[];
  readonly cwd?: string;
  readonly env?: Readonly<Record<string, string>>;
}

export class TrainerError extends Error {
  constructor(
    message: string,
    readonly code: ErrorBody["code"] | "died" | "protocol",
    readonly stderrTail: readonly string[] = [],
  ) {
    super(message);
  }
}

const STDERR_LINES = 40;

export class TrainerClient {
  private readonly decoder = new FrameDecoder();
  private readonly pending: { id: number; resolve: (v: unknown) => void; reject: (e: Error) => void; method: string }[] = [];
  private nextId = 1;
  private readonly stderrLines: string[] = [];
  private stderrPartial = "";
  private exited: { code: number | undefined; signal: string | undefined } | undefined;
  private failure: TrainerError | undefined;
  handshakeResult: HandshakeResult | undefined;

  private constructor(private readonly child: ResultPromise) {
    child.stdout!.on("data", (chunk: Buffer) => this.onData(chunk));
    child.stderr!.on("data", (chunk: Buffer) => this.onStderr(chunk));
    child.then(
      (r) => this.onExit(r.exitCode, r.signal),
      (e: { exitCode?: number; signal?: string }) => this.onExit(e.exitCode, e.signal),
    );
  }

  /** Starts the trainer and performs the handshake. */
  static async start(command: TrainerCommand, runtimeVersion: string): Promise<TrainerClient> {
    const child = execa(command.file, [...command.args], {
      cwd: command.cwd,
      env: command.env,
      stdin: "pipe",
      stdout: "pipe",
      stderr: "pipe",
      encoding: "buffer",
      buffer: false,
      reject: true,
    });
    const client = new TrainerClient(child);
    const hello = await client.request("handshake", { protocol: PROTOCOL_NAME, version: PROTOCOL_VERSION, runtime: { name: "arl", version: runtimeVersion } });
    if (hello.protocol !== PROTOCOL_NAME || hello.version !== PROTOCOL_VERSION) {
      await client.kill();
      throw new TrainerError(`trainer speaks ${hello.protocol} version ${hello.version}; this runtime speaks ${PROTOCOL_NAME} version ${PROTOCOL_VERSION}`, "protocol");
    }
    client.handshakeResult = hello;
    return client;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  stderrTail(): string[] {
    return this.stderrPartial ? [...this.stderrLines, this.stderrPartial] : [...this.stderrLines];
  }

  request<M extends Method>(method: M, params: Methods[M][0]): Promise<Methods[M][1]> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.exited) return Promise.reject(this.diedError());
    const id = this.nextId++;
    return new Promise<Methods[M][1]>((resolve, reject) => {
      this.pending.push({ id, resolve: resolve as (v: unknown) => void, reject, method });
      this.child.stdin!.write(encodeFrame({ id, method, params }));
    });
  }

  /** Asks the trainer to exit; kills it if it does not within `timeoutMs`. */
  async shutdown(timeoutMs = 10_000): Promise<void> {
    if (this.exited) return;
    const timer = setTimeout(() => this.child.kill("SIGKILL"), timeoutMs);
    try {
      await this.request("shutdown", {});
      this.child.stdin!.end();
      await this.child.catch(() => undefined);
    } catch {
      // Already dead or refused: the kill below settles it.
    } finally {
      clearTimeout(timer);
      if (!this.exited) this.child.kill("SIGKILL");
    }
  }

  async kill(): Promise<void> {
    if (!this.exited) this.child.kill("SIGKILL");
    await this.child.catch(() => undefined);
  }

  private onData(chunk: Buffer): void {
    let messages: unknown[];
    try {
      messages = this.decoder.push(chunk);
    } catch (error) {
      this.fail(new TrainerError(`trainer protocol error: ${(error as ProtocolError).message}`, "protocol", this.stderrTail()));
      this.child.kill("SIGKILL");
      return;
    }
    for (const m of messages) {
      const msg = m as { id?: number; result?: unknown; error?: ErrorBody };
      const waiting = this.pending[0];
      if (!waiting || msg.id !== waiting.id) {
        this.fail(new TrainerError(`trainer answered request ${String(msg.id)} while ${waiting ? `${waiting.id} (${waiting.method})` : "nothing"} was pending`, "protocol", this.stderrTail()));
        return;
      }
      this.pending.shift();
      if (msg.error) waiting.reject(new TrainerError(`trainer ${waiting.method} failed (${msg.error.code}): ${msg.error.message}`, msg.error.code, this.stderrTail()));
      else waiting.resolve(msg.result);
    }
  }

  private onStderr(chunk: Buffer): void {
    const text = this.stderrPartial + chunk.toString("utf8");
    const lines = text.split(/\r?\n/);
    this.stderrPartial = lines.pop() ?? "";
    // One at a time: a chunk can hold more lines than a spread can pass.
    for (const line of lines) this.stderrLines.push(line);
    if (this.stderrLines.length > STDERR_LINES) this.stderrLines.splice(0, this.stderrLines.length - STDERR_LINES);
  }

  private onExit(code: number | undefined, signal: string | undefined): void {
    this.exited = { code, signal };
    if (this.pending.length > 0) this.fail(this.diedError());
  }

  private diedError(): TrainerError {
    const how = this.exited?.signal ? `was killed by ${this.exited.signal}` : `exited with status ${this.exited?.code ?? "?"}`;
    return new TrainerError(`the trainer process ${how}`, "died", this.stderrTail());
  }

  private fail(error: TrainerError): void {
    this.failure ??= error;
    for (const p of this.pending.splice(0)) p.reject(error);
  }
}
