// The lint stage's framework: where findings are shown (written value, enclosing key, the entry
// file's `extends` clause for inherited values, the experiment name), severities chosen per
// finding, and how findings of several variants are merged and named.
import path from "node:path";
import { describe, expect, it } from "vitest";
import { STDLIB_ROOT } from "../../src/contracts/paths.js";
import type { Diagnostic } from "../../src/diagnostics/diagnostic.js";
import { brief, checkProject, experiment } from "./helpers.js";

const only = (ds: readonly Diagnostic[], code: string) => ds.filter((d) => d.code === code);

describe("locating findings", () => {
  it("points at the value the user wrote", () => {
    const { diagnostics } = checkProject({
      "main.arl": experiment("  mask {\n    loss: all\n  }\n  algorithm extends algo.rloo {}"),
    });
    expect(brief(diagnostics)).toEqual([{ code: "observation-in-loss", severity: "error", line: 9 }]);
    expect(diagnostics[0]!.range.start.column).toBe(11);
    expect(diagnostics[0]!.related).toBeUndefined();
  });

  it("points a value inherited from the stdlib at the extends clause that brought it in, with a note", () => {
    const { dir, diagnostics } = checkProject({
      "main.arl": experiment("  algorithm extends algo.grpo {\n    group_size: 4\n    reduction: token_mean\n  }"),
    });
    const [d] = only(diagnostics, "self-inclusive-baseline");
    expect(d).toBeDefined();
    expect(d!.file).toBe(path.join(dir, "main.arl"));
    expect(d!.range.start).toMatchObject({ line: 8, column: 21 });
    expect(d!.range.end.column - d!.range.start.column).toBe("algo.grpo".length);
    expect(d!.related).toEqual([
      expect.objectContaining({
        file: path.join(STDLIB_ROOT, "std", "algorithms.arl"),
        message: expect.stringContaining("'algorithm.advantage.baseline' is set here (inherited through 'algo.grpo')"),
      }),
    ]);
  });

  it("points a default at the nearest enclosing key the user wrote", () => {
    const { diagnostics } = checkProject({
      "main.arl": experiment(
        "  algorithm extends algo.rloo {\n    kl {\n      reference: none\n    }\n    dynamic_sampling {}\n  }",
      ),
    });
    const [d] = only(diagnostics, "dynamic-sampling-unbounded");
    expect(d!.range.start).toMatchObject({ line: 12, column: 5 });
    expect(d!.related).toBeUndefined();
  });

  it("locates dotted top-level paths at their value", () => {
    const { diagnostics } = checkProject({
      "main.arl":
        'import "std/envs/findmax" as findmax\nexperiment bare {\n  policy { model: "builtin:tiny", sampling { top_p: 0.9 } }\n  env code extends findmax.task {}\n  reward { success: outcome.tests_passed }\n  mask.keep_sampling_mask: false\n  rollout.async: {}\n}\n',
    });
    expect(diagnostics.map((d) => [d.code, d.range.start.line, d.range.start.column])).toEqual([
      ["top-p-without-keep-mask", 6, 28],
      ["unbounded-policy-lag", 7, 18],
    ]);
  });

  it("falls back to the experiment's name when nothing on the path was written", () => {
    const { diagnostics } = checkProject({
      "main.arl":
        'import "std/envs/findmax" as findmax\nexperiment bare {\n  policy { model: "builtin:tiny" }\n  env code extends findmax.task { optimal_steps: 9 }\n  reward { success: outcome.tests_passed }\n}\n',
    });
    const [d] = only(diagnostics, "turn-budget-below-2x-optimal");
    expect(d!.range.start).toMatchObject({ line: 2, column: 12 });
    expect(d!.message).toContain("harness.max_turns is 10");
  });

  it("shows a value inherited from a base experiment in another file on the entry's extends clause", () => {
    const base = experiment("  algorithm extends algo.rloo {\n    group_size: 1\n  }", { name: "base" });
    const { dir, diagnostics } = checkProject({
      "lib/base.arl": base,
      "main.arl": 'import "./lib/base" as b\n\nexperiment derived extends b.base {\n  seed: 3\n}\n',
    });
    expect(brief(diagnostics)).toEqual([{ code: "group-size-one", severity: "error", line: 3 }]);
    const [d] = diagnostics;
    expect(d!.file).toBe(path.join(dir, "main.arl"));
    expect(d!.range.start.column).toBe(28);
    expect(d!.related?.[0]).toMatchObject({ file: path.join(dir, "lib", "base.arl"), range: { start: { line: 9 } } });
  });

  it("keeps findings of a base experiment in the same file on the base's own lines, once", () => {
    const text =
      experiment("  algorithm extends algo.rloo {\n    group_size: 1\n  }", { name: "base" }) +
      "\nexperiment derived extends base {\n  seed: 3\n}\n";
    const { diagnostics } = checkProject({ "main.arl": text });
    expect(brief(diagnostics)).toEqual([{ code: "group-size-one", severity: "error", line: 9 }]);
  });
});

