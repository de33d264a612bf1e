// How a batch of sequences meets the model: ragged rows as views, the time-major padded layout
// of the GRU, and chunks of sequences cut to a padded-token budget (a memory bound only: every
// chunk is computed the same way, so the cut never changes a result).
import { row, rowCount, type Ragged } from "../../contracts/trainer-protocol.js";
import { PAD } from "./tokenizer.js";
import { at } from "../../contracts/checked.js";

/** Sequences of a ragged batch as views. */
export function rows<T extends Int32Array | Float32Array | Uint8Array>(r: Ragged<T>): T[] {
  return Array.from({ length: rowCount(r) }, (_, i) => row(r, i));
}

/** Time-major padded ids [T*B] of some sequences. */
export function timeMajor(seqs: readonly ArrayLike<number>[]): { ids: Int32Array; T: number; B: number } {
  const B = seqs.length;
  const T = Math.max(1, ...seqs.map((s) => s.length));
  const ids = new Int32Array(T * B).fill(PAD);
  seqs.forEach((s, i) => {
    for (let t = 0; t < s.length; t++) ids[t * B + i] = at(s, t);
  });
  return { ids, T, B };
}

/**
 * How much of a batch one chunk may hold (a memory bound only). `tokens`: padded tokens, the
 * GRU's [T, B]. `scores`: the read-out's attention scores, B x Tq x T per head (Tq the most
 * queries of one sequence): they grow with a sequence's length times its targets, so a batch
 * of long generated sequences must be cut finer than its token count says. `rows`: the
 * read-out's rows, B x Tq, each a row of logits over the whole vocabulary: many short
 * sequences over a large vocabulary (200,000 records of a few words, each word a token) are
 * few tokens and scores but [B x Tq, V] logits past the heap.
 */
export interface ChunkBudget {
  readonly tokens: number;
  readonly scores: number;
  readonly rows: number;
}

/** Consecutive chunks of indices whose padded size (max length x count), read-out size (max length x max queries x count) and read-out rows (max queries x count) stay within `budget`; a sequence above it alone is a chunk. */
export function chunksByCost(
  indices: readonly number[],
  length: (i: number) => number,
  queries: (i: number) => number,
  budget: ChunkBudget,
): number[][] {
  const out: number[][] = [];
  let cur: number[] = [];
  let maxLen = 0;
  let maxQueries = 0;
  for (const i of indices) {
    const L = Math.max(1, length(i));
    const Q = Math.max(1, queries(i));
    const len = Math.max(maxLen, L);
    const q = Math.max(maxQueries, Q);
    const count = cur.length + 1;
    if (cur.length > 0 && (len * count > budget.tokens || len * q * count > budget.scores || q * count > budget.rows)) {
      out.push(cur);
      cur = [];
      maxLen = 0;
      maxQueries = 0;
    }
    cur.push(i);
    maxLen = Math.max(maxLen, L);
    maxQueries = Math.max(maxQueries, Q);
  }
  if (cur.length > 0) out.push(cur);
  return out;
}

/** The chunks of all of `seqs`, in order; `queries(i)`: the read-out positions sequence i asks for (none: no read-out). */
export function chunksOf(
  seqs: readonly ArrayLike<number>[],
  budget: ChunkBudget,
  queries: (i: number) => number = () => 0,
): number[][] {
  return chunksByCost(
    seqs.map((_, i) => i),
    (i) => at(seqs, i).length,
    queries,
    budget,
  );
}
