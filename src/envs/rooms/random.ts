// The rooms env's PRNG: sfc32 (Chris Doty-Humphrey's small fast counter), seeded from the sha256
// of a key string, so a task's world depends only on the key (kind, version, sizes, task id) and
// is the same on every machine and Node version. Each generated world owns its generator.
import { createHash } from "node:crypto";
import { at as element } from "../../contracts/checked.js";

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
  const digest = createHash("sha256").update(key).digest();
  let a = digest.readUInt32LE(0);
  let b = digest.readUInt32LE(4);
  let c = digest.readUInt32LE(8);
  let d = digest.readUInt32LE(12) | 1;
  const u32 = (): number => {
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return t >>> 0;
  };
  // Discard the first outputs: sfc32's state needs a few rounds to mix.
  for (let i = 0; i < 12; i++) u32();
  const next = () => u32() / 4294967296;
  const int = (n: number) => Math.floor(next() * n);
  return {
    next,
    int,
    pick: (items) => {
      if (items.length === 0) throw new Error("pick from an empty list");
      return element(items, int(items.length));
    },
    shuffle: (items) => {
      const out = [...items];
      for (let i = out.length - 1; i > 0; i--) {
        const j = int(i + 1);
        [out[i], out[j]] = [element(out, j), element(out, i)];
      }
      return out;
    },
    chance: (p) => next() < p,
  };
}