describe("severity and message of self-inclusive-baseline", () => {
  const withGroup = (g: number) =>
    checkProject({
      "main.arl": experiment(
        `  algorithm extends algo.rloo {\n    group_size: ${g}\n    advantage.baseline: mean\n  }`,
      ),
    }).diagnostics;

  it("states the (G-1)/G factor for the group size", () => {
    expect(withGroup(4)[0]!.message).toContain("0.75 at G = 4");
    expect(withGroup(8)[0]!.message).toContain("0.875 at G = 8");
    expect(withGroup(3)[0]!.message).toContain("0.667 at G = 3");
    expect(withGroup(10)[0]!.message).toContain("0.9 at G = 10");
  });

  it("is a warning below G = 10 and a note from G = 10", () => {
    expect(brief(withGroup(9))).toEqual([{ code: "self-inclusive-baseline", severity: "warning", line: 10 }]);
    expect(brief(withGroup(10))).toEqual([{ code: "self-inclusive-baseline", severity: "info", line: 10 }]);
    expect(brief(withGroup(64))).toEqual([{ code: "self-inclusive-baseline", severity: "info", line: 10 }]);
  });

  it("leaves G = 1 to group-size-one", () => {
    expect(brief(withGroup(1))).toEqual([{ code: "group-size-one", severity: "error", line: 9 }]);
  });
});

describe("variants", () => {
  const rooms = 'import "std/envs/rooms" as rooms\n';
  const spec = (variants: string) =>
    `import "std/algorithms" as algo\n${rooms}experiment sweep_turns {\n  policy { model: "builtin:tiny" }\n  env quest extends rooms.world {}\n  reward { success: outcome.success }\n  algorithm extends algo.rloo {}\n${variants}\n}\n`;

  it("names the variants a finding applies to, at the swept value", () => {
    const { diagnostics } = checkProject({ "main.arl": spec("  sweep { harness.max_turns: [4, 6, 8] }") });
    expect(diagnostics.map((d) => [d.code, d.range.start.line, d.range.start.column])).toEqual([
      ["turn-budget-below-2x-optimal", 8, 31],
      ["turn-budget-below-2x-optimal", 8, 34],
    ]);
    expect(diagnostics[0]!.message).toMatch(/is 4, .* \(variant max_turns=4\)$/);
    expect(diagnostics[1]!.message).toMatch(/is 6, .* \(variant max_turns=6\)$/);
  });

  it("merges a finding shared by several variants and names them all, or none when all have it", () => {
    const some = checkProject({
      "main.arl": spec(
        "  ablation {\n    a { mask.loss: all }\n    b { harness.max_turns: 9 }\n    c {}\n  }\n  mask.loss: all",
      ),
    }).diagnostics;
    // 'a' sets it in its own override; 'b' and 'c' inherit the experiment's own `mask.loss: all`.
    expect(some.map((d) => [d.range.start.line, d.message.replace(/^.*\(/, "(")])).toEqual([
      [9, "(variant a)"],
      [13, "(variants b, c)"],
    ]);
    const all = checkProject({
      "main.arl": spec("  ablation {\n    a { seed: 1 }\n    b { seed: 2 }\n  }\n  mask.loss: all"),
    }).diagnostics;
    expect(all).toHaveLength(1);
    expect(all[0]!.message).not.toContain("variant");
  });

  it("lints the variants that type-check and leaves the others to their schema errors", () => {
    const { diagnostics } = checkProject({
      "main.arl": spec(
        '  ablation {\n    broken { harness.max_turns: "many" }\n    short { harness.max_turns: 3 }\n  }',
      ),
    });
    expect(diagnostics.map((d) => [d.code, d.severity])).toEqual([
      ["type-mismatch", "error"],
      ["turn-budget-below-2x-optimal", "warning"],
    ]);
    expect(diagnostics[1]!.message).toContain("(variant short)");
  });
});
