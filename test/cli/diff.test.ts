import { copyFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runArl } from "../helpers/cli.js";
import { examplesDir, workspace } from "../plan/support.js";

function examples(): string {
  const cwd = workspace({}, "arl-cli-diff-");
  for (const name of ["findmax.arl", "shaping.arl", "tw-max-steps.arl"])
    copyFileSync(path.join(examplesDir, name), path.join(cwd, name));
  return cwd;
}

describe("arl diff", () => {
  it("prints 'path: old -> new' per changed field and exits 1 when the plans differ", async () => {
    const cwd = examples();
    const run = await runArl(["diff", "findmax.arl#findmax_grpo/default", "findmax.arl#findmax_loo/default"], { cwd });
    expect(run.code).toBe(1);
    expect(run.stdout).toBe(
      'algorithm.advantage.baseline: "mean" -> "leave_one_out"\nexperiment: "findmax_grpo" -> "findmax_loo"\n',
    );
    expect(run.stderr).toBe(""); // warnings of a spec without errors are not repeated here

    const reductions = await runArl(
      ["diff", "findmax.arl#findmax_reductions/token_mean", "findmax.arl#findmax_reductions/dr_grpo"],
      { cwd },
    );
    expect(reductions.code).toBe(1);
    expect(reductions.stdout.split("\n")).toEqual([
      "algorithm.reduction.constant: (absent) -> 1024",
      'algorithm.reduction.mode: "token_mean" -> "constant"',
      "overrides.0.value.constant: (absent) -> 1024",
      'overrides.0.value.mode: "token_mean" -> "constant"',
      'stages.update.denominator.divide_by: "target_tokens" -> "sequences_times_constant"',
      "stages.update.reduction.constant: (absent) -> 1024",
      'stages.update.reduction.mode: "token_mean" -> "constant"',
      'variant: "token_mean" -> "dr_grpo"',
      "",
    ]);
    const sweep = await runArl(
      ["diff", "tw-max-steps.arl#tw_max_steps/max_turns=6", "tw-max-steps.arl#tw_max_steps/max_turns=16"],
      { cwd },
    );
    expect(sweep.stdout).toBe(
      'harness.max_turns: 6 -> 16\noverrides.0.value: 6 -> 16\nvariant: "max_turns=6" -> "max_turns=16"\n',
    );
  });

  it("compares plan files with spec variants; equal plans exit 0 with no output", async () => {
    const cwd = examples();
    expect((await runArl(["plan", "findmax.arl"], { cwd })).code).toBe(0);
    const same = await runArl(["diff", "plans/findmax_grpo/default.plan.json", "findmax.arl#findmax_grpo"], { cwd });
    expect(same).toEqual({ code: 0, stdout: "", stderr: "" });
    // Provenance differs (a comment changes the file hash); the plans are still equal.
    writeFileSync(
      path.join(cwd, "findmax.arl"),
      `// edited\n${(await import("node:fs")).readFileSync(path.join(cwd, "findmax.arl"), "utf8")}`,
    );
    expect(
      (await runArl(["diff", "plans/findmax_grpo/default.plan.json", "findmax.arl#findmax_grpo/default"], { cwd }))
        .code,
    ).toBe(0);
    // A spec with one experiment and one variant needs no fragment.
    expect((await runArl(["plan", "shaping.arl", "--out", "p"], { cwd })).code).toBe(0);
    expect((await runArl(["diff", "shaping.arl", "p/sql_agent/default.plan.json"], { cwd })).code).toBe(0);
    const different = await runArl(["diff", "p/sql_agent/default.plan.json", "plans/findmax_grpo/default.plan.json"], {
      cwd,
    });
    expect(different.code).toBe(1);
    expect(different.stdout).toContain("policy.sampling.max_new_tokens: 512 -> 96\n");
    expect(different.stdout).toContain('envs.bank: {"kind":"sql"');
    expect(different.stdout).toContain("-> (absent)\n");
  });

  it("exits 2 on usage errors, unreadable or invalid inputs, unknown or ambiguous variants, and specs with errors", async () => {
    const cwd = examples();
    writeFileSync(path.join(cwd, "not.json"), "{");
    writeFileSync(path.join(cwd, "other.json"), '{"format_version": 1}');
    writeFileSync(path.join(cwd, "bad.arl"), "experiment e { policy { model: 1 } }\n");
    const cases: [string[], string][] = [
      [["diff", "findmax.arl#findmax_grpo"], "give two plans"],
      [["diff", "a", "b", "c"], "give two plans"],
      [["diff", "missing.plan.json", "findmax.arl#findmax_grpo"], "cannot read 'missing.plan.json'"],
      [["diff", "not.json", "findmax.arl#findmax_grpo"], "is not JSON"],
      [["diff", "other.json", "findmax.arl#findmax_grpo"], "is not a plan"],
      [
        ["diff", "findmax.arl#findmax_reductions", "findmax.arl#findmax_grpo"],
        "is ambiguous; name one of: findmax.arl#findmax_reductions/seq_mean",
      ],
      [["diff", "findmax.arl", "findmax.arl#findmax_grpo"], "is ambiguous"],
      [
        ["diff", "findmax.arl#nope/default", "findmax.arl#findmax_grpo"],
        "names no variant; the spec has: findmax.arl#findmax_grpo/default",
      ],
      [["diff", "bad.arl", "findmax.arl#findmax_grpo"], "error[type-mismatch]"],
      [["diff", "gone.arl#e", "findmax.arl#findmax_grpo"], "cannot read 'gone.arl'"],
    ];
    for (const [args, message] of cases) {
      const run = await runArl(args, { cwd });
      expect(run.code, args.join(" ")).toBe(2);
      expect(run.stderr, args.join(" ")).toContain(message);
    }
  });
});
