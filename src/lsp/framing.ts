// A guard in front of the JSON-RPC reader. vscode-jsonrpc's StreamMessageReader trusts the
// framing: after a non-numeric `Content-Length` it reports an error but has already consumed the
// header, so the body is then read as the next header and every later message is misframed; a
// huge length makes it wait (and buffer) forever. Either way the editor gets no answer again
// until it restarts the server. This stream reads the framing itself, passes well-formed
// messages through unchanged, and on anything malformed logs why, drops the bytes up to the
// next `Content-Length:` header and carries on from there.
import { Transform, type TransformCallback } from "node:stream";

export interface FramingOptions {
  /** Where a dropped message's reason goes (the server's stderr). */
  readonly log: (reason: string) => void;
  /** A header block longer than this is garbage (default 8 KiB). */
  readonly maxHeaderBytes?: number;
  /** A larger `Content-Length` is refused rather than waited for (default 64 MiB). */
  readonly maxContentLength?: number;
  /**
   * An incomplete body that receives nothing for this long, while a later header already sits in
   * the bytes counted as its body, was cut short: resynchronise there (default 2000 ms).
   */
  readonly stallMs?: number;
}

const HEADER_END = Buffer.from("\r\n\r\n", "latin1");
const HEADER_NAME = /content-length:/gi;
const HEADER_NAME_TEXT = "content-length:";
const HEADER_LINE = /^([!#$%&'*+\-.^_`|~0-9A-Za-z]+):[ \t]*(.*?)[ \t]*$/;

/** The body length a header block announces, or why the block is not a valid header. */
export function contentLength(header: string, maxContentLength: number): number | string {
  let length: number | undefined;
  for (const line of header.split("\r\n")) {
    const m = HEADER_LINE.exec(line);
    if (!m) return `a header line is not 'Name: value': ${JSON.stringify(clip(line))}`;
    const [, name = "", value = ""] = m;
    if (name.toLowerCase() !== "content-length") continue;
    if (length !== undefined) return "the header has two Content-Length fields";
    if (!/^\d{1,16}$/.test(value)) return `Content-Length is not a number of bytes: ${JSON.stringify(clip(value))}`;
    length = Number(value);
    if (length > maxContentLength) return `Content-Length ${length} is over the limit of ${maxContentLength} bytes`;
  }
  return length ?? "the header has no Content-Length";
}

export class FramingGuard extends Transform {
  private pending: Buffer = Buffer.alloc(0);
  /** The current message's body: where it starts in `pending` and how long it is. */
  private body: { start: number; length: number } | undefined;
  private stallTimer: NodeJS.Timeout | undefined;
  private readonly maxHeaderBytes: number;
  private readonly maxContentLength: number;
  private readonly stallMs: number;
  /** Messages dropped so far (for tests and the log). */
  dropped = 0;

  constructor(private readonly options: FramingOptions) {
    super();
    this.maxHeaderBytes = options.maxHeaderBytes ?? 8 * 1024;
    this.maxContentLength = options.maxContentLength ?? 64 * 1024 * 1024;
    this.stallMs = options.stallMs ?? 2000;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    this.drain();
    done();
  }

  override _flush(done: TransformCallback): void {
    this.clearStall();
    if (this.pending.length > 0) this.options.log(`the input ended inside a message: ${this.pending.length} bytes dropped`);
    done();
  }

  override _destroy(error: Error | null, done: (error: Error | null) => void): void {
    this.clearStall();
    done(error);
  }

  /** Passes on every complete, well-formed message in `pending`. */
  private drain(): void {
    this.clearStall();
    for (;;) {
      if (!this.body) {
        const end = this.pending.indexOf(HEADER_END);
        if (end < 0) {
          if (this.pending.length > this.maxHeaderBytes) this.resync(`no end of header within ${this.maxHeaderBytes} bytes`, 1);
          else return;
          continue;
        }
        const length = contentLength(this.pending.subarray(0, end).toString("latin1"), this.maxContentLength);
        if (typeof length === "string") {
          this.resync(length, 1);
          continue;
        }
        this.body = { start: end + HEADER_END.length, length };
      }
      const { start, length } = this.body;
      if (this.pending.length < start + length) {
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
      this.pending = this.pending.subarray(start + length);
      this.body = undefined;
    }
  }

  private stalled(): void {
    this.stallTimer = undefined;
    if (!this.body || nextHeader(this.pending, this.body.start) < 0) return; // a slow sender: keep waiting
    this.resync(`a body of ${this.body.length} bytes stopped short, and another message began inside it`, this.body.start);
    this.drain();
  }

  /** Drops the current message: everything before the next `Content-Length:` at or after `from`. */
  private resync(reason: string, from: number): void {
    this.body = undefined;
    this.dropped++;
    const next = nextHeader(this.pending, from);
    // At least one byte goes, so that the same bytes are never judged twice.
    const skip = Math.max(1, next >= 0 ? next : this.pending.length - headerNamePrefixAtEnd(this.pending));
    this.options.log(`malformed message dropped (${reason}); skipped ${skip} bytes ${next >= 0 ? "to the next header" : "and waiting for a header"}`);
    this.pending = this.pending.subarray(skip);
  }

  private clearStall(): void {
    if (this.stallTimer) clearTimeout(this.stallTimer);
    this.stallTimer = undefined;
  }
}

/** Where the next `Content-Length:` at or after `from` starts, or -1. */
function nextHeader(buffer: Buffer, from: number): number {
  HEADER_NAME.lastIndex = 0;
  const text = buffer.subarray(from).toString("latin1");
  const m = HEADER_NAME.exec(text);
  return m ? from + m.index : -1;
}

/**
 * How many bytes at the end of `buffer` could begin a `Content-Length:` that the next chunk
 * completes: they are kept when the garbage before them is dropped.
 */
function headerNamePrefixAtEnd(buffer: Buffer): number {
  const tail = buffer.subarray(Math.max(0, buffer.length - (HEADER_NAME_TEXT.length - 1))).toString("latin1").toLowerCase();
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
