// The rules from peers' bug reports, beyond their fixtures: the severity a finding takes when the
// failure is only wasted compute, and the step count the warm-up is measured against.
import { describe, expect, it } from "vitest";
import { brief, checkProject, experiment } from "./helpers.js";

const findings = (body: string, code: string) =>
  checkProject({ "main.arl": experiment(body) }).diagnostics.filter((d) => d.code === code);

describe("identical-group-samples", () => {
  it("is an error when the advantage is group-relative and a warning when the group only costs rollouts", () => {
    const spec = (algorithm: string) =>
      experiment(`  algorithm extends ${algorithm} { group_size: 4 }`).replace(
        'policy { model: "builtin:tiny" }',
        'policy { model: "builtin:tiny", sampling { temperature: 0 } }',
      );
    const rloo = checkProject({ "main.arl": spec("algo.rloo") }).diagnostics.filter(
      (d) => d.code === "identical-group-samples",
    );
    const reinforce = checkProject({ "main.arl": spec("algo.reinforce") }).diagnostics.filter(
      (d) => d.code === "identical-group-samples",
    );
    expect(brief(rloo)).toEqual([{ code: "identical-group-samples", severity: "error", line: 5 }]);
    expect(rloo[0]!.message).toContain("every advantage is 0");
    expect(brief(reinforce)).toEqual([{ code: "identical-group-samples", severity: "warning", line: 5 }]);
  });
});

describe("warmup-beyond-run", () => {
  it("counts iterations x epochs x minibatches and the cold start's steps for the policy", () => {
    // 5 x 1 x 2 = 10 RL steps + 2 x ceil(30 / 10) = 6 cold-start steps: 16 in all.
    const at = (warmup: number) =>
      findings(
        `  algorithm extends algo.rloo { minibatches: 2, optimizer { warmup_steps: ${warmup} } }\n  rollout { iterations: 5, sft { demos: 30, epochs: 2, batch: 10 } }`,
        "warmup-beyond-run",
      );
    expect(at(16)).toEqual([]);
    const over = at(17);
    expect(over.map((d) => d.code)).toEqual(["warmup-beyond-run"]);
    expect(over[0]!.message).toContain("the run takes only 16");
    expect(over[0]!.message).toContain("ROLL#409");
  });
});
