// The seeds' repositories as swe presets (std/envs/swe: pydantic, mypy, moto, dvc;
// docs/envs.md#coding-tasks), opt-in: ARL_SWE_PRESETS=1 (or a comma list of preset names) runs
// them, each in minutes on a 2-core machine (its requirements' venv, the sdist, two generated
// tasks), so they stay out of the default run. For each preset: the venv is made from its
// hashed requirements file, two tasks are generated, and in the episode sandbox (no network,
// the preset's limits) the gold patch of each task resolves it (every FAIL_TO_PASS and
// PASS_TO_PASS test passes there, as during generation outside it) and an empty patch does not.
// Tasks and venvs are cached in $ARL_ENV_CACHE (default: the system's temp folder).
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { sandboxSupport } from "../../src/contracts/sandbox.js";
import { sweEnv, sweTaskSet, type SweEnv, type SweInstance } from "../../src/envs/worlds/swe/index.js";
import { compilePlans } from "../helpers/plans.js";
import { sweSpec } from "../helpers/swe-spec.js";
import { skipTitle } from "../helpers/skip-reporter.js";

process.env.ARL_ENV_CACHE ??= path.join(os.tmpdir(), "arl-swe-test-cache");

const PRESETS = ["pydantic", "mypy", "moto", "dvc"] as const;
const asked = (process.env.ARL_SWE_PRESETS ?? "").split(",").map((p) => p.trim());
const wanted = (name: string) => asked.includes("1") || asked.includes("all") || asked.includes(name);
const noSandbox = !("bwrap" in sandboxSupport());

const spec = (preset: string) =>
  sweSpec(`env repo extends swe.${preset} {
    tasks: 2
    split { train: 0.5, test: 0.5 }
  }`);

async function play(env: SweEnv, task: number, calls: readonly { name: string; arguments: Record<string, unknown> }[]) {
  const inst = (await sweEnv.create(env, task, 0)) as SweInstance;
  try {
    await inst.reset();
    for (const c of calls) await inst.step(c);
    return await inst.outcome();
  } finally {
    await inst.close();
  }
}

for (const preset of PRESETS) {
  const skip = !wanted(preset) || noSandbox;
  const need = noSandbox
    ? "needs bubblewrap: apt-get install bubblewrap"
    : `needs ARL_SWE_PRESETS=${preset} or 1, minutes and the PyPI index: docs/envs.md, Coding tasks`;
  describe.skipIf(skip)(skipTitle(`swe preset ${preset}`, skip, need), () => {
    it("its requirements install, two tasks generate, and in the sandbox the gold patch resolves each and an empty one does not", async () => {
      const env = compilePlans(spec(preset))[0]!.envs.repo as SweEnv;
      const set = await sweTaskSet(env, (line) => console.log(line));
      expect(set.python).toMatch(/swe\/venvs\/[0-9a-f]{16}-/);
      for (const task of [0, 1]) {
        const walk = await sweEnv.walkthrough!(env, task);
        const gold = await play(env, task, walk!);
        expect(gold, `${preset} task ${task}: ${set.tasks[task]!.what}`).toMatchObject({
          resolved: true,
          tests_failed: 0,
          test_edits: 0,
        });
        const empty = await play(env, task, [{ name: "submit", arguments: {} }]);
        expect(empty).toMatchObject({ resolved: false, patch_lines: 0 });
        expect(empty.tests_failed).toBe(set.tasks[task]!.fail_to_pass.length);
      }
    }, 3_600_000);
  });
}
