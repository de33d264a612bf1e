// "Did you mean": the closest candidate by edit distance (with transpositions), if close enough.
import { at } from "../contracts/checked.js";

export function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) => Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      const previous = at(d, i - 1);
      const row = at(d, i);
      let best = Math.min(at(previous, j) + 1, at(row, j - 1) + 1, at(previous, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, at(at(d, i - 2), j - 2) + 1);
      row[j] = best;
    }
  }
  return at(at(d, a.length), b.length);
}

/** The candidate closest to `word`, when within about a third of its length (at least 1, or 2 for long words). */
export function closest(word: string, candidates: Iterable<string>): string | undefined {
  const lower = word.toLowerCase();
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const c of candidates) {
    if (c === word) continue;
    const dist = editDistance(lower, c.toLowerCase());
    if (dist < bestDistance || (dist === bestDistance && best !== undefined && c < best)) {
      best = c;
      bestDistance = dist;
    }
  }
  const limit = Math.max(1, Math.floor(word.length / 3));
  return best !== undefined && bestDistance <= limit && bestDistance < word.length ? best : undefined;
}

export function didYouMean(word: string, candidates: Iterable<string>): string | undefined {
  const c = closest(word, candidates);
  return c === undefined ? undefined : `did you mean '${c}'?`;
}
