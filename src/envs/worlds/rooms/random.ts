// The rooms env's PRNG: sfc32 (Chris Doty-Humphrey's small fast counter), seeded from the sha256
// of a key string, so a task's world depends only on the key (kind, version, sizes, task id) and
// is the same on every machine and Node version. Each generated world owns its generator.
import { keyWords, seededSfc32, shuffled } from "../../../contracts/random.js";
import { at as element } from "../../../contracts/checked.js";

export interface Rng {
  /** Uniform float in [0, 1). */
  next(): number;
  /** Uniform integer in [0, n). */
  int(n: number): number;
  /** One element, uniformly. */
  pick<T>(items: readonly T[]): T;
  /** A shuffled copy (Fisher-Yates). */
  shuffle<T>(items: readonly T[]): T[];
  /** true with probability p. */
  chance(p: number): boolean;
}

export function rngFromKey(key: string): Rng {
  const [a, b, c, d] = keyWords(key);
  const generator = seededSfc32([a, b, c, d | 1]);
  const next = () => generator.next();
  const int = (n: number) => Math.floor(next() * n);
  return {
    next,
    int,
    pick: (items) => {
      if (items.length === 0) throw new Error("pick from an empty list");
      return element(items, int(items.length));
    },
    shuffle: (items) => shuffled(items, next),
    chance: (p) => next() < p,
  };
}
