// Seeded pseudo-random numbers for the embedded trainer (never Math.random): sfc32, a small
// fast generator with a 128-bit state that is saved in checkpoints. Weight initialisation uses
// one stream keyed by the configure seed; sampling uses one stream per prompt, keyed by the
// request's seed for that prompt, so a generation depends only on (weights, prompt, seed).
import { Sfc32, seededSfc32, type Sfc32State } from "../../contracts/random.js";

export type RngState = Sfc32State;

export class Rng {
  private readonly generator: Sfc32;

  constructor(seed: number | RngState, stream = 0) {
    if (Array.isArray(seed)) {
      this.generator = new Sfc32(seed);
      return;
    }
    // splitmix32 expands the seed (and a stream id) into the 128-bit state.
    let s = (seed >>> 0) ^ Math.imul(stream >>> 0, 0x9e3779b9);
    const next = () => {
      s = (s + 0x9e3779b9) >>> 0;
      let z = s;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.generator = seededSfc32([next(), next(), next(), next() | 1]);
  }

  nextU32(): number {
    return this.generator.nextU32();
  }

  /** Uniform in [0, 1) with 53 random bits. */
  uniform(): number {
    const hi = this.nextU32() >>> 5;
    const lo = this.nextU32() >>> 6;
    return (hi * 67108864 + lo) / 9007199254740992;
  }

  /** Standard normal (Box-Muller). */
  normal(): number {
    let u = this.uniform();
    while (u <= 0) u = this.uniform();
    const v = this.uniform();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  }

  get state(): RngState {
    return this.generator.state;
  }
}
