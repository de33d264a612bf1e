// The success criterion is in the plan (eval.success): the train success rate and pass@k count
// what it says. It used to be chosen silently: the env's `success` signal, else "total reward > 0".
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { Compiler } from "../../src/compiler.js";
import { envKinds } from "../../src/envs/registry.js";
import { executePlan } from "../../src/runtime/orchestrator.js";
import { RunDirectory } from "../../src/runtime/run-dir.js";
import { compilePlans, countingExperiment, scriptedTrainerScript } from "../helpers/plans.js";
import { lower, workspace } from "./support.js";

const envWith = (signals: string) => `env w {
    kind: subprocess
    command: ["./env"]
    signals {
      correct { scope: outcome, type: bool }
      ${signals}
    }
  }`;

const spec = (env: string, evaluation = "") => `experiment e {
  policy { model: "builtin:tiny" }
  ${env}
  reward { r: outcome.correct }
  ${evaluation}
}
`;

const planOf = (text: string) => lower(path.join(workspace({ "spec.arl": text }), "spec.arl"))[0]!.plan;

describe("eval.success", () => {
  it("is the env's success signal when the spec names none", () => {
    expect(planOf(spec(envWith("success { scope: outcome, type: bool }"))).eval.success).toEqual({
      op: "signal",
      namespace: "env",
      name: "success",
      type: "bool",
      timing: "outcome",
    });
    // A number signal succeeds above 0, as before, now written in the plan.
    expect(planOf(spec(envWith("success { scope: outcome, type: number, min: 0, max: 1 }"))).eval.success).toEqual({
      op: ">",
      args: [
        { op: "signal", namespace: "env", name: "success", type: "number", timing: "outcome" },
        { op: "const", value: 0 },
      ],
    });
  });

  it("is the condition the spec names, typed like a constraint's", () => {
    const p = planOf(spec(envWith(""), "eval { success: outcome.correct and episode.turns <= 3 }"));
    expect(p.eval.success).toEqual({
      op: "and",
      args: [
        { op: "signal", namespace: "outcome", name: "correct", type: "bool", timing: "outcome" },
        {
          op: "<=",
          args: [
            { op: "signal", namespace: "episode", name: "turns", type: "count", timing: "state" },
            { op: "const", value: 3 },
          ],
        },
      ],
    });
    const dir = workspace({ "spec.arl": spec(envWith(""), "eval { success: episode.turns }") });
    const errors = new Compiler().check(path.join(dir, "spec.arl")).diagnostics.filter((d) => d.severity === "error");
    expect(errors.map((d) => [d.code, d.range.start.line])).toEqual([["type-mismatch", 12]]);
  });

  it("changes the plan hash: it is what success means", () => {
    const a = planOf(spec(envWith("success { scope: outcome, type: bool }")));
    const b = planOf(spec(envWith("success { scope: outcome, type: bool }"), "eval { success: outcome.correct }"));
    expect(a.hash).not.toBe(b.hash);
  });

  it("is an error when nothing names it, not a guess", () => {
    const dir = workspace({ "spec.arl": spec(envWith("")) });
    const errors = new Compiler().check(path.join(dir, "spec.arl")).diagnostics.filter((d) => d.severity === "error");
    expect(errors.map((d) => [d.code, d.range.start.line])).toEqual([["no-success-criterion", 1]]);
    expect(errors[0]!.message).toContain("env 'w' declares no 'success' signal");
    expect(errors[0]!.hint).toContain("eval { success:");
  });

  it("is what the run counts: train success and pass@k follow the plan's criterion, not the reward", async () => {
    // A criterion that never holds: the counter env's episodes still earn reward.
    const text = countingExperiment({
      name: "never",
      seed: 2,
      rollout: "iterations: 1",
      evaluation: "eval { every: 10, tasks: 2, k: [1], before_training: false, success: episode.turns < 0 }",
    });
    const [plan] = compilePlans(text);
    const runDir = RunDirectory.create(mkdtempSync(path.join(tmpdir(), "arl-success-")), plan!);
    await executePlan({
      plan: plan!,
      runDir,
      trainer: { file: process.execPath, args: [scriptedTrainerScript] },
      envs: envKinds,
      log: () => undefined,
    });
    const [metrics] = runDir.readMetrics();
    expect(metrics!.reward as number).toBeGreaterThan(0);
    expect(metrics!.success).toBe(0);
    const evalFile = readFileSync(runDir.evalPath(1), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { correct: number });
    expect(evalFile.map((r) => r.correct)).toEqual([0, 0]);
  });
});
