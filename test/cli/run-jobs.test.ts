// `arl run --jobs N`: a sweep's variants run N at once, each with its own trainer process, and
// give the same results as one at a time (a run's batches and updates depend on its seed only).
import { mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runArl } from "../helpers/cli.js";
import { countingExperiment, embeddedTrainerFlag } from "../helpers/plans.js";
import { runResults, type RunResults } from "../helpers/run-results.js";

// A small model writing short turns, so that three runs take seconds.
const spec = countingExperiment({
  name: "counting",
  seed: 3,
  rollout: "iterations: 2",
  evaluation: "eval { every: 2, tasks: 3, k: [1] }",
  extra: "sweep { seed: [3, 4, 5] }",
}).replace(
  'policy { model: "builtin:tiny" }',
  'policy { model: "builtin:tiny?hidden=16&embed=8&key=8", sampling { max_new_tokens: 8 } }',
);

/** Per variant: its metrics without the wall-clock fields, and its evaluation records. */
function results(out: string): Record<string, RunResults> {
  const byVariant: Record<string, RunResults> = {};
  const root = path.join(out, "counting");
  for (const variant of readdirSync(root, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name)) {
    const runs = readdirSync(path.join(root, variant), { withFileTypes: true }).filter((e) => e.isDirectory());
    expect(runs).toHaveLength(1);
    byVariant[variant] = runResults(path.join(root, variant, runs[0]!.name));
  }
  return byVariant;
}

describe("arl run --jobs", () => {
  it("runs the variants at once, with log lines named by variant, and the results of running them in turn", async () => {
    const cwd = mkdtempSync(path.join(tmpdir(), "arl-run-jobs-"));
    writeFileSync(path.join(cwd, "spec.arl"), spec);
    const inTurn = await runArl(["run", "spec.arl", "--out", "one", ...embeddedTrainerFlag], { cwd });
    expect(inTurn.code, inTurn.stderr).toBe(0);
    const atOnce = await runArl(["run", "spec.arl", "--out", "three", "--jobs", "3", ...embeddedTrainerFlag], { cwd });
    expect(atOnce.code, atOnce.stderr).toBe(0);

    const sequential = results(path.join(cwd, "one"));
    expect(Object.keys(sequential).sort()).toEqual(["seed=3", "seed=4", "seed=5"]);
    expect(results(path.join(cwd, "three"))).toEqual(sequential);
    // The seeds differ, so equal results are not the same run three times.
    expect(sequential["seed=3"]!.evals).not.toEqual(sequential["seed=4"]!.evals);

    // Every log line of a run names its variant; one summary per run; one sweep report of all three.
    for (const variant of ["seed=3", "seed=4", "seed=5"]) {
      expect(atOnce.stdout).toContain(`[${variant}] run counting/${variant} (`);
      expect(atOnce.stdout).toContain(`[${variant}] iteration 2/2:`);
      expect(atOnce.stdout).toContain(`counting/${variant}: finished after 2 iterations`);
    }
    expect(atOnce.stdout).toContain("sweep report (3 runs)");
    expect(inTurn.stdout).not.toContain("[seed=3]");
  });

  it("refuses a count that is not a whole number of runs, before writing anything", async () => {
    const cwd = mkdtempSync(path.join(tmpdir(), "arl-run-jobs-"));
    writeFileSync(path.join(cwd, "spec.arl"), spec);
    for (const jobs of ["0", "1.5", "two"]) {
      const run = await runArl(["run", "spec.arl", "--jobs", jobs], { cwd });
      expect(run.code).toBe(2);
      expect(run.stderr).toContain(`--jobs must be a whole number of runs at once, 1 or more, not '${jobs}'`);
    }
    expect(readdirSync(cwd)).toEqual(["spec.arl"]);
  });

  it("refuses to run GPU plans at once, which would share the devices, before writing anything", async () => {
    const cwd = mkdtempSync(path.join(tmpdir(), "arl-run-jobs-"));
    writeFileSync(
      path.join(cwd, "spec.arl"),
      spec
        .replace(/model: "builtin:tiny[^"]*"/, 'model: "hf:Qwen/Qwen2.5-0.5B"')
        .replace("harness { max_turns: 4 }", "harness { max_turns: 4 }\n  resources { backend: torch, gpus: 1 }"),
    );
    const run = await runArl(["run", "spec.arl", "--jobs", "2"], { cwd });
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toContain("--jobs 2: counting/seed=3 uses GPUs (resources.gpus 1, nodes 1)");
    expect(run.stderr).toContain("run the variants one at a time");
    expect(readdirSync(cwd)).toEqual(["spec.arl"]);
  });
});
