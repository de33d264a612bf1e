// The token buffer (TITO): every trajectory exactly as the policy saw and produced it, appended
// to one file as protocol frames. A crash can leave at most a partial last frame, which the
// reader reports and drops; resume truncates the file back to the checkpoint's offset.
import { closeSync, existsSync, fstatSync, fsyncSync, ftruncateSync, openSync, readSync, writeSync } from "node:fs";
import { encodeFrame, FrameDecoder } from "../trainer/protocol/framing.js";

/** Role of each token: what produced it and whether it can be a training target. */
export const Role = { system: 0, prompt: 1, generated: 2, observation: 3, padding: 4 } as const;
export type RoleName = keyof typeof Role;

export type EndReason = "finished" | "truncated" | "aborted" | "env_error";

export interface ToolCallRecord {
  readonly turn: number;
  readonly name: string;
  readonly arguments: unknown;
  /** Passed argument validation and was executed. */
  readonly valid: boolean;
  readonly blocked: boolean;
  readonly result: string;
  readonly error?: string;
}

export interface TrajectoryRecord {
  readonly iteration: number;
  readonly env: string;
  readonly task: number;
  readonly group: number;
  readonly sample: number;
  readonly ids: Int32Array;
  readonly roles: Uint8Array;
  /** Policy version that generated each token; -1 where the token was not generated. */
  readonly versions: Int32Array;
  /** Log-probability under the sampling distribution actually used; 0 where not generated. */
  readonly logprobs: Float32Array;
  /** Which model generated each turn: "policy" or a cross-policy pool entry. */
  readonly generators: readonly string[];
  readonly rewards: Readonly<Record<string, number>>;
  readonly reward: number;
  readonly end: EndReason;
  readonly turns: number;
  readonly toolCalls: readonly ToolCallRecord[];
}

export class TokenBuffer {
  private fd: number;

  /** Opens (creating) the buffer for appending; `truncateTo` drops what a crash left after it. */
  constructor(
    readonly path: string,
    truncateTo?: number,
  ) {
    this.fd = openSync(path, existsSync(path) ? "r+" : "w+");
    const size = fstatSync(this.fd).size;
    if (truncateTo !== undefined && truncateTo < size) ftruncateSync(this.fd, truncateTo);
  }

  /** Bytes written so far: a checkpoint records it so that resume can cut back to it. */
  get offset(): number {
    return fstatSync(this.fd).size;
  }

  append(records: readonly TrajectoryRecord[]): void {
    let position = this.offset;
    for (const r of records) {
      const frame = encodeFrame({ ...r, ids: r.ids, roles: r.roles, versions: r.versions, logprobs: r.logprobs });
      position += writeSync(this.fd, frame, 0, frame.length, position);
    }
  }

  /** Makes what was appended durable (called at the end of each iteration). */
  sync(): void {
    fsyncSync(this.fd);
  }

  close(): void {
    closeSync(this.fd);
  }
}

export interface BufferContents {
  readonly records: TrajectoryRecord[];
  /** Bytes of a partial trailing frame left by a crash (not returned as a record). */
  readonly partialBytes: number;
}

/** Reads every complete record of a buffer file. */
export function readBuffer(path: string): BufferContents {
  const fd = openSync(path, "r");
  const decoder = new FrameDecoder();
  const records: TrajectoryRecord[] = [];
  const chunk = Buffer.allocUnsafe(1 << 20);
  let consumed = 0;
  try {
    for (;;) {
      const n = readSync(fd, chunk, 0, chunk.length, null);
      if (n === 0) break;
      consumed += n;
      for (const m of decoder.push(Buffer.from(chunk.subarray(0, n)))) records.push(m as TrajectoryRecord);
    }
  } finally {
    closeSync(fd);
  }
  return { records, partialBytes: decoder.pendingBytes };
}
