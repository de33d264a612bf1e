// Reading past a message whose Content-Length is over the language server's limit, without
// keeping it: the body is scanned byte by byte as it streams by, for two things. Its top-level
// `id` and `method`, so that a request is answered with an error instead of never. And where a
// lying length really ends: a body is a JSON object or array, so the first byte after it closes
// that is not white space, or a byte JSON never holds (a letter outside a literal, a control
// character inside a string, as a header's line break is), begins what follows.

/** What the top level of a skipped body said about itself. */
export interface SkippedMessage {
  readonly id?: number | string;
  readonly method?: string;
}

/** Captured values longer than this are no id or method name. */
const MAX_VALUE_BYTES = 256;
const MAX_KEY_BYTES = 8;
/** Bytes kept before a break inside a string, where the next message's header name can start. */
const LOOKBACK_BYTES = 64;
const HEADER_NAME = "content-length:";

// The bytes JSON allows outside strings: structure, white space, numbers and true/false/null.
const OUTSIDE_STRING = new Uint8Array(256);
for (const c of "{}[],: \t\r\n0123456789+-.eEtrufalsn") OUTSIDE_STRING[c.charCodeAt(0)] = 1;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

export type FeedResult =
  /** All of `chunk` was body; more is to come. */
  | { readonly kind: "more" }
  /** The declared length is reached after `used` bytes of `chunk`. */
  | { readonly kind: "complete"; readonly used: number }
  /** The body ended early (a length that lied) after `skipped` bytes in all: what follows is `rest`. */
  | { readonly kind: "short"; readonly rest: Buffer; readonly skipped: number; readonly reason: string };

export class OversizedBody {
  private remaining: number;
  /** Bytes of the body read so far, before the current chunk. */
  private read = 0;
  private depth = 0;
  private inString = false;
  private escaped = false;
  private closed = false;
  /** At depth 1: the next string is a key; the key just read; the value being captured. */
  private expectKey = false;
  private key: number[] | undefined;
  private lastKey = "";
  private capture: number[] | undefined;
  private captureKey = "";
  private id: number | string | undefined;
  private method: string | undefined;
  /** The last bytes before the current chunk, for a header name cut by a chunk boundary. */
  private tail: Buffer = Buffer.alloc(0);

  constructor(readonly declared: number) {
    this.remaining = declared;
  }

  /** The top-level `id` and `method` seen so far. */
  get message(): SkippedMessage {
    return {
      ...(this.id !== undefined ? { id: this.id } : {}),
      ...(this.method !== undefined ? { method: this.method } : {}),
    };
  }

  feed(chunk: Buffer): FeedResult {
    const n = Math.min(chunk.length, this.remaining);
    for (let i = 0; i < n; i++) {
      const reason = this.step(chunk[i] ?? 0);
      if (reason === undefined) continue;
      const rest = this.restFrom(chunk, i);
      return { kind: "short", rest, skipped: this.read + chunk.length - rest.length, reason };
    }
    this.remaining -= n;
    this.read += n;
    const kept = Buffer.concat([this.tail, chunk.subarray(Math.max(0, n - LOOKBACK_BYTES), n)]);
    this.tail = kept.subarray(Math.max(0, kept.length - LOOKBACK_BYTES));
    return this.remaining === 0 ? { kind: "complete", used: n } : { kind: "more" };
  }

  /** Undefined while the byte can belong to the body; else why it cannot. */
  private step(byte: number): string | undefined {
    if (this.inString) {
      if (this.escaped) this.escaped = false;
      else if (byte === BACKSLASH) this.escaped = true;
      else if (byte === QUOTE) this.endString();
      else if (byte < 0x20) return "a control character inside a string";
      this.record(byte);
      return undefined;
    }
    if (this.closed) return isSpace(byte) ? undefined : "bytes after the end of the JSON value";
    if (this.depth === 0 && byte !== 0x7b && byte !== 0x5b && !isSpace(byte))
      return "the body is not a JSON object or array";
    if (byte !== QUOTE && OUTSIDE_STRING[byte] !== 1) return "a byte JSON never holds outside a string";
    if (this.depth === 1 && this.capture && (byte === 0x2c || byte === 0x7d)) this.endCapture();
    if (byte === QUOTE) {
      this.inString = true;
      if (this.depth === 1 && this.expectKey) this.key = [];
      this.record(byte);
      return undefined;
    }
    this.record(byte);
    if (byte === 0x7b || byte === 0x5b) {
      this.depth++;
      if (this.depth === 1) this.expectKey = byte === 0x7b;
    } else if (byte === 0x7d || byte === 0x5d) {
      this.depth--;
      if (this.depth === 0) this.closed = true;
    } else if (this.depth === 1 && byte === 0x2c) {
      this.expectKey = true;
    } else if (this.depth === 1 && byte === 0x3a && (this.lastKey === "id" || this.lastKey === "method")) {
      this.capture = [];
      this.captureKey = this.lastKey;
    }
    return undefined;
  }

  private endString(): void {
    this.inString = false;
    if (this.key) {
      this.lastKey = this.key.length <= MAX_KEY_BYTES ? String.fromCharCode(...this.key) : "";
      this.key = undefined;
      this.expectKey = false;
    }
  }

  /** Collects the bytes of a key being read, or of an id or method value. */
  private record(byte: number): void {
    if (this.key && byte !== QUOTE) {
      if (this.key.length <= MAX_KEY_BYTES) this.key.push(byte);
    } else if (this.capture) {
      if (this.capture.length < MAX_VALUE_BYTES) this.capture.push(byte);
      else this.capture = undefined;
    }
  }

  private endCapture(): void {
    const text = Buffer.from(this.capture ?? [])
      .toString("utf8")
      .trim();
    this.capture = undefined;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return;
    }
    if (this.captureKey === "id" && (typeof value === "number" || typeof value === "string")) this.id = value;
    if (this.captureKey === "method" && typeof value === "string") this.method = value;
  }

  /**
   * What follows the body, from byte `i` of `chunk` on: inside a string, the next message's
   * header name came before the break (the line break after its value broke the string).
   */
  private restFrom(chunk: Buffer, i: number): Buffer {
    if (!this.inString) return chunk.subarray(i);
    const before = Buffer.concat([this.tail, chunk.subarray(Math.max(0, i - LOOKBACK_BYTES), i)]);
    const at = before.toString("latin1").toLowerCase().lastIndexOf(HEADER_NAME);
    return at < 0 ? chunk.subarray(i) : Buffer.concat([before.subarray(at), chunk.subarray(i)]);
  }
}

function isSpace(byte: number): boolean {
  return byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0d;
}
