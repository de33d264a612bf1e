// The safetensors format, written and read here (no dependency): u64le header length N, then
// N bytes of UTF-8 JSON {"name": {"dtype", "shape", "data_offsets": [begin, end]}, ...,
// "__metadata__": {string: string}} (padded with spaces to a multiple of 8), then the raw
// little-endian data, offsets relative to the end of the header.
import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";
import { defined } from "../../contracts/checked.js";

export type StDtype = "F32" | "F64" | "I32" | "U8";
export interface StTensor {
  readonly dtype: StDtype;
  readonly shape: readonly number[];
  readonly data: Float32Array | Float64Array | Int32Array | Uint8Array;
}

const ctors = { F32: Float32Array, F64: Float64Array, I32: Int32Array, U8: Uint8Array } as const;

export function encodeSafetensors(
  tensors: ReadonlyMap<string, StTensor>,
  metadata: Readonly<Record<string, string>> = {},
): Buffer {
  const header: Record<string, unknown> = {};
  if (Object.keys(metadata).length > 0) header.__metadata__ = metadata;
  let offset = 0;
  const names = [...tensors.keys()].sort();
  for (const name of names) {
    const t = defined(tensors.get(name), `tensor ${name}`);
    const n = t.shape.reduce((a, b) => a * b, 1);
    if (n !== t.data.length)
      throw new RangeError(`tensor ${name}: shape ${t.shape.join("x")} but ${t.data.length} values`);
    header[name] = { dtype: t.dtype, shape: [...t.shape], data_offsets: [offset, offset + t.data.byteLength] };
    offset += t.data.byteLength;
  }
  let json = JSON.stringify(header);
  while ((8 + Buffer.byteLength(json)) % 8 !== 0) json += " ";
  const headerBytes = Buffer.from(json, "utf8");
  const out = Buffer.alloc(8 + headerBytes.length + offset);
  out.writeBigUInt64LE(BigInt(headerBytes.length), 0);
  headerBytes.copy(out, 8);
  let pos = 8 + headerBytes.length;
  for (const name of names) {
    const d = defined(tensors.get(name), `tensor ${name}`).data;
    Buffer.from(d.buffer, d.byteOffset, d.byteLength).copy(out, pos);
    pos += d.byteLength;
  }
  return out;
}

/** A file that is not a readable safetensors file (or not a regular file); the message names it. */
export class SafetensorsError extends Error {
  override readonly name = "SafetensorsError";
}

/** The most header bytes read (the safetensors library's own limit): a longer one is refused, not read. */
const MAX_HEADER_BYTES = 100 * 1024 * 1024;

/**
 * Opens `file` for reading if it is a regular file (after links), with its size. A device or a
 * FIFO is refused before a byte is read: /dev/zero never ends, and a FIFO blocks (it is opened
 * non-blocking, so that the open itself cannot wait for a writer).
 */
function openRegularFile(file: string): { fd: number; size: number } {
  let fd;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    throw new SafetensorsError(`cannot open ${file}: ${(error as Error).message}`);
  }
  const stat = fstatSync(fd);
  if (!stat.isFile()) {
    closeSync(fd);
    throw new SafetensorsError(
      `${file} is not a regular file (a device, FIFO or socket): a checkpoint's files are the ones the trainer's save wrote`,
    );
  }
  return { fd, size: stat.size };
}

/** A whole regular file of at most `maxBytes` bytes (checked against its size before it is read). */
export function readRegularFile(file: string, maxBytes: number): Buffer {
  const { fd, size } = openRegularFile(file);
  try {
    if (size > maxBytes)
      throw new SafetensorsError(`${file} has ${size} bytes, more than the ${maxBytes} such a file can have`);
    return readAt(fd, file, 0, size);
  } finally {
    closeSync(fd);
  }
}

/** Exactly `length` bytes at `position` (the file shrank: refused). */
function readAt(fd: number, file: string, position: number, length: number): Buffer {
  const out = Buffer.alloc(length);
  let done = 0;
  while (done < length) {
    const n = readSync(fd, out, done, length - done, position + done);
    if (n === 0)
      throw new SafetensorsError(
        `${file} ended at byte ${position + done}, before the ${position + length} its header declares`,
      );
    done += n;
  }
  return out;
}

