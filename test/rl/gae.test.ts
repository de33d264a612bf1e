import { describe, expect, it } from "vitest";
import { gae, maskedGae } from "../../src/rl/gae.js";

describe("GAE", () => {
  it("with gamma = lambda = 1 and a terminal reward, A_t = R - V_t", () => {
    const r = gae({ rewards: [0, 0, 1], values: [0.5, 0.6, 0.7], gamma: 1, lambda: 1, end: "terminated" });
    r.advantages.forEach((a, i) => expect(a).toBeCloseTo([0.5, 0.4, 0.3][i]!, 12));
    r.returns.forEach((g) => expect(g).toBeCloseTo(1, 12));
  });

  it("a truncated episode bootstraps V(h_T) instead of 0", () => {
    const r = gae({
      rewards: [0, 0, 1],
      values: [0.5, 0.6, 0.7],
      gamma: 1,
      lambda: 1,
      end: "truncated",
      bootstrapValue: 0.8,
    });
    r.advantages.forEach((a, i) => expect(a).toBeCloseTo([1.3, 1.2, 1.1][i]!, 12));
  });

  it("lambda = 0 gives the one-step TD residual", () => {
    const r = gae({
      rewards: [0.1, -0.2],
      values: [0.5, 0.4],
      gamma: 0.9,
      lambda: 0,
      end: "truncated",
      bootstrapValue: 0.3,
    });
    expect(r.advantages[0]).toBeCloseTo(0.1 + 0.9 * 0.4 - 0.5, 12);
    expect(r.advantages[1]).toBeCloseTo(-0.2 + 0.9 * 0.3 - 0.4, 12);
  });

  it("matches the sum definition sum_l (gamma lambda)^l delta_{t+l}", () => {
    const rewards = [0, 0.5, 0, 1];
    const values = [0.2, 0.3, 0.6, 0.4];
    const [g, l] = [0.99, 0.95];
    const next = [0.3, 0.6, 0.4, 0];
    const delta = rewards.map((r, t) => r + g * next[t]! - values[t]!);
    const expected = delta.map((_, t) => delta.slice(t).reduce((s, d, j) => s + (g * l) ** j * d, 0));
    gae({ rewards, values, gamma: g, lambda: l, end: "terminated" }).advantages.forEach((a, t) =>
      expect(a).toBeCloseTo(expected[t]!, 12),
    );
  });

  it("requires a bootstrap value for a truncated episode", () => {
    expect(() => gae({ rewards: [1], values: [0], gamma: 1, lambda: 1, end: "truncated" })).toThrow(/bootstrap value/);
    expect(() => gae({ rewards: [1], values: [0, 1], gamma: 1, lambda: 1, end: "terminated" })).toThrow(
      /1 rewards but 2 values/,
    );
    expect(() => gae({ rewards: [1], values: [0], gamma: 1.5, lambda: 1, end: "terminated" })).toThrow(/gamma/);
  });

  it("maskedGae skips observation tokens: V(next) of a turn's last token is the next generated token's value", () => {
    // Tokens: gen gen obs obs gen; reward on the last generated token.
    const mask = [1, 1, 0, 0, 1];
    const rewards = [0, 0, 0, 0, 1];
    const values = [0.2, 0.4, 9, 9, 0.5];
    const r = maskedGae({ rewards, values, mask, gamma: 1, lambda: 1, end: "terminated" });
    const inner = gae({ rewards: [0, 0, 1], values: [0.2, 0.4, 0.5], gamma: 1, lambda: 1, end: "terminated" });
    expect(r.advantages).toEqual([inner.advantages[0], inner.advantages[1], 0, 0, inner.advantages[2]]);
    expect(() =>
      maskedGae({ rewards: [0, 1], values: [0, 0], mask: [1, 0], gamma: 1, lambda: 1, end: "terminated" }),
    ).toThrow(/not a generated token/);
  });
});
