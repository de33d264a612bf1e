// Raw HTTP over a TCP socket, for requests no HTTP client will send (targets that are no URL,
// broken chunking, truncated bodies) and for what a server does with the connection afterwards.
import { connect } from "node:net";

export interface RawExchange {
  /** Every byte the server sent before the connection closed (or the wait ended). */
  readonly data: Buffer;
  /** The status of each response found in `data`, in order. */
  readonly statuses: number[];
  /** True when the server closed the connection (false: the wait ended first). */
  readonly closed: boolean;
  /** A socket error seen (ECONNRESET, ...), if any. */
  readonly error: string | null;
}

export interface RawOptions {
  /**
   * Half-close after sending (no more bytes will come), and collect until the server closes: for
   * bytes that stop inside a request. Otherwise the connection stays open, as a client's does
   * (Node's server drops a request whose client half-closed before it was answered), and the
   * exchange ends with the first whole response. Default: true.
   */
  readonly halfClose?: boolean;
  /** The request is a HEAD: its answer's head is the whole answer. */
  readonly head?: boolean;
  readonly waitMs?: number;
}

/**
 * Sends `bytes` on a new connection to `origin`, then collects what the server sends until it
 * closes the connection, or (without halfClose) until the first whole response, or `waitMs` passes.
 */
export function rawExchange(origin: string, bytes: Buffer | string, options: RawOptions = {}): Promise<RawExchange> {
  const { halfClose = true, head = false, waitMs = 20_000 } = options;
  const { hostname, port } = new URL(origin);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port), allowHalfOpen: true });
    const parts: Buffer[] = [];
    let error: string | null = null;
    const finish = (closed: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      const data = Buffer.concat(parts);
      resolve({ data, statuses: statusesOf(data), closed, error });
    };
    const timer = setTimeout(() => finish(false), waitMs);
    socket.on("data", (part: Buffer) => {
      parts.push(part);
      if (!halfClose && wholeFirstResponse(Buffer.concat(parts), head)) finish(true);
    });
    socket.on("error", (e: NodeJS.ErrnoException) => (error = e.code ?? e.message));
    socket.on("close", () => finish(true));
    socket.on("end", () => socket.end());
    socket.on("connect", () => {
      socket.write(bytes);
      if (halfClose) socket.end();
    });
  });
}

export type KeptAliveAnswer = { status: number; headers: string } | { error: string };

/**
 * Sends the requests one after another on one kept-alive connection, each after the previous
 * answer arrived, as a client does: an answer that says `Connection: close` ends the sending and
 * the wait is for the server to close. Returns each answer's status and headers, or what ended
 * the connection instead of an answer ("closed" by the server, ECONNRESET, ...).
 */
export function keepAliveExchange(
  origin: string,
  requests: readonly string[],
  waitMs = 20_000,
): Promise<KeptAliveAnswer[]> {
  const { hostname, port } = new URL(origin);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port) });
    const results: KeptAliveAnswer[] = [];
    let buffer = Buffer.alloc(0);
    let toldClose = false;
    const done = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve(results);
    };
    const timer = setTimeout(done, waitMs);
    const next = () => {
      const request = requests[results.length];
      if (request === undefined) return done();
      socket.write(request);
    };
    socket.on("data", (part: Buffer) => {
      buffer = Buffer.concat([buffer, part]);
      const answer = completeResponse(buffer);
      if (answer === null) return;
      buffer = buffer.subarray(answer.length);
      results.push({ status: answer.status, headers: answer.headers });
      toldClose = /\r\nconnection:\s*close/i.test(answer.headers);
      if (!toldClose) next();
    });
    socket.on("error", (e: NodeJS.ErrnoException) => {
      results.push({ error: e.code ?? e.message });
      done();
    });
    socket.on("close", () => {
      if (!toldClose && results.length < requests.length) results.push({ error: "closed" });
      done();
    });
    socket.on("connect", next);
  });
}

/** Whether `data` holds a whole final (not 1xx) response: its head, and its body by Content-Length or chunked framing. */
function wholeFirstResponse(data: Buffer, head: boolean): boolean {
  let rest = data;
  for (;;) {
    const end = rest.indexOf("\r\n\r\n");
    if (end < 0) return false;
    const headers = rest.subarray(0, end).toString("latin1");
    if (/^HTTP\/1\.[01] 1\d\d /.test(headers)) {
      rest = rest.subarray(end + 4);
      continue;
    }
    if (head) return true;
    if (/\r\ntransfer-encoding:\s*chunked/i.test(headers)) return rest.includes("\r\n0\r\n\r\n", end);
    return rest.length >= end + 4 + Number(/\r\ncontent-length:\s*(\d+)/i.exec(headers)?.[1] ?? "0");
  }
}

/** The first whole response in `data` (a Content-Length body), or null while it is incomplete. */
function completeResponse(data: Buffer): { status: number; headers: string; length: number } | null {
  const end = data.indexOf("\r\n\r\n");
  if (end < 0) return null;
  const headers = data.subarray(0, end).toString("latin1");
  const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(headers)?.[1] ?? "0");
  if (data.length < end + 4 + length) return null;
  return { status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(headers)?.[1] ?? "0"), headers, length: end + 4 + length };
}

/** The statuses of the responses in `data`, read one after another (a chunked one, an event stream, ends the reading). */
function statusesOf(data: Buffer): number[] {
  const statuses: number[] = [];
  let rest = data;
  for (;;) {
    const status = /^HTTP\/1\.[01] (\d{3}) /.exec(rest.subarray(0, 16).toString("latin1"))?.[1];
    if (status === undefined) return statuses;
    statuses.push(Number(status));
    const answer = completeResponse(rest);
    if (answer === null || /\r\ntransfer-encoding:\s*chunked/i.test(answer.headers)) return statuses;
    rest = rest.subarray(answer.length);
  }
}
