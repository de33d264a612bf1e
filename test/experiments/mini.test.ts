// The miniature reproductions in experiments/mini/: each spec checks without errors against its
// current lock file, shows exactly the lint warnings its header says it shows, and its variants
// run end to end on the embedded trainer when shrunk in memory to one iteration of one task, a
// one-step cold start and a small model. Running them in full is a benchmark
// (`npm run bench -- --only mini`), not a test.
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { Compiler } from "../../src/compiler.js";
import { envKinds } from "../../src/envs/registry.js";
import { planHash } from "../../src/plan/hash.js";
import { lockPath } from "../../src/plan/lock.js";
import { lowerModel } from "../../src/plan/lower.js";
import type { Plan } from "../../src/plan/schema.js";
import { executePlan } from "../../src/runtime/orchestrator.js";
import { RunDirectory } from "../../src/runtime/run-dir.js";

const MINI = fileURLToPath(new URL("../../experiments/mini/", import.meta.url));
/** The built embedded trainer (`npm test` builds first), as `arl run` starts it for backend local. */
const EMBEDDED = { file: process.execPath, args: [fileURLToPath(new URL("../../dist/trainer/embedded/main.js", import.meta.url))] };
const specs = readdirSync(MINI)
  .filter((f) => f.endsWith(".arl"))
  .sort()
  .map((f) => path.join(MINI, f));

/** The lint warnings each spec is meant to show (its header says why); anything else is a regression. */
const expectedWarnings: Record<string, string[]> = {
  "baseline-ablation.arl": [],
  "table3-turn-budget.arl": [],
  "table9-reward-density.arl": ["potential-kept-at-truncation", "non-potential-shaping"],
};

function compile(file: string) {
  const result = new Compiler().check(file);
  return { result, plans: result.model ? lowerModel(result.model).plans : [] };
}

/**
 * A plan shrunk to a smoke run: a small model writing at most 8 tokens a call, a one-step cold
 * start on 2 walkthroughs, 1 iteration of 1 task x 2 attempts, 1 eval task.
 */
function smoke(plan: Plan): Plan {
  const shrunk: Plan = {
    ...plan,
    policy: { ...plan.policy, model: "builtin:tiny?hidden=16&embed=8&key=8", sampling: { ...plan.policy.sampling, max_new_tokens: 8 } },
    algorithm: { ...plan.algorithm, group_size: 2 },
    rollout: { ...plan.rollout, iterations: 1, tasks_per_batch: 1, concurrency: 2, sft: plan.rollout.sft ? { ...plan.rollout.sft, demos: 2, epochs: 1, batch: 2 } : null },
    eval: { ...plan.eval, every: 1, tasks: 1, base: false },
  };
  return { ...shrunk, hash: planHash(shrunk) };
}

describe("experiments/mini", () => {
  it("holds the three miniature specs", () => {
    expect(specs.map((s) => path.basename(s))).toEqual(Object.keys(expectedWarnings));
  });

  it.each(specs.map((s) => path.basename(s)))("%s checks without errors against its current lock file, with only the warnings it means to show", (name) => {
    const file = path.join(MINI, name);
    expect(existsSync(lockPath(file)), `${name} has no lock file: run 'arl lock experiments/mini/${name}'`).toBe(true);
    const { result } = compile(file);
    const errors = result.diagnostics.filter((d) => d.severity === "error");
    expect(errors.map((d) => `${d.code}: ${d.message}`)).toEqual([]);
    const warnings = [...new Set(result.diagnostics.filter((d) => d.severity === "warning").map((d) => d.code))];
    expect(warnings).toEqual(expectedWarnings[name]);
  });

  // One smoke run per runtime path the variants take: their differences that are not numbers
  // the runtime already runs with (the turn budget, the advantage baseline, the seed) are the
  // reward terms, so table 9's three variants run and one variant each of the other specs does.
  describe("smoke runs, shrunk: table 9's variants and one of each other spec (seed 0)", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "arl-mini-smoke-"));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));
    const smoked: Record<string, string[]> = {
      "baseline-ablation.arl": ["mean,seed=0"],
      "table3-turn-budget.arl": ["max_turns=6,seed=0"],
      "table9-reward-density.arl": ["sparse,seed=0", "dense,seed=0", "bonus,seed=0"],
    };
    const cases = specs.flatMap((file) =>
      compile(file)
        .plans.filter((p) => smoked[path.basename(file)]?.includes(p.variant))
        .map((p) => ({ name: `${path.basename(file)} ${p.variant}`, plan: p.plan })),
    );

    it("finds the variants it runs", () => {
      expect(cases.map((c) => c.name)).toEqual(Object.entries(smoked).flatMap(([file, variants]) => variants.map((v) => `${file} ${v}`)));
    });

    it.each(cases)("$name: cold start, one iteration and the evaluations write their rows", async ({ plan }) => {
      const shrunk = smoke(plan);
      const runDir = RunDirectory.create(dir, shrunk);
      await executePlan({ plan: shrunk, runDir, trainer: EMBEDDED, envs: envKinds, log: () => undefined });
      const metrics = runDir.readMetrics();
      expect(metrics.map((m) => m.iteration)).toEqual([1]);
      const row = metrics[0]!;
      expect(row.eval_before_training).toHaveProperty("pass@1");
      expect(row.eval).toHaveProperty("pass@1");
      expect(Object.keys(row.reward_terms as object).sort()).toEqual(Object.keys(plan.reward.terms).sort());
      expect(runDir.readState().sftDone).toBe(true);
    });
  });
});
