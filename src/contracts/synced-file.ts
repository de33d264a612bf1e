// A file written whole and fsynced before the caller renames its directory into place: what a
// checkpoint or a cache entry holds must be on disk before the rename makes it visible.
import { closeSync, fsyncSync, openSync, writeSync } from "node:fs";

/** Writes `data` to `file` (created or truncated) and fsyncs it. */
export function writeFileSynced(file: string, data: Uint8Array | string): void {
  const fd = openSync(file, "w");
  try {
    const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : data;
    for (let off = 0; off < bytes.length;) off += writeSync(fd, bytes, off, bytes.length - off);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
