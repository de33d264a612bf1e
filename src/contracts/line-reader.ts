// A file read line by line in fixed-size chunks, so that a file of any size is read in bounded
// memory: no line longer than `maxLineBytes` is ever held (it is counted and skipped), and the
// whole file is never one buffer or string (V8 strings end at 2^29 - 24 characters). Each chunk
// is shown to `onChunk` as it is read, so a caller hashes the bytes in the same pass.
import { closeSync, openSync, readSync } from "node:fs";

/** One line (1-based, without its "\n"), or the length of one longer than the bound. */
export type FileLine =
  { readonly line: number; readonly bytes: Buffer } | { readonly line: number; readonly tooLong: number };

export interface LineReading {
  readonly maxLineBytes: number;
  /** Bytes asked of each read; default 1 MiB. */
  readonly chunkBytes?: number;
  /** Sees every chunk, in order, before its lines are yielded. */
  readonly onChunk?: (chunk: Buffer) => void;
}

const NEWLINE = 0x0a;

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** The line's text, or null when its bytes are not UTF-8 (a damaged file, or one in another encoding): replacement characters would be read as text. */
export function lineText(bytes: Uint8Array): string | null {
  try {
    return utf8.decode(bytes);
  } catch {
    return null;
  }
}

/** The lines of `file`, the last one too when it does not end in "\n"; each line's bytes are its own. */
export function* fileLines(file: string, options: LineReading): Generator<FileLine> {
  const fd = openSync(file, "r");
  try {
    const buffer = Buffer.allocUnsafe(options.chunkBytes ?? 1 << 20);
    // The current line's pieces, copied: the buffer is read into again.
    let pieces: Buffer[] = [];
    let length = 0;
    let line = 1;
    const add = (piece: Buffer) => {
      length += piece.length;
      if (length > options.maxLineBytes) pieces = [];
      else if (piece.length > 0) pieces.push(Buffer.from(piece));
    };
    const take = (): FileLine => {
      const taken: FileLine =
        length > options.maxLineBytes
          ? { line, tooLong: length }
          : { line, bytes: pieces.length === 1 ? (pieces[0] as Buffer) : Buffer.concat(pieces, length) };
      pieces = [];
      length = 0;
      line++;
      return taken;
    };
    for (let n = readSync(fd, buffer); n > 0; n = readSync(fd, buffer)) {
      const chunk = buffer.subarray(0, n);
      options.onChunk?.(chunk);
      let start = 0;
      for (let end = chunk.indexOf(NEWLINE); end !== -1; end = chunk.indexOf(NEWLINE, start)) {
        add(chunk.subarray(start, end));
        yield take();
        start = end + 1;
      }
      add(chunk.subarray(start));
    }
    if (length > 0) yield take();
  } finally {
    closeSync(fd);
  }
}
