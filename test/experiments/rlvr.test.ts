// The shipped RLVR specs (experiments/rlvr/): the builtin:tiny spec and the PyTorch-trainer spec
// on a random Qwen3 each check without errors or warnings against their current lock files, with
// a built-in scorer and the veRL-style reward.py. The runs themselves are
// test/runtime/dataset-run.test.ts (embedded trainer) and runtime-gpu/tests/test_hf_dataset_run.py.
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { Compiler } from "../../src/compiler.js";
import { lockPath } from "../../src/plan/lock.js";
import { lowerModel } from "../../src/plan/lower.js";

const RLVR = fileURLToPath(new URL("../../experiments/rlvr/", import.meta.url));

describe("experiments/rlvr", () => {
  it.each([
    ["arithmetic.arl", "local", ["sums_builtin", "sums_verl", "sums_cold_start"]],
    ["arithmetic-torch.arl", "torch", ["sums_torch_builtin", "sums_torch_verl"]],
  ])(
    "%s checks cleanly against its lock, on the %s trainer, with a built-in scorer and reward.py",
    (name, backend, experiments) => {
      const file = path.join(RLVR, name);
      expect(existsSync(lockPath(file)), `run 'arl lock experiments/rlvr/${name}'`).toBe(true);
      const result = new Compiler().check(file);
      expect(result.diagnostics.map((d) => `${d.severity} ${d.code}: ${d.message}`)).toEqual([]);
      const plans = lowerModel(result.model!).plans.map((p) => p.plan);
      expect(plans.map((p) => p.experiment)).toEqual(experiments);
      expect(plans.map((p) => p.resources.backend)).toEqual(experiments.map(() => backend));
      const scorers = plans.map((p) => {
        const env = p.envs.sums!;
        return env.kind === "dataset" ? [env.scorer, env.verifier?.path ?? null] : null;
      });
      expect(scorers.slice(0, 2)).toEqual([
        ["number", null],
        ["verl", "reward.py"],
      ]);
    },
  );
});
