// The sign analysis behind non-potential-shaping.
import { describe, expect, it } from "vitest";
import type { RewardExpr } from "../../src/semantics/expressions.js";
import { ANY, isPositive, NEG, POS, signOf, ZERO } from "../../src/lint/sign.js";

const c = (value: number): RewardExpr => ({ op: "const", value });
const count: RewardExpr = { op: "signal", namespace: "episode", name: "tool_calls", type: "count", timing: "state" };
const flag: RewardExpr = { op: "signal", namespace: "episode", name: "aborted", type: "bool", timing: "outcome" };
const num: RewardExpr = { op: "signal", namespace: "state", name: "progress", type: "number", timing: "state" };
const bin = (op: "+" | "-" | "*" | "/", a: RewardExpr, b: RewardExpr): RewardExpr => ({ op, args: [a, b] });

describe("signOf", () => {
  it("reads constants, counts and flags", () => {
    expect(signOf(c(0.1))).toBe(POS);
    expect(signOf(c(-2))).toBe(NEG);
    expect(signOf(c(0))).toBe(ZERO);
    expect(signOf(count)).toBe(ZERO | POS);
    expect(signOf(flag)).toBe(ZERO | POS);
  });

  it("uses a number signal's declared range, and knows nothing without one", () => {
    expect(signOf(num)).toBe(ANY);
    expect(signOf(num, () => ({ min: 0, max: 1 }))).toBe(ZERO | POS);
    expect(signOf(num, () => ({ min: -1, max: 0 }))).toBe(NEG | ZERO);
  });

  it("follows products, negation, sums and differences", () => {
    expect(isPositive(signOf(bin("*", c(0.1), count)))).toBe(true);
    expect(isPositive(signOf(bin("*", c(-0.02), count)))).toBe(false);
    expect(isPositive(signOf({ op: "neg", args: [bin("*", c(0.02), count)] }))).toBe(false);
    expect(isPositive(signOf({ op: "neg", args: [bin("*", c(-0.02), count)] }))).toBe(true);
    expect(isPositive(signOf(bin("+", c(1), count)))).toBe(true);
    expect(signOf(bin("-", c(1), count))).toBe(ANY);
    expect(signOf(bin("*", count, count))).toBe(ZERO | POS);
    expect(isPositive(signOf(bin("/", count, c(2))))).toBe(true);
  });

  it("handles when, min, max, abs and clip", () => {
    expect(signOf({ op: "when", args: [c(0.5), flag] })).toBe(ZERO | POS);
    expect(signOf({ op: "when", args: [c(-0.2), flag] })).toBe(NEG | ZERO);
    expect(signOf({ op: "min", args: [count, c(3)] })).toBe(ZERO | POS);
    expect(signOf({ op: "max", args: [num, c(1)] })).toBe(POS);
    expect(signOf({ op: "abs", args: [num] })).toBe(ZERO | POS);
    expect(signOf({ op: "clip", args: [num, c(0), c(1)] })).toBe(ZERO | POS);
    expect(signOf({ op: "clip", args: [num, c(-1), c(1)] })).toBe(ANY);
  });

  it("calls a never-negative, not-always-zero set positive", () => {
    expect(isPositive(POS)).toBe(true);
    expect(isPositive(ZERO | POS)).toBe(true);
    expect(isPositive(ZERO)).toBe(false);
    expect(isPositive(ANY)).toBe(false);
  });
});
