import { describe, expect, it } from "vitest";
import { advantageEstimators, groupAdvantages, taskNormalize } from "../../src/rl/advantages.js";

const s3 = Math.sqrt(3);
const close = (actual: number[], expected: number[], digits = 12) => {
  expect(actual).toHaveLength(expected.length);
  actual.forEach((a, i) => expect(a).toBeCloseTo(expected[i] as number, digits));
};

describe("group advantages (docs/semantics.md §3)", () => {
  it("GRPO: (1,0,0,1) -> (1,-1,-1,1) and (1,0,0,0) -> (sqrt3, -1/sqrt3 x3), up to eps", () => {
    const [a, b] = groupAdvantages(
      [
        [1, 0, 0, 1],
        [1, 0, 0, 0],
      ],
      { baseline: "mean", normalize: "std" },
    );
    // (R - mean)/(std + 1e-6): std 0.5 and sqrt3/4.
    close(
      a!,
      [0.5, -0.5, -0.5, 0.5].map((x) => x / (0.5 + 1e-6)),
    );
    close(
      b!,
      [0.75, -0.25, -0.25, -0.25].map((x) => x / (s3 / 4 + 1e-6)),
    );
    close(b!, [s3, -1 / s3, -1 / s3, -1 / s3], 5);
  });

  it("Dr. GRPO (normalize none) is R - mean", () => {
    close(groupAdvantages([[1, 0, 0, 0]], { baseline: "mean", normalize: "none" })[0]!, [0.75, -0.25, -0.25, -0.25]);
  });

  it("RLOO subtracts the mean of the others; the self-inclusive mean shrinks it by (G-1)/G", () => {
    const loo = groupAdvantages([[1, 0, 0, 0]], { baseline: "leave_one_out", normalize: "none" })[0]!;
    close(loo, [1, -1 / 3, -1 / 3, -1 / 3]);
    const rewards = [0.3, 0.9, 0.1, 0.5, 0.2];
    const m = groupAdvantages([rewards], { baseline: "mean", normalize: "none" })[0]!;
    const l = groupAdvantages([rewards], { baseline: "leave_one_out", normalize: "none" })[0]!;
    m.forEach((x, i) => expect(x).toBeCloseTo(((rewards.length - 1) / rewards.length) * l[i]!, 12));
  });

  it("no baseline is plain REINFORCE: A = R, even for an all-equal group", () => {
    expect(
      groupAdvantages(
        [
          [1, 1, 1],
          [0, 0.5],
        ],
        { baseline: "none", normalize: "none" },
      ),
    ).toEqual([
      [1, 1, 1],
      [0, 0.5],
    ]);
  });

  it("all-equal groups and G = 1 give exact zeros with a group-relative baseline", () => {
    for (const baseline of ["mean", "leave_one_out"] as const) {
      for (const normalize of ["std", "none"] as const) {
        expect(groupAdvantages([[0.1, 0.1, 0.1], [1, 1], [0.7]], { baseline, normalize })).toEqual([
          [0, 0, 0],
          [0, 0],
          [0],
        ]);
      }
    }
  });

  it("std-normalised group advantages have mean 0 and std ~1 (mean baseline)", () => {
    const a = groupAdvantages([[3, -1, 2, 0, 5, 1]], { baseline: "mean", normalize: "std" })[0]!;
    const mu = a.reduce((x, y) => x + y, 0) / a.length;
    const sd = Math.sqrt(a.reduce((x, y) => x + (y - mu) ** 2, 0) / a.length);
    expect(mu).toBeCloseTo(0, 12);
    expect(sd).toBeCloseTo(1, 5);
  });

  it("is a registry keyed by baseline name, with clear errors", () => {
    expect(advantageEstimators.names()).toEqual(["mean", "leave_one_out", "none"]);
    expect(() => groupAdvantages([[1]], { baseline: "median" as never, normalize: "std" })).toThrow(
      /unknown advantage baseline 'median' \(known: mean, leave_one_out, none\)/,
    );
    expect(() => groupAdvantages([[]], { baseline: "mean", normalize: "std" })).toThrow(/group 0 is empty/);
    expect(() => groupAdvantages([[1, NaN]], { baseline: "mean", normalize: "std" })).toThrow(/not a finite number/);
  });
});

describe("task normalisation (AgentRL)", () => {
  it("maps each task's advantages to (A - mu)/(sigma + eps), population sigma", () => {
    const out = taskNormalize([1, 3, 10, 20, 30], ["a", "a", "b", "b", "b"]);
    // a: mu 2, sigma 1; b: mu 20, sigma sqrt(200/3).
    const sb = Math.sqrt(200 / 3);
    close(out, [-1 / (1 + 1e-6), 1 / (1 + 1e-6), -10 / (sb + 1e-6), 0, 10 / (sb + 1e-6)]);
  });

  it("leaves a one-token or all-equal task at zero", () => {
    expect(taskNormalize([0.4, 0.3, 0.3], ["solo", "flat", "flat"])).toEqual([0, 0, 0]);
  });

  it("weights count an entry as that many tokens (per-trajectory advantages over L_i tokens)", () => {
    const expanded = taskNormalize([2, 2, 2, -1], ["t", "t", "t", "t"]);
    const weighted = taskNormalize([2, -1], ["t", "t"], [3, 1]);
    expect(weighted[0]).toBeCloseTo(expanded[0]!, 12);
    expect(weighted[1]).toBeCloseTo(expanded[3]!, 12);
  });

  it("rejects mismatched lengths", () => {
    expect(() => taskNormalize([1, 2], ["a"])).toThrow(/2 advantages but 1 tasks/);
    expect(() => taskNormalize([1, 2], ["a", "b"], [1, -1])).toThrow(/non-negative/);
  });
});
