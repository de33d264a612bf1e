// Every random choice of a run is a pure function of the plan's seed and where it is made
// (iteration, group, sample, turn), so a resumed run makes the same choices as one that never
// stopped, whatever order episodes finish in.
import { createHash } from "node:crypto";
import { mulberry32, type Random } from "../rl/random.js";

export function deriveSeed(seed: number, ...path: (string | number)[]): number {
  return createHash("sha256").update(JSON.stringify([seed, ...path])).digest().readUInt32LE(0);
}

export function derivedRandom(seed: number, ...path: (string | number)[]): Random {
  return mulberry32(deriveSeed(seed, ...path));
}

/** Fisher–Yates with a seeded generator. */
export function shuffled<T>(items: readonly T[], random: Random): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}
