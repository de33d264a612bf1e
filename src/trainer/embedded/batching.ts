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

/** Consecutive chunks of indices whose padded size (max length x count) stays within `budget`. */
export function chunksByTokens(indices: readonly number[], length: (i: number) => number, budget: number): number[][] {
  const out: number[][] = [];
  let cur: number[] = [];
  let maxLen = 0;
  for (const i of indices) {
    const L = Math.max(1, length(i));
    if (cur.length > 0 && Math.max(maxLen, L) * (cur.length + 1) > budget) {
      out.push(cur);
      cur = [];
      maxLen = 0;
    }
    cur.push(i);
    maxLen = Math.max(maxLen, L);
  }
  if (cur.length > 0) out.push(cur);
  return out;
}

/** The chunks of all of `seqs`, in order. */
export function chunksOf(seqs: readonly ArrayLike<number>[], budget: number): number[][] {
  return chunksByTokens(
    seqs.map((_, i) => i),
    (i) => at(seqs, i).length,
    budget,
  );
}
