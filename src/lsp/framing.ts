// A guard in front of the JSON-RPC reader. vscode-jsonrpc's StreamMessageReader trusts the
// framing: after a non-numeric `Content-Length` it reports an error but has already consumed the
// header, so the body is then read as the next header and every later message is misframed; a
// huge length makes it wait (and buffer) forever. Either way the editor gets no answer again
// until it restarts the server. This stream reads the framing itself, passes well-formed
// messages through unchanged, and on anything malformed logs why, drops the bytes up to the
// next `Content-Length:` header and carries on from there.
//
// Linear in the bytes it reads: a body that is still arriving is a list of chunks, joined once
// when it is complete (joining on every chunk made a 50 MB message cost minutes). A message over
// `maxContentLength` is not kept at all: it is read past (src/lsp/oversized.ts) and replaced by a
// MESSAGE_TOO_LARGE message carrying its id and method, which the server answers with an error.
import { Transform, type TransformCallback } from "node:stream";
import { OversizedBody, type SkippedMessage } from "./oversized.js";

export interface FramingOptions {
  /** Where a dropped message's reason goes (the server's stderr). */
  readonly log: (reason: string) => void;
  /** A header block longer than this is garbage (default 8 KiB). */
  readonly maxHeaderBytes?: number;
  /** A larger message is read past and answered with an error, not kept (default DEFAULT_MAX_MESSAGE_BYTES). */
  readonly maxContentLength?: number;
  /**
   * An incomplete body that receives nothing for this long, while a later header already sits in
   * the bytes counted as its body, was cut short: resynchronise there (default 2000 ms).
   */
  readonly stallMs?: number;
}

/** The largest message the server reads (docs/architecture.md, "The language server"). */
export const DEFAULT_MAX_MESSAGE_BYTES = 64 * 1024 * 1024;
/** What a message over the limit is replaced by: a request keeps its id, a notification has none. */
export const MESSAGE_TOO_LARGE = "$/arl/messageTooLarge";

export interface MessageTooLargeParams {
  /** The refused message's method, when its top level named one. */
  readonly method?: string;
  readonly length: number;
  readonly limit: number;
}

/** The error text for a refused message, as the server answers or shows it. */
export function messageTooLargeText(p: MessageTooLargeParams): string {
  return `the language server refused ${p.method ? `a '${p.method}' message` : "a message"} of ${p.length} bytes: over its limit of ${p.limit} bytes (ARL_LSP_MAX_MESSAGE_BYTES)`;
}

