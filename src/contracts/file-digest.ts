// A running sha256 of an append-only file: seeded once from the file's committed prefix (the
// read that also verifies it), then fed each append, so that recording a checksum at every
// commit costs only the bytes appended since the last one.
import { createHash, type Hash } from "node:crypto";
import { closeSync, fstatSync, openSync, readSync } from "node:fs";

/** What a commit records of one file: its length and the sha256 of those bytes. */
export interface FileCommit {
  readonly bytes: number;
  readonly sha256: string;
}

export class RunningDigest {
  private readonly hash: Hash = createHash("sha256");
  private length = 0;

  /** The digest of the first `bytes` bytes of `file` (a path or an open descriptor). */
  static ofPrefix(file: string | number, bytes: number): RunningDigest {
    const digest = new RunningDigest();
    const fd = typeof file === "number" ? file : openSync(file, "r");
    try {
      const available = fstatSync(fd).size;
      if (available < bytes) throw new Error(`file has ${available} bytes, fewer than the ${bytes} asked for`);
      const chunk = Buffer.allocUnsafe(Math.min(1 << 20, Math.max(1, bytes)));
      for (let at = 0; at < bytes;) {
        const n = readSync(fd, chunk, 0, Math.min(chunk.length, bytes - at), at);
        if (n === 0) throw new Error(`file ended after ${at} of ${bytes} bytes`);
        digest.update(chunk.subarray(0, n));
        at += n;
      }
    } finally {
      if (typeof file !== "number") closeSync(fd);
    }
    return digest;
  }

  update(data: Uint8Array | string): void {
    const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : data;
    this.hash.update(bytes);
    this.length += bytes.length;
  }

  get bytes(): number {
    return this.length;
  }

  /** The length and checksum so far; the digest keeps running. */
  get commit(): FileCommit {
    return { bytes: this.length, sha256: this.hash.copy().digest("hex") };
  }
}
