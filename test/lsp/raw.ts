// A raw byte channel to `node bin/arl.js lsp --stdio`, for the framing tests: the test writes
// whatever bytes it likes to the server's stdin and reads its well-framed answers back.
import { spawn, type ChildProcess } from "node:child_process";
import {
  StreamMessageReader,
  type Message,
  type NotificationMessage,
  type ResponseMessage,
} from "vscode-languageserver-protocol/node";
import { BIN, REPO } from "./client.js";

/** One JSON-RPC message framed as the protocol wants it. */
export function frame(message: object): Buffer {
  const body = Buffer.from(JSON.stringify(message), "utf8");
  return Buffer.concat([Buffer.from(`Content-Length: ${body.length}\r\n\r\n`, "latin1"), body]);
}

export function request(id: number, method: string, params: object = {}): Buffer {
  return frame({ jsonrpc: "2.0", id, method, params });
}

/** A request every state of the server answers at once: hover on a document that is not open. */
export function probe(id: number): Buffer {
  return request(id, "textDocument/hover", {
    textDocument: { uri: "file:///nowhere/probe.arl" },
    position: { line: 0, character: 0 },
  });
}

export class RawServer {
  readonly responses = new Map<number, ResponseMessage>();
  /** The notifications the server sent (window/showMessage, publishDiagnostics, ...). */
  readonly notifications: NotificationMessage[] = [];
  readonly stderr: string[] = [];
  private waiters = new Map<number, () => void>();
  readonly exited: Promise<number | null>;

  private constructor(readonly child: ChildProcess) {
    child.stderr!.on("data", (chunk: Buffer) => this.stderr.push(chunk.toString()));
    child.stdin!.on("error", () => {}); // writes after an exit: the test looks at `exited`
    new StreamMessageReader(child.stdout!).listen((m: Message) => {
      if ("method" in m && !("id" in m)) this.notifications.push(m as NotificationMessage);
      const r = m as ResponseMessage;
      if (typeof r.id !== "number") return;
      this.responses.set(r.id, r);
      this.waiters.get(r.id)?.();
    });
    this.exited = new Promise((resolve) => child.once("exit", (code) => resolve(code)));
  }

  /** A server, initialized; `env` adds to its environment. */
  static async start(env: Record<string, string> = {}): Promise<RawServer> {
    const server = new RawServer(
      spawn(process.execPath, [BIN, "lsp", "--stdio"], {
        cwd: REPO,
        stdio: ["pipe", "pipe", "pipe"],
        env: { ...process.env, ...env },
      }),
    );
    server.write(request(0, "initialize", { processId: null, rootUri: null, capabilities: {} }));
    // A loaded machine can take many seconds to start node.
    if (!(await server.answer(0, 60_000)))
      throw new Error(`the server did not answer initialize; stderr: ${server.stderr.join("")}`);
    server.write(frame({ jsonrpc: "2.0", method: "initialized", params: {} }));
    return server;
  }

  write(bytes: Buffer | string): void {
    if (this.child.exitCode === null) this.child.stdin!.write(bytes);
  }

  /** The response to request `id`, or undefined if none came within `timeoutMs`. */
  answer(id: number, timeoutMs = 20_000): Promise<ResponseMessage | undefined> {
    if (this.responses.has(id)) return Promise.resolve(this.responses.get(id));
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiters.delete(id);
        resolve(undefined);
      }, timeoutMs);
      this.waiters.set(id, () => {
        clearTimeout(timer);
        this.waiters.delete(id);
        resolve(this.responses.get(id));
      });
    });
  }

  async stop(): Promise<void> {
    if (this.child.exitCode === null) this.child.kill("SIGKILL");
    await this.exited;
  }
}
