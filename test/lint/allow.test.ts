// `allow { CODE: "reason" }`: silences a lint rule for one experiment; an unknown code is an
// error (with "did you mean"), an entry whose rule never fires is a note, and an empty reason is
// a schema error. Only lint rules can be silenced.
import { describe, expect, it } from "vitest";
import { brief, checkProject, experiment } from "./helpers.js";

const grpoAtFour = "  algorithm extends algo.rloo {\n    group_size: 4\n    advantage.baseline: mean\n  }";

describe("allow", () => {
  it("silences a rule for the experiment, with its reason", () => {
    const loud = checkProject({ "main.arl": experiment(grpoAtFour) }).diagnostics;
    expect(loud.map((d) => d.code)).toEqual(["self-inclusive-baseline"]);
    const quiet = checkProject({
      "main.arl": experiment(
        `${grpoAtFour}\n  allow { self-inclusive-baseline: "matching the original GRPO objective" }`,
      ),
    }).diagnostics;
    expect(quiet).toEqual([]);
  });

  it("silences only the experiment that allows it", () => {
    const text =
      experiment(`${grpoAtFour}\n  allow { self-inclusive-baseline: "matching the original GRPO objective" }`, {
        name: "quiet",
      }) +
      "\n" +
      experiment(grpoAtFour, { name: "loud" }).replace(/^import.*\n/gm, "");
    const { diagnostics } = checkProject({ "main.arl": text });
    expect(brief(diagnostics)).toEqual([{ code: "self-inclusive-baseline", severity: "warning", line: 22 }]);
  });

  it("applies to every variant, and an allow inherited by a derived experiment is used by either", () => {
    const text =
      experiment(
        `${grpoAtFour}\n  allow { self-inclusive-baseline: "matching the original GRPO objective" }\n  sweep { algorithm.group_size: [2, 4] }`,
        { name: "base" },
      ) + "\nexperiment derived extends base {\n  algorithm.advantage.baseline: leave_one_out\n}\n";
    expect(checkProject({ "main.arl": text }).diagnostics).toEqual([]);
  });

  it("reports an unknown code as an error at the key, suggesting the closest rule", () => {
    const { diagnostics } = checkProject({
      "main.arl": experiment(`${grpoAtFour}\n  allow {\n    self-inclusive-basline: "typo"\n  }`),
    });
    expect(brief(diagnostics)).toEqual([
      { code: "self-inclusive-baseline", severity: "warning", line: 10 },
      { code: "unknown-rule", severity: "error", line: 13 },
    ]);
    const unknown = diagnostics[1]!;
    expect(unknown.range.start.column).toBe(5);
    expect(unknown.message).toContain("'self-inclusive-basline' is not a lint rule");
    expect(unknown.hint).toBe("did you mean 'self-inclusive-baseline'?");
  });

  it("cannot silence errors that are not lint rules", () => {
    const { diagnostics } = checkProject({
      "main.arl": experiment(
        '  algorithm extends algo.rloo {}\n  harness.max_turns: "ten"\n  allow { type-mismatch: "the schema is wrong" }',
      ),
    });
    // The variant does not type-check, so there is no config to lint and no allow to read.
    expect(diagnostics.map((d) => d.code)).toEqual(["type-mismatch"]);
    const typed = checkProject({
      "main.arl": experiment('  algorithm extends algo.rloo {}\n  allow { unknown-field: "no" }'),
    }).diagnostics;
    expect(typed.map((d) => [d.code, d.severity])).toEqual([["unknown-rule", "error"]]);
    expect(typed[0]!.hint).toContain("only RL lint rules can be silenced");
  });

  it("notes an allow whose rule fires in no variant", () => {
    const { diagnostics } = checkProject({
      "main.arl": experiment('  algorithm extends algo.rloo {}\n  allow {\n    kl-double-placement: "we know"\n  }'),
    });
    expect(brief(diagnostics)).toEqual([{ code: "unused-allow", severity: "info", line: 10 }]);
    expect(diagnostics[0]!.message).toContain("'kl-double-placement'");
  });

  it("counts an allow as used when its rule fires in any variant", () => {
    const { diagnostics } = checkProject({
      "main.arl": experiment(
        `${grpoAtFour}\n  allow { self-inclusive-baseline: "matching GRPO" }\n  ablation {\n    grpo {}\n    loo { algorithm.advantage.baseline: leave_one_out }\n  }`,
      ),
    });
    expect(diagnostics).toEqual([]);
  });

  it("applies an allow inherited from a base in another file, leaving its upkeep to that file", () => {
    const base = experiment(
      `${grpoAtFour}\n  allow {\n    self-inclusive-baseline: "matching GRPO"\n    kl-double-placement: "unused here"\n  }`,
      { name: "base" },
    );
    const derived = checkProject({
      "lib/base.arl": base,
      "main.arl": 'import "./lib/base" as b\nexperiment derived extends b.base {\n  seed: 3\n}\n',
    });
    expect(derived.diagnostics).toEqual([]);
    const own = checkProject({ "main.arl": base }).diagnostics;
    expect(brief(own)).toEqual([{ code: "unused-allow", severity: "info", line: 14 }]);
  });

  it("requires a reason: an empty one is a schema error", () => {
    const { diagnostics } = checkProject({
      "main.arl": experiment(`${grpoAtFour}\n  allow { self-inclusive-baseline: "" }`),
    });
    expect(brief(diagnostics)).toEqual([{ code: "invalid-value", severity: "error", line: 12 }]);
  });
});
