// What the lint stage says about the example specs (test/fixtures/examples): no errors, and exactly these notes.
import { readdirSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { check, EXAMPLES } from "./helpers.js";

const findings = (name: string) =>
  check(path.join(EXAMPLES, name)).map((d) => ({
    file: path.basename(d.file),
    line: d.range.start.line,
    severity: d.severity,
    code: d.code,
    variants: /\((variants? [^)]*)\)$/.exec(d.message)?.[1] ?? "all",
  }));

describe("the example specs", () => {
  it("are the four known files", () => {
    expect(
      readdirSync(EXAMPLES)
        .filter((f) => f.endsWith(".arl"))
        .sort(),
    ).toEqual(["agentrl-ablation.arl", "findmax.arl", "shaping.arl", "tw-max-steps.arl"]);
  });

  it("agentrl-ablation: its five AgentRL servers unchecked (one note); GRPO's self-inclusive mean and 1/|o_i|; no task norm in one arm", () => {
    expect(findings("agentrl-ablation.arl")).toEqual([
      { file: "agentrl-ablation.arl", line: 13, severity: "info", code: "env-behaviour-unchecked", variants: "all" },
      { file: "agentrl-ablation.arl", line: 35, severity: "warning", code: "self-inclusive-baseline", variants: "all" },
      { file: "agentrl-ablation.arl", line: 35, severity: "info", code: "length-biased-reduction", variants: "all" },
      {
        file: "agentrl-ablation.arl",
        line: 50,
        severity: "warning",
        code: "multitask-without-task-norm",
        variants: "variant no_task_norm",
      },
    ]);
  });

  it("findmax: GRPO at G = 4 (0.75), and the seq_mean arm's length bias", () => {
    const f = findings("findmax.arl");
    expect(f).toEqual([
      { file: "findmax.arl", line: 34, severity: "warning", code: "self-inclusive-baseline", variants: "all" },
      {
        file: "findmax.arl",
        line: 51,
        severity: "info",
        code: "length-biased-reduction",
        variants: "variant seq_mean",
      },
    ]);
    expect(check(path.join(EXAMPLES, "findmax.arl"))[0]!.message).toContain("0.75 at G = 4");
  });

  it("shaping: clean (the cost term is negative, progress is a potential, writes are blocked)", () => {
    expect(findings("shaping.arl")).toEqual([]);
  });

  it("tw-max-steps: the 1.5x arm of the sweep is below twice the optimal length", () => {
    expect(findings("tw-max-steps.arl")).toEqual([
      {
        file: "tw-max-steps.arl",
        line: 41,
        severity: "warning",
        code: "turn-budget-below-2x-optimal",
        variants: "variant max_turns=6",
      },
    ]);
  });

  it("have no errors", () => {
    for (const name of readdirSync(EXAMPLES).filter((f) => f.endsWith(".arl"))) {
      expect(
        check(path.join(EXAMPLES, name)).filter((d) => d.severity === "error"),
        name,
      ).toEqual([]);
    }
  });
});
