// Seeded pseudo-random numbers for the embedded trainer (never Math.random): sfc32, a small
// fast generator with a 128-bit state that is saved in checkpoints. Weight initialisation uses
// one stream keyed by the configure seed; sampling uses one stream per prompt, keyed by the
// request's seed for that prompt, so a generation depends only on (weights, prompt, seed).

export type RngState = [number, number, number, number];

export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number | RngState, stream = 0) {
    if (Array.isArray(seed)) {
      [this.a, this.b, this.c, this.d] = seed.map((x) => x >>> 0) as RngState;
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
    this.a = next();
    this.b = next();
    this.c = next();
    this.d = next() | 1;
    for (let i = 0; i < 12; i++) this.nextU32();
  }

  nextU32(): number {
    const t = (((this.a + this.b) >>> 0) + this.d) >>> 0;
    this.d = (this.d + 1) >>> 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) >>> 0;
    this.c = ((this.c << 21) | (this.c >>> 11)) >>> 0;
    this.c = (this.c + t) >>> 0;
    return t;
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
    return [this.a, this.b, this.c, this.d];
  }
}