interface HeaderEntry {
  readonly dtype: StDtype;
  readonly shape: readonly number[];
  readonly begin: number;
  readonly end: number;
}

const isCount = (v: unknown): v is number => typeof v === "number" && Number.isSafeInteger(v) && v >= 0;

/** The header's tensors, each checked: a known dtype, a shape of counts, offsets that hold exactly that shape and lie inside `dataBytes`. */
function headerEntries(
  file: string,
  header: unknown,
  dataBytes: number,
): { entries: Map<string, HeaderEntry>; metadata: Record<string, string> } {
  if (typeof header !== "object" || header === null || Array.isArray(header))
    throw new SafetensorsError(`${file}: the header is not a JSON object`);
  const entries = new Map<string, HeaderEntry>();
  let metadata: Record<string, string> = {};
  for (const [name, info] of Object.entries(header as Record<string, unknown>)) {
    if (name === "__metadata__") {
      if (typeof info === "object" && info !== null) metadata = info as Record<string, string>;
      continue;
    }
    const {
      dtype,
      shape,
      data_offsets: offsets,
    } = (info ?? {}) as { dtype?: unknown; shape?: unknown; data_offsets?: unknown };
    if (typeof dtype !== "string" || !(dtype in ctors))
      throw new SafetensorsError(
        `${file}: tensor ${name} has dtype ${JSON.stringify(dtype)}, not one of ${Object.keys(ctors).join(", ")}`,
      );
    if (!Array.isArray(shape) || !shape.every(isCount))
      throw new SafetensorsError(`${file}: tensor ${name} has shape ${JSON.stringify(shape)}, not a list of sizes`);
    if (!Array.isArray(offsets) || offsets.length !== 2 || !offsets.every(isCount))
      throw new SafetensorsError(
        `${file}: tensor ${name} has data_offsets ${JSON.stringify(offsets)}, not [begin, end]`,
      );
    const [begin, end] = offsets as [number, number];
    const bytes = shape.reduce((a, b) => a * b, 1) * ctors[dtype as StDtype].BYTES_PER_ELEMENT;
    if (begin > end || end > dataBytes || end - begin !== bytes) {
      throw new SafetensorsError(
        `${file}: tensor ${name} declares bytes ${begin} to ${end} for shape [${shape.join(", ")}] (${bytes} bytes), but the file holds ${dataBytes} bytes of data`,
      );
    }
    entries.set(name, { dtype: dtype as StDtype, shape, begin, end });
  }
  return { entries, metadata };
}

/**
 * Reads a safetensors file, trusting nothing in it: a regular file only, a header length within
 * the file and MAX_HEADER_BYTES, then each tensor's declared bytes, checked against the file's
 * real size before they are read. Anything else is a SafetensorsError naming the file.
 */
export function readSafetensors(file: string): { tensors: Map<string, StTensor>; metadata: Record<string, string> } {
  const { fd, size } = openRegularFile(file);
  try {
    if (size < 8)
      throw new SafetensorsError(
        `${file} is not a safetensors file: ${size} bytes, fewer than its 8-byte header length`,
      );
    const declared = readAt(fd, file, 0, 8).readBigUInt64LE(0);
    if (declared > BigInt(Math.min(size - 8, MAX_HEADER_BYTES)))
      throw new SafetensorsError(
        `${file} is not a safetensors file: its header length ${declared} exceeds the file's ${size} bytes (or ${MAX_HEADER_BYTES})`,
      );
    const n = Number(declared);
    let header: unknown;
    try {
      header = JSON.parse(readAt(fd, file, 8, n).toString("utf8"));
    } catch (error) {
      throw new SafetensorsError(
        `${file} is not a safetensors file: its header is not JSON (${(error as Error).message})`,
      );
    }
    const { entries, metadata } = headerEntries(file, header, size - 8 - n);
    const tensors = new Map<string, StTensor>();
    for (const [name, e] of entries) {
      const bytes = readAt(fd, file, 8 + n + e.begin, e.end - e.begin);
      const data = new ctors[e.dtype](e.end === e.begin ? 0 : (e.end - e.begin) / ctors[e.dtype].BYTES_PER_ELEMENT);
      Buffer.from(data.buffer).set(bytes);
      tensors.set(name, { dtype: e.dtype, shape: e.shape, data });
    }
    return { tensors, metadata };
  } finally {
    closeSync(fd);
  }
}
