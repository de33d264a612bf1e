// `arl run --backend X`: the override is part of the plan a run writes. It used to rewrite the
// stages after hashing, so the run directory's plan.json no longer matched its own hash.
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { planHash } from "../../src/plan/hash.js";
import { withBackend } from "../../src/plan/lower.js";
import { planSchema, type Plan } from "../../src/plan/schema.js";
import { runArl } from "../helpers/cli.js";
import { compilePlans, countingExperiment, scriptedTrainerScript } from "../helpers/plans.js";

const spec = countingExperiment({
  name: "counting",
  seed: 3,
  rollout: "iterations: 1",
  evaluation: "eval { every: 10, tasks: 1, k: [1], before_training: false }",
});

function runPlans(out: string): Plan[] {
  const plans: Plan[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (e.isDirectory()) walk(path.join(dir, e.name));
      else if (e.name === "plan.json")
        plans.push(planSchema.parse(JSON.parse(readFileSync(path.join(dir, e.name), "utf8"))));
    }
  };
  walk(out);
  return plans;
}

describe("arl run --backend", () => {
  it("lowers the plan again: the written plan.json records the override and matches its own hash", async () => {
    const cwd = mkdtempSync(path.join(tmpdir(), "arl-run-backend-"));
    writeFileSync(path.join(cwd, "spec.arl"), spec);
    const [original] = compilePlans(spec);
    const run = await runArl(
      [
        "run",
        "spec.arl",
        "--out",
        "runs",
        "--backend",
        "torch",
        "--trainer-command",
        `${process.execPath} ${scriptedTrainerScript}`,
      ],
      { cwd },
    );
    expect(run.code, run.stderr).toBe(0);
    const [written] = runPlans(path.join(cwd, "runs"));
    expect(written!.hash).toBe(planHash(written!));
    expect(written!.hash).not.toBe(original!.hash);
    expect(written!.overrides).toContainEqual({ path: "resources.backend", value: "torch" });
    expect(written!.resources.backend).toBe("torch");
    expect(written!.stages.update.backend).toBe("torch");
    expect(written!.stages.reward.backend).toBe("local"); // runtime stages stay in the orchestrator
    // The user is told the new hash, and the run directory is named by it.
    expect(run.stderr).toContain(`is plan ${written!.hash.slice(7, 19)} (was ${original!.hash.slice(7, 19)})`);
    expect(readdirSync(path.join(cwd, "runs", "counting", "default"))[0]!.startsWith(written!.hash.slice(7, 19))).toBe(
      true,
    );
  });

  it("gives the same plan as writing the backend in the spec, except for the recorded override", () => {
    const [original] = compilePlans(spec);
    const [written] = compilePlans(
      spec.replace("harness { max_turns: 4 }", "harness { max_turns: 4 }\n  resources { backend: torch }"),
    );
    const overridden = withBackend(original!, "torch") as Plan;
    const { hash: _a, overrides: oa, provenance: _pa, ...a } = overridden;
    const { hash: _b, overrides: ob, provenance: _pb, ...b } = written!;
    expect(a).toEqual(b);
    expect(oa).toEqual([{ path: "resources.backend", value: "torch" }]);
    expect(ob).toEqual([]);
    expect(withBackend(original!, "local")).toBe(original); // no change, no new hash
  });

  it("refuses a backend the plan cannot run on, before writing a run directory", async () => {
    const cwd = mkdtempSync(path.join(tmpdir(), "arl-run-backend-"));
    writeFileSync(
      path.join(cwd, "spec.arl"),
      spec
        .replace('model: "builtin:tiny"', 'model: "hf:Qwen/Qwen2.5-0.5B"')
        .replace("harness { max_turns: 4 }", "harness { max_turns: 4 }\n  resources { backend: torch }"),
    );
    const run = await runArl(["run", "spec.arl", "--out", "runs", "--backend", "local"], { cwd });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("cannot run with --backend local");
    expect(run.stderr).toContain("plan field policy.model");
    expect(run.stderr).toContain("local-backend-model");
    expect(readdirSync(cwd)).toEqual(["spec.arl"]);
  });
});
