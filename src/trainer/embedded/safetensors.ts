// The safetensors format, written and read here (no dependency): u64le header length N, then
// N bytes of UTF-8 JSON {"name": {"dtype", "shape", "data_offsets": [begin, end]}, ...,
// "__metadata__": {string: string}} (padded with spaces to a multiple of 8), then the raw
// little-endian data, offsets relative to the end of the header.
import { readFileSync } from "node:fs";
import { defined } from "../../contracts/checked.js";

export type StDtype = "F32" | "F64" | "I32" | "U8";
export interface StTensor {
  readonly dtype: StDtype;
  readonly shape: readonly number[];
  readonly data: Float32Array | Float64Array | Int32Array | Uint8Array;
}

const ctors = { F32: Float32Array, F64: Float64Array, I32: Int32Array, U8: Uint8Array } as const;

export function encodeSafetensors(tensors: ReadonlyMap<string, StTensor>, metadata: Readonly<Record<string, string>> = {}): Buffer {
  const header: Record<string, unknown> = {};
  if (Object.keys(metadata).length > 0) header.__metadata__ = metadata;
  let offset = 0;
  const names = [...tensors.keys()].sort();
  for (const name of names) {
    const t = defined(tensors.get(name), `tensor ${name}`);
    const n = t.shape.reduce((a, b) => a * b, 1);
    if (n !== t.data.length) throw new RangeError(`tensor ${name}: shape ${t.shape.join("x")} but ${t.data.length} values`);
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

function decodeSafetensors(bytes: Buffer): { tensors: Map<string, StTensor>; metadata: Record<string, string> } {
  if (bytes.length < 8) throw new Error("not a safetensors file (too short)");
  const n = Number(bytes.readBigUInt64LE(0));
  if (8 + n > bytes.length) throw new Error("not a safetensors file (header past the end)");
  const header = JSON.parse(bytes.subarray(8, 8 + n).toString("utf8")) as Record<string, { dtype: StDtype; shape: number[]; data_offsets: [number, number] }>;
  const base = 8 + n;
  const tensors = new Map<string, StTensor>();
  let metadata: Record<string, string> = {};
  for (const [name, info] of Object.entries(header)) {
    if (name === "__metadata__") {
      metadata = info as unknown as Record<string, string>;
      continue;
    }
    const ctor = ctors[info.dtype];
    if (!ctor) throw new Error(`tensor ${name}: unsupported dtype ${info.dtype}`);
    const [b, e] = info.data_offsets;
    if (base + e > bytes.length || e < b) throw new Error(`tensor ${name}: data outside the file`);
    const data = new ctor((e - b) / ctor.BYTES_PER_ELEMENT);
    Buffer.from(data.buffer).set(bytes.subarray(base + b, base + e));
    tensors.set(name, { dtype: info.dtype, shape: info.shape, data });
  }
  return { tensors, metadata };
}

export function readSafetensors(file: string): { tensors: Map<string, StTensor>; metadata: Record<string, string> } {
  return decodeSafetensors(readFileSync(file));
}