const HEADER_END = Buffer.from("\r\n\r\n", "latin1");
const HEADER_NAME_TEXT = "content-length:";
const COLON = 0x3a;
const HEADER_LINE = /^([!#$%&'*+\-.^_`|~0-9A-Za-z]+):[ \t]*(.*?)[ \t]*$/;

/** The body length a header block announces, or why the block is not a valid header. */
export function contentLength(header: string): number | string {
  let length: number | undefined;
  for (const line of header.split("\r\n")) {
    const m = HEADER_LINE.exec(line);
    if (!m) return `a header line is not 'Name: value': ${JSON.stringify(clip(line))}`;
    const [, name = "", value = ""] = m;
    if (name.toLowerCase() !== "content-length") continue;
    if (length !== undefined) return "the header has two Content-Length fields";
    if (!/^\d{1,16}$/.test(value)) return `Content-Length is not a number of bytes: ${JSON.stringify(clip(value))}`;
    length = Number(value);
  }
  return length ?? "the header has no Content-Length";
}

export class FramingGuard extends Transform {
  /** Bytes not yet passed on or dropped: a header, or the start of a body still arriving. */
  private pending: Buffer = Buffer.alloc(0);
  /** The current message's body: where it starts in `pending` and how long it is. */
  private body: { start: number; length: number } | undefined;
  /** Chunks of that body that came after `pending`, joined once the body is complete. */
  private arriving: Buffer[] = [];
  private arrivingBytes = 0;
  /** A message over the limit being read past. */
  private oversized: OversizedBody | undefined;
  /** No header end starts before this offset of `pending` (so no byte is searched twice). */
  private headerEndSearched = 0;
  private stallTimer: NodeJS.Timeout | undefined;
  private readonly maxHeaderBytes: number;
  private readonly maxContentLength: number;
  private readonly stallMs: number;
  /** Messages dropped so far (for tests and the log). */
  dropped = 0;

  constructor(private readonly options: FramingOptions) {
    super();
    this.maxHeaderBytes = options.maxHeaderBytes ?? 8 * 1024;
    this.maxContentLength = options.maxContentLength ?? DEFAULT_MAX_MESSAGE_BYTES;
    this.stallMs = options.stallMs ?? 2000;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.clearStall();
    if (this.oversized) {
      this.skip(chunk);
    } else if (this.body) {
      this.arriving.push(chunk);
      this.arrivingBytes += chunk.length;
      if (this.pending.length + this.arrivingBytes >= this.body.start + this.body.length) this.joinArriving();
    } else {
      this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    }
    this.drain();
    done();
  }

  override _flush(done: TransformCallback): void {
    this.clearStall();
    const left = this.pending.length + this.arrivingBytes;
    if (left > 0 || this.oversized) this.options.log(`the input ended inside a message: ${left} bytes dropped`);
    done();
  }

  override _destroy(error: Error | null, done: (error: Error | null) => void): void {
    this.clearStall();
    done(error);
  }

  private joinArriving(): void {
    if (this.arriving.length === 0) return;
    this.pending = Buffer.concat([this.pending, ...this.arriving]);
    this.arriving = [];
    this.arrivingBytes = 0;
  }

  /** Passes on every complete, well-formed message in `pending`. */
  private drain(): void {
    while (!this.oversized) {
      if (!this.body) {
        const end = this.headerEnd();
        if (end < 0 || end > this.maxHeaderBytes) {
          if (end > this.maxHeaderBytes || this.pending.length > this.maxHeaderBytes)
            this.resync(`no end of header within ${this.maxHeaderBytes} bytes`, 1);
          else return;
          continue;
        }
        const length = contentLength(this.pending.subarray(0, end).toString("latin1"));
        if (typeof length === "string") {
          this.resync(length, 1);
          continue;
        }
        const start = end + HEADER_END.length;
        if (length > this.maxContentLength) {
          this.startSkipping(length, start);
          continue;
        }
        this.body = { start, length };
      }
      const { start, length } = this.body;
      if (this.pending.length + this.arrivingBytes < start + length) {
        this.stallTimer = setTimeout(() => this.stalled(), this.stallMs);
        this.stallTimer.unref();
        return;
      }
      const body = this.pending.subarray(start, start + length);
      if (!isJson(body)) {
        // A wrong length swallows (part of) the next message: look for its header inside.
        this.resync(`the body of ${length} bytes is not JSON`, start);
        continue;
      }
      this.push(this.pending.subarray(0, start + length));
      this.consume(start + length);
      this.body = undefined;
    }
  }

  /** Where the header block at the start of `pending` ends, or -1 when its end has not come. */
  private headerEnd(): number {
    const end = this.pending.indexOf(HEADER_END, this.headerEndSearched);
    this.headerEndSearched = end >= 0 ? end : Math.max(0, this.pending.length - (HEADER_END.length - 1));
    return end;
  }

  /** A message over the limit: read past its body as it comes, keeping none of it. */
  private startSkipping(length: number, start: number): void {
    this.oversized = new OversizedBody(length);
    const rest = this.pending.subarray(start);
    this.consume(this.pending.length);
    this.skip(rest);
  }

  private skip(chunk: Buffer): void {
    const skipping = this.oversized;
    if (!skipping || chunk.length === 0) return;
    const fed = skipping.feed(chunk);
    if (fed.kind === "more") return;
    this.oversized = undefined;
    this.dropped++;
    const limit = this.maxContentLength;
    const declared = `a message of ${skipping.declared} bytes, over the limit of ${limit} bytes`;
    if (fed.kind === "complete") {
      this.options.log(`${declared}, was read past and refused`);
      this.pending = chunk.subarray(fed.used);
    } else {
      this.options.log(
        `malformed message dropped (${declared}, ended early: ${fed.reason}); skipped ${fed.skipped} bytes to what follows`,
      );
      this.pending = fed.rest;
    }
    this.headerEndSearched = 0;
    this.refuse(skipping.message, skipping.declared);
  }

  /** Passes on, in place of a refused message, one that the server answers with the reason. */
  private refuse(message: SkippedMessage, length: number): void {
    if (message.method === undefined) return; // a response, or no JSON-RPC at all: nobody waits for it
    const params: MessageTooLargeParams = { method: message.method, length, limit: this.maxContentLength };
    const replacement = {
      jsonrpc: "2.0",
      ...(message.id !== undefined ? { id: message.id } : {}),
      method: MESSAGE_TOO_LARGE,
      params,
    };
    const text = Buffer.from(JSON.stringify(replacement), "utf8");
    this.push(Buffer.concat([Buffer.from(`Content-Length: ${text.length}\r\n\r\n`, "latin1"), text]));
  }

  /** Drops the first `n` bytes of `pending`. */
  private consume(n: number): void {
    this.pending = this.pending.subarray(n);
    this.headerEndSearched = Math.max(0, this.headerEndSearched - n);
  }

  private stalled(): void {
    this.stallTimer = undefined;
    if (!this.body) return;
    this.joinArriving();
    if (nextHeader(this.pending, this.body.start) < 0) return; // a slow sender: keep waiting
    this.resync(
      `a body of ${this.body.length} bytes stopped short, and another message began inside it`,
      this.body.start,
    );
    this.drain();
  }

  /** Drops the current message: everything before the next `Content-Length:` at or after `from`. */
  private resync(reason: string, from: number): void {
    this.body = undefined;
    this.dropped++;
    this.joinArriving();
    const next = nextHeader(this.pending, from);
    // At least one byte goes, so that the same bytes are never judged twice.
    const skip = Math.max(1, next >= 0 ? next : this.pending.length - headerNamePrefixAtEnd(this.pending));
    this.options.log(
      `malformed message dropped (${reason}); skipped ${skip} bytes ${next >= 0 ? "to the next header" : "and waiting for a header"}`,
    );
    this.consume(skip);
  }

  private clearStall(): void {
    if (this.stallTimer) clearTimeout(this.stallTimer);
    this.stallTimer = undefined;
  }
}

/** Where the next `Content-Length:` (any case) at or after `from` starts, or -1; reads no further than that. */
function nextHeader(buffer: Buffer, from: number): number {
  const nameLength = HEADER_NAME_TEXT.length - 1;
  for (let colon = buffer.indexOf(COLON, from + nameLength); colon >= 0; colon = buffer.indexOf(COLON, colon + 1)) {
    const start = colon - nameLength;
    if (buffer.toString("latin1", start, colon).toLowerCase() === "content-length") return start;
  }
  return -1;
}

/**
 * How many bytes at the end of `buffer` could begin a `Content-Length:` that the next chunk
 * completes: they are kept when the garbage before them is dropped.
 */
function headerNamePrefixAtEnd(buffer: Buffer): number {
  const tail = buffer
    .subarray(Math.max(0, buffer.length - (HEADER_NAME_TEXT.length - 1)))
    .toString("latin1")
    .toLowerCase();
  for (let n = tail.length; n > 0; n--) if (HEADER_NAME_TEXT.startsWith(tail.slice(tail.length - n))) return n;
  return 0;
}

function isJson(body: Buffer): boolean {
  try {
    JSON.parse(body.toString("utf8"));
    return true;
  } catch {
    return false;
  }
}

function clip(text: string): string {
  return text.length <= 60 ? text : `${text.slice(0, 60)}...`;
}
