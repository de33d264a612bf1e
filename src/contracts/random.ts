// The project's seeded randomness, written once: every random choice must be the same for the
// same seed on every machine and Node version, which Math.random cannot give. Two generators,
// because their streams are fixed by what they already feed (plan splits and seeds, bootstrap
// intervals, the envs' tasks, the embedded trainer's weights and samples): mulberry32 for floats
// from one 32-bit seed, sfc32 for a 128-bit state. One Fisher-Yates shuffle serves both.
import { createHash } from "node:crypto";
import { at } from "./checked.js";

/** Uniform floats in [0, 1). */
export type Random = () => number;

/** mulberry32: uniform floats in [0, 1) from a 32-bit seed. */
export function mulberry32(seed: number): Random {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A uniform integer in [0, n). */
export function randomInt(random: Random, n: number): number {
  return Math.floor(random() * n);
}

/** A shuffled copy (Fisher-Yates, from the last position down). */
export function shuffled<T>(items: readonly T[], random: Random): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [at(out, j), at(out, i)];
  }
  return out;
}

/** A 32-bit seed that depends only on `seed` and the place it is used (a path of names and indices). */
export function deriveSeed(seed: number, ...path: (string | number)[]): number {
  return createHash("sha256")
    .update(JSON.stringify([seed, ...path]))
    .digest()
    .readUInt32LE(0);
}

/** The mulberry32 stream of a derived seed. */
export function derivedRandom(seed: number, ...path: (string | number)[]): Random {
  return mulberry32(deriveSeed(seed, ...path));
}

export type Sfc32State = [number, number, number, number];

/** sfc32 (Chris Doty-Humphrey's small fast counter): 32-bit outputs from a 128-bit state. */
export class Sfc32 {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  /** The generator at exactly this state (a state read from `state` continues its stream). */
  constructor(state: Readonly<Sfc32State>) {
    [this.a, this.b, this.c, this.d] = state.map((word) => word >>> 0) as Sfc32State;
  }

  /** A uniform 32-bit unsigned integer. */
  nextU32(): number {
    const t = (((this.a + this.b) >>> 0) + this.d) >>> 0;
    this.d = (this.d + 1) >>> 0;
    this.a = (this.b ^ (this.b >>> 9)) >>> 0;
    this.b = (this.c + (this.c << 3)) >>> 0;
    this.c = ((this.c << 21) | (this.c >>> 11)) >>> 0;
    this.c = (this.c + t) >>> 0;
    return t;
  }

  /** A uniform float in [0, 1) with 32 random bits. */
  next(): number {
    return this.nextU32() / 4294967296;
  }

  get state(): Sfc32State {
    return [this.a, this.b, this.c, this.d];
  }
}

/** Outputs discarded after seeding: sfc32's state needs a few rounds to mix. */
const SFC32_WARMUP = 12;

/** sfc32 seeded with four words, past its warm-up. */
export function seededSfc32(words: Readonly<Sfc32State>): Sfc32 {
  const generator = new Sfc32(words);
  for (let i = 0; i < SFC32_WARMUP; i++) generator.nextU32();
  return generator;
}

/** The first four little-endian words of a key's sha256: seed words that depend only on the key. */
export function keyWords(key: string): Sfc32State {
  const digest = createHash("sha256").update(key).digest();
  return [digest.readUInt32LE(0), digest.readUInt32LE(4), digest.readUInt32LE(8), digest.readUInt32LE(12)];
}
