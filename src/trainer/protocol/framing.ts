// Binary framing of the trainer protocol (docs/protocol.md): JSON for structure, raw little-endian
// typed arrays for bulk data, so a batch of 256 x 4,096 token ids is 4 MiB of bytes, not
// 10 MiB of JSON text.
//
//   frame   = magic "ARL1" | u32le header_length | u32le payload_length | header | payload
//   header  = UTF-8 JSON; every typed array in the message is replaced by {"$array": k}
//   payload = the arrays, each starting at a multiple of 8 bytes, described by header.arrays[k]
import { at } from "../../contracts/checked.js";

const MAGIC = Buffer.from("ARL1", "ascii");
const PREFIX = 12;
/** Headers are small; a huge one means a corrupt stream, not a big batch. */
const MAX_HEADER_BYTES = 64 * 1024 * 1024;

type DType = "int32" | "float32" | "float64" | "uint8";
type BulkArray = Int32Array | Float32Array | Float64Array | Uint8Array;

interface ArrayDescriptor {
  readonly dtype: DType;
  readonly offset: number;
  readonly length: number;
}

function dtypeOf(a: BulkArray): DType {
  if (a instanceof Int32Array) return "int32";
  if (a instanceof Float32Array) return "float32";
  if (a instanceof Float64Array) return "float64";
  return "uint8";
}

const constructors = { int32: Int32Array, float32: Float32Array, float64: Float64Array, uint8: Uint8Array } as const;

function isBulkArray(v: unknown): v is BulkArray {
  return v instanceof Int32Array || v instanceof Float32Array || v instanceof Float64Array || v instanceof Uint8Array;
}

export class ProtocolError extends Error {}

/**
 * One message's frame as the pieces it is written in: the prefix and header, then per array its
 * alignment padding and a view of the array itself (no copy). A stream writes them in order
 * (writeFrame); the arrays must not change until they are written.
 */
function frameParts(message: unknown): Buffer[] {
  const arrays: BulkArray[] = [];
  const descriptors: ArrayDescriptor[] = [];
  let payloadLength = 0;
  const header = JSON.stringify(message, (_key, value: unknown) => {
    if (isBulkArray(value)) {
      payloadLength = Math.ceil(payloadLength / 8) * 8;
      descriptors.push({ dtype: dtypeOf(value), offset: payloadLength, length: value.length });
      arrays.push(value);
      payloadLength += value.byteLength;
      return { $array: arrays.length - 1 };
    }
    return value;
  });
  const headerBytes = Buffer.from(
    JSON.stringify({ message: JSON.parse(header) as unknown, arrays: descriptors }),
    "utf8",
  );
  const head = Buffer.allocUnsafe(PREFIX + headerBytes.length);
  MAGIC.copy(head, 0);
  head.writeUInt32LE(headerBytes.length, 4);
  head.writeUInt32LE(payloadLength, 8);
  headerBytes.copy(head, PREFIX);
  const parts: Buffer[] = [head];
  let written = 0;
  arrays.forEach((a, i) => {
    const offset = at(descriptors, i).offset;
    if (offset > written) parts.push(Buffer.alloc(offset - written)); // alignment padding
    parts.push(Buffer.from(a.buffer, a.byteOffset, a.byteLength));
    written = offset + a.byteLength;
  });
  return parts;
}

/** Encodes one message (any JSON value with typed arrays anywhere inside) as one frame (a copy of its parts). */
export function encodeFrame(message: unknown): Buffer {
  return Buffer.concat(frameParts(message));
}

/**
 * Writes one message's frame to a stream without first copying its arrays into one buffer (for
 * a batch of 256 x 4,096 tokens that copy was a third of a round trip); corked, so that the
 * pieces go out as one vectored write where the stream allows it.
 */
export function writeFrame(stream: NodeJS.WritableStream, message: unknown): void {
  const parts = frameParts(message);
  const corkable = stream as NodeJS.WritableStream & { cork?(): void; uncork?(): void };
  corkable.cork?.();
  for (const part of parts) stream.write(part);
  corkable.uncork?.();
}

function revive(value: unknown, arrays: readonly BulkArray[]): unknown {
  if (Array.isArray(value)) return value.map((v) => revive(v, arrays));
  if (value && typeof value === "object") {
    const ref = (value as { $array?: unknown }).$array;
    if (typeof ref === "number" && Object.keys(value).length === 1) {
      const a = arrays[ref];
      if (!a) throw new ProtocolError(`frame refers to array ${ref}, which it does not carry`);
      return a;
    }
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = revive(v, arrays);
    return out;
  }
  return value;
}

