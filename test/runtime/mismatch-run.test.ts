// Train/inference mismatch through a run (docs/semantics.md §12): a trainer double that reports
// each turn's choice token 0.3 nats less likely when sampling than when recomputing it (what an
// inference engine's numerics do) gives a nonzero gap in the metrics line and, with mask.tis,
// importance weights in every train_step equal to the reference's; without mask.tis and with the
// trainer sampling, the metrics line and the train_step requests are as they always were; a
// trainer that does not announce is_weights is refused. arl report draws the mismatch curves of
// a run that measured it, and no such curve (nor a missing one) for a run that did not.
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { envKinds } from "../../src/envs/registry.js";
import type { Plan } from "../../src/plan/schema.js";
import { learningCurves } from "../../src/report/curves.js";
import { loadRun } from "../../src/report/load.js";
import type { RunReport } from "../../src/report/types.js";
import { executePlan, RunError } from "../../src/runtime/orchestrator.js";
import { RunDirectory } from "../../src/runtime/run-dir.js";
import { compilePlans, countingExperiment, scriptedTrainerScript } from "../helpers/plans.js";

const GAP = 0.3;

function plan(mask: string): Plan {
  const [p] = compilePlans(
    countingExperiment({
      name: "mismatched",
      seed: 5,
      rollout: "iterations: 1, preflight { logprobs_reproduce: false }",
      evaluation: "eval { every: 100, tasks: 1, k: [1], before_training: false }",
      extra: `${mask}\n  resources { rollout { mismatch_threshold: 0.1 } }`,
    }),
  );
  return p!;
}

async function run(
  p: Plan,
  env: Record<string, string>,
): Promise<{ runDir: RunDirectory; steps: { loss_mask: number[][]; is_weights?: number[][] }[] }> {
  const dir = mkdtempSync(path.join(tmpdir(), "arl-mismatch-"));
  const trainLog = path.join(dir, "train.jsonl");
  const runDir = RunDirectory.create(path.join(dir, "run"), p);
  await executePlan({
    plan: p,
    runDir,
    trainer: { file: process.execPath, args: [scriptedTrainerScript], env: { DOUBLE_TRAIN_LOG: trainLog, ...env } },
    envs: envKinds,
    log: () => undefined,
  });
  return {
    runDir,
    steps: readFileSync(trainLog, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l)),
  };
}

/** The report's learning curves of one run (the charts as data, not drawn). */
function curvesOf(runDir: RunDirectory): ReturnType<typeof learningCurves> {
  const run = { run: loadRun(runDir.dir, process.cwd()) } as RunReport;
  return learningCurves([{ label: "run", index: 0, members: [run] }], { smooth: 0, seedsAggregated: false });
}

describe("train/inference mismatch in a run", () => {
  it("measures the gap and sends capped token weights with mask.tis", async () => {
    const { runDir, steps } = await run(plan("mask { tis { cap: 1.2 } }"), { DOUBLE_ENGINE_GAP: String(GAP) });
    const metrics = runDir.readMetrics();
    expect(metrics).toHaveLength(1);
    for (const m of metrics) {
      const { mismatch, tis } = m as unknown as {
        mismatch: { mean_abs: number; max_abs: number; frac_over: number; tokens: number };
        tis: { mean_weight: number; frac_capped: number };
      };
      // The gap sits on each turn's choice token only; every other target reproduces exactly.
      expect(mismatch.max_abs).toBeCloseTo(GAP, 5);
      expect(mismatch.tokens).toBeGreaterThan(0);
      expect(mismatch.frac_over).toBeGreaterThan(0);
      expect(mismatch.frac_over).toBeLessThan(0.2);
      expect(mismatch.mean_abs).toBeCloseTo(GAP * mismatch.frac_over, 5);
      // exp(0.3) = 1.35 is capped at 1.2 on those tokens, the rest weigh 1.
      expect(tis.frac_capped).toBeCloseTo(mismatch.frac_over, 9);
      expect(tis.mean_weight).toBeCloseTo(1 + 0.2 * tis.frac_capped, 5);
    }
    expect(steps.length).toBeGreaterThan(0);
    for (const step of steps) {
      const weights = step.is_weights!;
      step.loss_mask.forEach((mask, i) =>
        mask.forEach((m, k) => {
          const w = weights[i]![k]!;
          if (!m) expect(w).toBe(0);
          else
            expect(
              [1, 1.2].some((x) => Math.abs(w - x) < 1e-6),
              `weight ${w}`,
            ).toBe(true);
        }),
      );
      expect(step.is_weights!.flat().some((w) => Math.abs(w - 1.2) < 1e-6)).toBe(true);
    }
    const { charts } = curvesOf(runDir);
    expect(charts.map((c) => c.id)).toEqual(expect.arrayContaining(["mismatch-mean", "mismatch-max", "mismatch-over"]));
    expect(charts.find((c) => c.id === "mismatch-max")!.series[0]!.points[0]!.y).toBeCloseTo(GAP, 5);
  });

  it("changes nothing with the trainer sampling and no mask.tis, and refuses mask.tis with a trainer that does not take weights", async () => {
    const { runDir, steps } = await run(plan(""), { DOUBLE_ENGINE_GAP: String(GAP) });
    for (const m of runDir.readMetrics()) expect(Object.keys(m)).not.toContain("mismatch");
    for (const step of steps) expect(step).not.toHaveProperty("is_weights");
    const { charts, missing } = curvesOf(runDir);
    expect([...charts.map((c) => c.title), ...missing].join("\n")).not.toMatch(/mismatch/i);
    const refused = run(plan("mask { tis { cap: 2 } }"), { DOUBLE_NO_IS_WEIGHTS: "1" });
    await expect(refused).rejects.toThrow(RunError);
    await expect(refused).rejects.toThrow(
      /mask\.tis needs a trainer that weights each token's policy-gradient term \(capability is_weights/,
    );
  });
});
