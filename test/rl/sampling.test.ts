import { describe, expect, it } from "vitest";
import {
  expectation,
  expectedRolloutsPerMixedGroup,
  importanceWeight,
  importanceWeightedExpectation,
  mixedGroupProbability,
} from "../../src/rl/sampling.js";

describe("P(mixed group) = 1 - p^G - (1-p)^G", () => {
  it("0.875 at p=0.5 G=4; ~3.94% at p=0.01 G=4; ~14.85% at p=0.01 G=16", () => {
    expect(mixedGroupProbability(0.5, 4)).toBe(0.875);
    expect(mixedGroupProbability(0.01, 4)).toBeCloseTo(0.0394, 4);
    expect(mixedGroupProbability(0.01, 16)).toBeCloseTo(0.1485, 4);
  });

  it("is 0 for certain outcomes and for G = 1", () => {
    expect(mixedGroupProbability(0, 8)).toBe(0);
    expect(mixedGroupProbability(1, 8)).toBe(0);
    expect(mixedGroupProbability(0.3, 1)).toBeCloseTo(0, 15);
    expect(expectedRolloutsPerMixedGroup(0.5, 4)).toBeCloseTo(4 / 0.875, 12);
    expect(expectedRolloutsPerMixedGroup(1, 4)).toBe(Infinity);
  });
});

describe("importance weights", () => {
  // mu(A) = 0.2, pi(A) = 0.6; q_A = 0.75, q_B = 0.35.
  const actions = [
    { mu: 0.2, pi: 0.6, value: 0.75 },
    { mu: 0.8, pi: 0.4, value: 0.35 },
  ];

  it("weights 3 and 0.5; the reweighted expectation under mu is 0.59, as under pi", () => {
    expect(importanceWeight(0.6, 0.2)).toBeCloseTo(3, 14);
    expect(importanceWeight(0.4, 0.8)).toBe(0.5);
    expect(importanceWeightedExpectation(actions)).toBeCloseTo(0.59, 14);
    expect(expectation(actions)).toBeCloseTo(0.59, 14);
  });

  it("refuses actions outside the behaviour policy's support", () => {
    expect(() => importanceWeight(0.1, 0)).toThrow(/support/);
    expect(importanceWeight(0, 0)).toBe(0);
  });
});