/**
 * Incremental decoder: feed it chunks of a stream, take whole messages out. Each frame is
 * assembled once into its own buffer, placed so that its payload is 8-byte aligned; the arrays
 * of the decoded message are views of it (one copy from the pipe, none after).
 */
export class FrameDecoder {
  private prefix = Buffer.alloc(PREFIX);
  private prefixFilled = 0;
  private frame: Buffer | undefined;
  private filled = 0;

  /** Bytes received that do not yet form a whole frame. */
  get pendingBytes(): number {
    return this.frame ? this.filled : this.prefixFilled;
  }

  push(chunk: Buffer): unknown[] {
    const messages: unknown[] = [];
    let at = 0;
    while (at < chunk.length) {
      if (!this.frame) {
        const n = Math.min(PREFIX - this.prefixFilled, chunk.length - at);
        chunk.copy(this.prefix, this.prefixFilled, at, at + n);
        this.prefixFilled += n;
        at += n;
        if (this.prefixFilled < PREFIX) break;
        if (!this.prefix.subarray(0, 4).equals(MAGIC)) {
          throw new ProtocolError(
            `stream is not in the ARL trainer framing (got ${JSON.stringify(this.prefix.subarray(0, 4).toString("latin1"))}); did the trainer print to stdout?`,
          );
        }
        const headerLength = this.prefix.readUInt32LE(4);
        const payloadLength = this.prefix.readUInt32LE(8);
        if (headerLength > MAX_HEADER_BYTES)
          throw new ProtocolError(`frame header of ${headerLength} bytes is too large`);
        const total = PREFIX + headerLength + payloadLength;
        const shift = (8 - ((PREFIX + headerLength) % 8)) % 8;
        this.frame = Buffer.allocUnsafeSlow(total + shift).subarray(shift);
        this.prefix.copy(this.frame, 0);
        this.filled = PREFIX;
        this.prefixFilled = 0;
      }
      const n = Math.min(this.frame.length - this.filled, chunk.length - at);
      chunk.copy(this.frame, this.filled, at, at + n);
      this.filled += n;
      at += n;
      if (this.filled === this.frame.length) {
        const frame = this.frame;
        this.frame = undefined;
        this.filled = 0;
        messages.push(decodeFrame(frame, false));
      }
    }
    return messages;
  }
}

/**
 * Decodes one complete frame. With `copy`, arrays get buffers of their own; without, they are
 * views of `frame` wherever the alignment allows (the caller hands the frame over).
 */
export function decodeFrame(frame: Buffer, copy = true): unknown {
  if (frame.length < PREFIX || !frame.subarray(0, 4).equals(MAGIC)) throw new ProtocolError("not an ARL trainer frame");
  const headerLength = frame.readUInt32LE(4);
  const payloadLength = frame.readUInt32LE(8);
  if (frame.length !== PREFIX + headerLength + payloadLength)
    throw new ProtocolError("frame length does not match its prefix");
  let header: { message: unknown; arrays: ArrayDescriptor[] };
  try {
    header = JSON.parse(frame.subarray(PREFIX, PREFIX + headerLength).toString("utf8")) as typeof header;
  } catch (error) {
    throw new ProtocolError(`frame header is not JSON: ${(error as Error).message}`);
  }
  const payload = frame.subarray(PREFIX + headerLength);
  const arrays = (header.arrays ?? []).map((d) => {
    const ctor = constructors[d.dtype];
    if (!ctor) throw new ProtocolError(`unknown array dtype '${String(d.dtype)}'`);
    const bytes = d.length * ctor.BYTES_PER_ELEMENT;
    if (d.offset < 0 || d.offset + bytes > payload.length)
      throw new ProtocolError("array lies outside the frame's payload");
    const start = payload.byteOffset + d.offset;
    if (!copy && start % ctor.BYTES_PER_ELEMENT === 0) return new ctor(payload.buffer as ArrayBuffer, start, d.length);
    const own = new ctor(d.length);
    Buffer.from(own.buffer).set(payload.subarray(d.offset, d.offset + bytes));
    return own;
  });
  return revive(header.message, arrays);
}
