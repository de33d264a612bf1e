// The plan hash: sha256 over the canonical JSON (RFC 8785) of the plan without `hash` and
// `provenance`. Provenance records file hashes, which change with comments and formatting;
// the plan hash must change with meaning only.
import { createHash } from "node:crypto";
import { closeSync, openSync, readSync } from "node:fs";
import { canonicalFields, joinCanonicalFields } from "./canonical.js";

export function sha256Hex(data: string | Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}

/** The sha256 of a file's bytes, read a chunk at a time (a data file may be larger than one string or buffer can hold). */
export function sha256File(file: string, chunkBytes = 1 << 20): string {
  const hash = createHash("sha256");
  const fd = openSync(file, "r");
  try {
    const buffer = Buffer.allocUnsafe(chunkBytes);
    for (let n = readSync(fd, buffer); n > 0; n = readSync(fd, buffer)) hash.update(buffer.subarray(0, n));
  } finally {
    closeSync(fd);
  }
  return hash.digest("hex");
}

/** `sha256:<hex>` of a plan's meaning. Accepts a plan with or without `hash`/`provenance`. */
export function planHash(plan: object): string {
  const { hash: _hash, provenance: _provenance, ...meaning } = plan as Record<string, unknown>;
  return planHashOfFields(canonicalFields(meaning));
}

/** planHash from the canonical texts of the plan's fields (canonicalFields); `hash` and `provenance` are left out. */
export function planHashOfFields(fields: ReadonlyMap<string, string>): string {
  const meaning = new Map(fields);
  meaning.delete("hash");
  meaning.delete("provenance");
  return `sha256:${sha256Hex(joinCanonicalFields(meaning))}`;
}
