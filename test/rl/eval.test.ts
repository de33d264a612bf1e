import { describe, expect, it } from "vitest";
import { mulberry32, randomInt } from "../../src/contracts/random.js";
import {
  binomialStandardError,
  bootstrapMeanInterval,
  meanPassAtK,
  normalHalfWidth95,
  pairedDifferences,
  passAtK,
} from "../../src/rl/eval.js";

function comb(n: number, k: number): number {
  let r = 1;
  for (let i = 1; i <= k; i++) r = (r * (n - k + i)) / i;
  return r;
}

describe("pass@k (Chen et al. 2021)", () => {
  it("pass@3 with n=10, c=2 is 1 - 56/120 ~ 0.533, not the plug-in 0.488", () => {
    expect(passAtK(10, 2, 3)).toBeCloseTo(1 - 56 / 120, 14);
    expect(passAtK(10, 2, 3)).not.toBeCloseTo(1 - (1 - 2 / 10) ** 3, 2);
    expect(1 - (1 - 2 / 10) ** 3).toBeCloseTo(0.488, 12);
  });

  it("is 1 when n - c < k, c/n for k = 1, 0 with no correct sample", () => {
    expect(passAtK(5, 3, 3)).toBe(1);
    expect(passAtK(5, 5, 1)).toBe(1);
    expect(passAtK(7, 3, 1)).toBeCloseTo(3 / 7, 14);
    expect(passAtK(9, 0, 4)).toBe(0);
  });

  it("agrees with the binomial ratio where the binomials are small", () => {
    for (const [n, c, k] of [
      [20, 7, 5],
      [12, 1, 6],
      [30, 10, 10],
    ] as const) {
      expect(passAtK(n, c, k)).toBeCloseTo(1 - comb(n - c, k) / comb(n, k), 12);
    }
  });

  it("stays finite and in [0, 1] where the binomials overflow", () => {
    const v = passAtK(2000, 3, 1000);
    expect(v).toBeGreaterThan(0.8);
    expect(v).toBeLessThan(1);
  });

  it("averages the per-task estimates", () => {
    expect(
      meanPassAtK(
        [
          { n: 10, c: 2 },
          { n: 10, c: 10 },
          { n: 10, c: 0 },
        ],
        3,
      ),
    ).toBeCloseTo((1 - 56 / 120 + 1 + 0) / 3, 14);
  });

  it("rejects impossible counts", () => {
    expect(() => passAtK(5, 6, 1)).toThrow(/c <= n/);
    expect(() => passAtK(5, 1, 6)).toThrow(/k <= n/);
    expect(() => passAtK(5, 1.5, 1)).toThrow(/integers/);
  });
});

describe("uncertainty with the task as the unit", () => {
  it("binomial SE of 200 tasks at 50% is 0.035; the 95% half-width 6.9 points", () => {
    const se = binomialStandardError(0.5, 200);
    expect(se).toBeCloseTo(Math.sqrt(0.25 / 200), 14);
    expect(se).toBeCloseTo(0.035, 3);
    expect(normalHalfWidth95(se) * 100).toBeCloseTo(6.9, 1);
  });

  it("the bootstrap over tasks is deterministic given the seed and close to the normal interval", () => {
    const scores = Array.from({ length: 200 }, (_, i) => (i % 2 === 0 ? 1 : 0));
    const a = bootstrapMeanInterval(scores, { seed: 42, resamples: 4000 });
    const b = bootstrapMeanInterval(scores, { seed: 42, resamples: 4000 });
    const c = bootstrapMeanInterval(scores, { seed: 43, resamples: 4000 });
    expect(a).toEqual(b);
    expect(c).not.toEqual(a);
    expect(a.estimate).toBe(0.5);
    expect(a.low).toBeLessThan(0.5);
    expect(a.high).toBeGreaterThan(0.5);
    expect((a.high - a.low) / 2).toBeCloseTo(0.069, 1);
  });

  it("a constant score has a zero-width interval", () => {
    const r = bootstrapMeanInterval([0.7, 0.7, 0.7], { seed: 1, resamples: 100 });
    for (const v of [r.estimate, r.low, r.high]) expect(v).toBeCloseTo(0.7, 14);
    expect(r.low).toBe(r.high);
  });

  it("paired comparison analyses per-task differences", () => {
    const a = [0.2, 0.5, 0.9, 0.4];
    const b = [0.3, 0.6, 0.9, 0.6];
    const r = pairedDifferences(a, b, { seed: 3, resamples: 1000 });
    r.differences.forEach((d, i) => expect(d).toBeCloseTo([0.1, 0.1, 0, 0.2][i]!, 12));
    expect(r.meanDifference).toBeCloseTo(0.1, 12);
    // sample sd of (0.1, 0.1, 0, 0.2) = sqrt(0.02/3); SE = that / 2
    expect(r.standardError).toBeCloseTo(Math.sqrt(0.02 / 3) / 2, 12);
    expect(r.interval.low).toBeGreaterThanOrEqual(0);
    expect(r.interval.high).toBeLessThanOrEqual(0.2);
    expect(() => pairedDifferences([1], [1, 2], { seed: 0 })).toThrow(/same tasks/);
  });
});

describe("seeded PRNG", () => {
  it("is reproducible, in [0, 1), and roughly uniform", () => {
    const r1 = mulberry32(2024);
    const r2 = mulberry32(2024);
    const xs = Array.from({ length: 10000 }, () => r1());
    expect(Array.from({ length: 10000 }, () => r2())).toEqual(xs);
    expect(Math.min(...xs)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...xs)).toBeLessThan(1);
    expect(xs.reduce((s, x) => s + x, 0) / xs.length).toBeCloseTo(0.5, 1);
    const counts = [0, 0, 0];
    const r3 = mulberry32(1);
    for (let i = 0; i < 3000; i++) counts[randomInt(r3, 3)]!++;
    for (const c of counts) expect(c).toBeGreaterThan(900);
  });
});
