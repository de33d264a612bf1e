// "Did you mean": the closest candidate by edit distance (with transpositions), if close enough.
// The search is bounded (a written value may be megabytes long): a word longer than
// MAX_SUGGESTED_LENGTH gets no suggestion, a candidate whose length differs by more than the
// allowed distance is skipped, and the distance itself stops past that bound.
import { at } from "./checked.js";

/** Longer words get no suggestion: nobody misspells a name this long, and a distance costs length x length. */
export const MAX_SUGGESTED_LENGTH = 128;

/**
 * The edit distance between `a` and `b` (insertions, deletions, substitutions and adjacent
 * transpositions) when it is at most `max`, else `max + 1`. Only cells within `max` of the
 * diagonal are computed, and the search stops at the first row that is all over `max`.
 */
export function editDistance(a: string, b: string, max = Number.POSITIVE_INFINITY): number {
  if (a.length > b.length) [a, b] = [b, a];
  const n = a.length;
  const m = b.length;
  // The distance is at least the length difference and at most the longer length.
  const cap = Math.min(max, m);
  const over = cap + 1;
  if (m - n > cap) return over;
  let before = new Int32Array(m + 1).fill(over); // row i - 2 (for transpositions)
  let previous = new Int32Array(m + 1).fill(over); // row i - 1
  let row = new Int32Array(m + 1).fill(over);
  for (let j = 0; j <= cap; j++) previous[j] = j;
  for (let i = 1; i <= n; i++) {
    const lo = Math.max(1, i - cap);
    const hi = Math.min(m, i + cap);
    // Cells outside the band are over the bound; the rows are reused, so reset what is read.
    row.fill(over, lo - 1, Math.min(m, hi + 1) + 1);
    if (lo === 1) row[0] = Math.min(i, over);
    let rowMin = lo === 1 ? at(row, 0) : over;
    for (let j = lo; j <= hi; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(at(previous, j) + 1, at(row, j - 1) + 1, at(previous, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        best = Math.min(best, at(before, j - 2) + 1);
      const cell = Math.min(best, over);
      row[j] = cell;
      if (cell < rowMin) rowMin = cell;
    }
    // A row's minimum never decreases further down: once all of it is over the bound, so is the end.
    if (rowMin > cap) return over;
    [before, previous, row] = [previous, row, before];
  }
  return Math.min(at(previous, m), over);
}

/** The candidate closest to `word`, when within about a third of its length (at least 1, or 2 for long words). */
export function closest(word: string, candidates: Iterable<string>): string | undefined {
  if (word.length > MAX_SUGGESTED_LENGTH) return undefined;
  const lower = word.toLowerCase();
  // A suggestion is within a third of the word's length, and never a whole rewrite of it.
  const limit = Math.min(Math.max(1, Math.floor(word.length / 3)), word.length - 1);
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const c of candidates) {
    if (c === word || Math.abs(c.length - word.length) > limit) continue;
    const dist = editDistance(lower, c.toLowerCase(), Math.min(limit, bestDistance));
    if (dist > limit) continue;
    if (dist < bestDistance || (dist === bestDistance && best !== undefined && c < best)) {
      best = c;
      bestDistance = dist;
    }
  }
  return best;
}

export function didYouMean(word: string, candidates: Iterable<string>): string | undefined {
  const c = closest(word, candidates);
  return c === undefined ? undefined : `did you mean '${c}'?`;
}
