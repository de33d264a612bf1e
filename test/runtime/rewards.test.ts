import { describe, expect, it } from "vitest";
import type { PlanExpr } from "../../src/plan/schema.js";
import {
  constraintBlocks,
  episodeRewards,
  evaluate,
  RewardEvaluationError,
  type SignalSource,
} from "../../src/episode/rewards.js";

function source(
  env: Record<string, number | boolean>,
  episode: Record<string, number | boolean> = {},
  tool: Record<string, string> = {},
): SignalSource {
  return {
    env: (n) => env[n],
    namedEnv: (e, n) => (e === "quest" ? env[n] : undefined),
    episode: (n) => episode[n],
    tool: (n) => tool[n],
  };
}

const sig = (
  name: string,
  namespace: "outcome" | "state" | "episode" | "tool" = "state",
  type: "bool" | "number" | "count" | "string" = "number",
): PlanExpr => ({
  op: "signal",
  namespace,
  name,
  type,
  timing: namespace === "outcome" ? "outcome" : "state",
});
const c = (value: number): PlanExpr => ({ op: "const", value });

describe("reward expressions", () => {
  it("min and max of more arguments than a spread can pass (200,000) fold without a RangeError", () => {
    const args = Array.from({ length: 200_000 }, (_, i) => c(i % 1000));
    expect(evaluate({ op: "min", args }, source({}))).toBe(0);
    expect(evaluate({ op: "max", args }, source({}))).toBe(999);
  });

  it("treats booleans as 0/1 in arithmetic and `when` as the value or 0", () => {
    const s = source({ tests_passed: true }, { aborted: true });
    expect(evaluate({ op: "*", args: [c(1), sig("tests_passed", "outcome", "bool")] }, s)).toBe(1);
    expect(evaluate({ op: "when", args: [c(-0.2), sig("aborted", "episode", "bool")] }, s)).toBe(-0.2);
    expect(
      evaluate({ op: "when", args: [c(-0.2), sig("aborted", "episode", "bool")] }, source({}, { aborted: false })),
    ).toBe(0);
  });

  it('compares strings for constraints: tool.name == "execute"', () => {
    const cond: PlanExpr = { op: "==", args: [sig("name", "tool", "string"), { op: "const", value: "execute" }] };
    expect(evaluate(cond, source({}, {}, { name: "execute" }))).toBe(true);
    expect(evaluate(cond, source({}, {}, { name: "query" }))).toBe(false);
  });

  it("tests strings: contains, starts_with, matches", () => {
    const path = sig("args.path", "tool", "string");
    const str = (value: string): PlanExpr => ({ op: "const", value });
    const call = source({}, {}, { "args.path": "/etc/passwd" });
    expect(evaluate({ op: "contains", args: [path, str("passwd")] }, call)).toBe(true);
    expect(evaluate({ op: "contains", args: [path, str("shadow")] }, call)).toBe(false);
    expect(evaluate({ op: "starts_with", args: [path, str("/etc/")] }, call)).toBe(true);
    expect(evaluate({ op: "starts_with", args: [path, str("etc")] }, call)).toBe(false);
    expect(evaluate({ op: "matches", args: [path, str("^/(etc|root)/")] }, call)).toBe(true);
    expect(evaluate({ op: "matches", args: [path, str("^/tmp/")] }, call)).toBe(false);
    expect(() => evaluate({ op: "contains", args: [c(1), str("1")] }, call)).toThrow(RewardEvaluationError);
  });

  it("a constraint over an argument the call does not carry does not apply to that call", () => {
    const cond: PlanExpr = {
      op: "starts_with",
      args: [sig("args.path", "tool", "string"), { op: "const", value: "/etc" }],
    };
    expect(constraintBlocks(cond, source({}, {}, { name: "list" }))).toBe(false);
    expect(constraintBlocks(cond, source({}, {}, { name: "write", "args.path": "/etc/x" }))).toBe(true);
    // Other missing signals are still errors: the env broke its declaration.
    expect(() => constraintBlocks(sig("attempted", "state", "bool"), source({}))).toThrow(RewardEvaluationError);
  });

  it("refuses a signal the env did not report and a division by zero", () => {
    expect(() => evaluate(sig("missing"), source({}))).toThrow(RewardEvaluationError);
    expect(() => evaluate({ op: "/", args: [c(1), c(0)] }, source({}))).toThrow(/division by zero/);
  });
});

describe("episode rewards", () => {
  const progress = { kind: "potential" as const, expr: sig("progress") };
  const success = { kind: "plain" as const, expr: sig("success", "outcome", "bool") };
  const states = [0, 0.25, 0.75, 1].map((p) => source({ progress: p, success: true }));

  it("potential shaping telescopes to -Phi(h_0) on a terminated episode (Phi(terminal) = 0)", () => {
    const r = episodeRewards(
      { progress },
      [source({ progress: 0.1 }), source({ progress: 0.4 }), source({ progress: 0.9 })],
      source({}),
      true,
      1,
    );
    expect(r.terms.progress).toBeCloseTo(-0.1, 12);
    expect(r.perTurn).toEqual([0.30000000000000004, -0.4]);
  });

  it("keeps the last state's potential on a truncated episode", () => {
    const r = episodeRewards(
      { progress },
      [source({ progress: 0.1 }), source({ progress: 0.4 }), source({ progress: 0.9 })],
      source({}),
      false,
      1,
    );
    expect(r.terms.progress).toBeCloseTo(0.8, 12);
  });

  it("places plain terms at the end and sums all terms", () => {
    const r = episodeRewards({ success, progress }, states, source({ success: true }), true, 1);
    expect(r.terms.success).toBe(1);
    expect(r.terms.progress).toBeCloseTo(0 - 0, 12); // telescopes to -Phi(h_0) = 0
    expect(r.perTurn.length).toBe(3);
    expect(r.perTurn[2]).toBeCloseTo(1 + (0 - 0.75), 12);
    expect(r.total).toBeCloseTo(1, 12);
  });

  it("discounts the next potential by gamma", () => {
    const r = episodeRewards(
      { progress },
      [source({ progress: 0.5 }), source({ progress: 1 })],
      source({}),
      false,
      0.9,
    );
    expect(r.terms.progress).toBeCloseTo(0.9 * 1 - 0.5, 12);
  });
});
