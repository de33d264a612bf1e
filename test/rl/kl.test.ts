import { describe, expect, it } from "vitest";
import { klEstimators, klPerToken } from "../../src/rl/kl.js";

describe("KL estimators (log_r = logp_ref - logp)", () => {
  it("k1 = -log_r, k2 = log_r^2 / 2, k3 = e^log_r - 1 - log_r", () => {
    // log_r = -0.2 - (-0.5) = 0.3
    expect(klPerToken([-0.5], [-0.2], "k1")[0]).toBeCloseTo(-0.3, 12);
    expect(klPerToken([-0.5], [-0.2], "k2")[0]).toBeCloseTo(0.045, 12);
    expect(klPerToken([-0.5], [-0.2], "k3")[0]).toBeCloseTo(Math.exp(0.3) - 1.3, 12);
  });

  it("all vanish when the policies agree; k2 and k3 are never negative", () => {
    for (const e of ["k1", "k2", "k3"] as const)
      expect(klPerToken([-1, -2], [-1, -2], e).map(Math.abs)).toEqual([0, 0]);
    for (const x of [-5, -0.3, 0.01, 2]) {
      expect(klEstimators.get("k2")(x)).toBeGreaterThanOrEqual(0);
      expect(klEstimators.get("k3")(x)).toBeGreaterThanOrEqual(0);
    }
  });

  it("k3 keeps relative precision for tiny log ratios (expm1)", () => {
    const x = 1e-9;
    expect(klEstimators.get("k3")(x) / ((x * x) / 2)).toBeCloseTo(1, 6);
  });

  it("rejects unknown estimators and mismatched lengths", () => {
    expect(() => klPerToken([0], [0], "k4" as never)).toThrow(/unknown KL estimator 'k4'/);
    expect(() => klPerToken([0, 1], [0], "k1")).toThrow(/2 log-probs but 1/);
  });
});
