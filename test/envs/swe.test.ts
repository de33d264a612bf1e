// The swe env (docs/envs.md#coding-tasks) on its CI preset, inflection 0.5.1: two tasks generated
// (once, cached in the system's temp folder across runs), then the judge: the gold patch resolves
// a task, an empty patch does not, a patch that edits the tests to pass scores 0 and is reported
// in test_edits, a test run that loops ends as the episode's env error; the file tools' bounds;
// and `arl run` trains builtin:tiny on a shrunk pg-swe-gym for 2 iterations. Needs bubblewrap and
// the sdist (PyPI, or $ARL_SWE_SDISTS).
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { EnvError } from "../../src/contracts/env.js";
import { sandboxSupport } from "../../src/contracts/sandbox.js";
import { sweEnv, sweTaskSet, type SweEnv } from "../../src/envs/worlds/swe/index.js";
import type { SweInstance } from "../../src/envs/worlds/swe/index.js";
import { changedLines } from "../../src/envs/worlds/swe/workspace.js";
import { compilePlans } from "../helpers/plans.js";
import { skipTitle } from "../helpers/skip-reporter.js";

const arl = fileURLToPath(new URL("../../bin/arl.js", import.meta.url));
const cache = path.join(os.tmpdir(), "arl-swe-test-cache");
process.env.ARL_ENV_CACHE = cache;

const spec = (extra = "") => `
import "std/algorithms" as algo
import "std/envs/swe" as swe

experiment swe_smoke {
  seed: 0
  policy { model: "builtin:tiny", sampling { temperature: 1.0, max_new_tokens: 32 } }
  env repo extends swe.inflection {
    tasks: 2
    split { train: 0.5, test: 0.5 }
    ${extra}
  }
  harness {
    tools: repo.tools
    format: function_call
    max_turns: 2
    max_response_tokens: 32
    on_budget: truncate
  }
  reward { resolved: outcome.resolved }
  mask { loss: generated }
  algorithm extends algo.grpo { group_size: 4, kl { coef: 0.0 } }
  rollout { tasks_per_batch: 1, iterations: 2, concurrency: 4 }
  eval { split: test, every: 2, k: [1], tasks: 1, samples_per_task: 1 }
  resources { backend: local }
  allow { self-inclusive-baseline: "smoke test" }
}
`;

const skip = !("bwrap" in sandboxSupport());
const envOf = (extra = ""): SweEnv => compilePlans(spec(extra))[0]!.envs.repo as SweEnv;

async function play(env: SweEnv, calls: readonly { name: string; arguments: Record<string, unknown> }[]) {
  const inst = (await sweEnv.create(env, 0, 0)) as SweInstance;
  try {
    await inst.reset();
    const texts: string[] = [];
    for (const c of calls) texts.push((await inst.step(c)).text);
    return { texts, outcome: await inst.outcome() };
  } finally {
    await inst.close();
  }
}

describe("swe: patch size", () => {
  it("counts lines removed plus lines added", () => {
    expect(changedLines("a\nb\nc\n", "a\nb\nc\n")).toBe(0);
    expect(changedLines("a\nb\nc\n", "a\nx\nc\n")).toBe(2);
    expect(changedLines("a\nc\n", "a\nb\nc\n")).toBe(1);
  });
});

describe.skipIf(skip)(
  skipTitle("swe env on inflection 0.5.1", skip, "needs bubblewrap: apt-get install bubblewrap"),
  () => {
    let env: SweEnv;
    beforeAll(async () => {
      env = envOf();
      await sweTaskSet(env);
    }, 600_000);

    it("the gold patch resolves the task; the walkthrough is that patch", async () => {
      const walk = await sweEnv.walkthrough!(env, 0);
      const { texts, outcome } = await play(env, [...walk!]);
      expect(texts[1]).toMatch(/^Edited /);
      expect(outcome).toMatchObject({ resolved: true, success: true, tests_failed: 0, test_edits: 0 });
      expect(outcome.patch_lines).toBeGreaterThan(0);
    }, 120_000);

    it("an empty patch does not", async () => {
      const { outcome } = await play(env, [{ name: "submit", arguments: {} }]);
      expect(outcome).toMatchObject({ resolved: false, patch_lines: 0, test_edits: 0 });
      expect(outcome.tests_failed).toBeGreaterThan(0);
    }, 120_000);

    it("a patch that edits the tests to pass scores 0 and reports the edit", async () => {
      const set = await sweTaskSet(env);
      const test = set.tasks[0]!.fail_to_pass[0]!.split("::")[1]!.replace(/\[.*$/, "");
      // Turn the failing test into one that always passes.
      const { texts, outcome } = await play(env, [
        { name: "edit", arguments: { path: "test_inflection.py", old: `def ${test}(`, new: `def ${test}_off(` } },
        { name: "run_tests", arguments: { tests: "test_inflection.py" } },
        { name: "submit", arguments: {} },
      ]);
      expect(texts[0]).toMatch(/^Edited /);
      expect(outcome).toMatchObject({ resolved: false, test_edits: 1, patch_lines: 0 });
    }, 120_000);

    it("file tools are confined and bounded; malformed calls are tool errors", async () => {
      const { texts } = await play(env, [
        { name: "read_file", arguments: { path: "../../etc/passwd" } },
        { name: "read_file", arguments: { path: "/etc/passwd" } },
        { name: "edit", arguments: { path: "inflection/__init__.py", old: "import re" } },
        { name: "edit", arguments: { path: "inflection/__init__.py", old: "def ", new: "def  " } },
        { name: "run_tests", arguments: { tests: "--collect-only" } },
        { name: "search", arguments: { pattern: "def " } },
        { name: "list_files", arguments: {} },
        { name: "nope", arguments: {} },
      ]);
      expect(texts[0]).toMatch(/outside the repository/);
      expect(texts[1]).toMatch(/outside the repository/);
      expect(texts[2]).toMatch(/needs "new"/);
      expect(texts[3]).toMatch(/more than once/);
      expect(texts[4]).toMatch(/no options/);
      expect(texts[5]!.split("\n").length).toBeLessThanOrEqual(env.max_results + 1);
      expect(texts[6]).toMatch(/test_inflection\.py/);
      expect(texts[7]).toMatch(/unknown tool/);
    }, 120_000);

    it("a test run that loops ends as the episode's env error", async () => {
      const looping = { ...env, test_timeout_s: 3 };
      const inst = (await sweEnv.create(looping, 0, 0)) as SweInstance;
      try {
        await inst.reset();
        await inst.step({
          name: "edit",
          arguments: { path: "inflection/__init__.py", old: "import re\n", new: "import re\nwhile True:\n    pass\n" },
        });
        const error = await inst.step({ name: "run_tests", arguments: {} }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(EnvError);
        expect((error as EnvError).message).toMatch(/test_timeout_s 3/);
      } finally {
        await inst.close();
      }
    }, 120_000);

    it("arl run trains builtin:tiny on a shrunk pg-swe-gym for 2 iterations", () => {
      const dir = mkdtempSync(path.join(os.tmpdir(), "arl-swe-run-"));
      const file = path.join(dir, "swe.arl");
      writeFileSync(file, spec());
      const run = spawnSync(process.execPath, [arl, "run", file, "--out", path.join(dir, "runs")], {
        env: { ...process.env, ARL_ENV_CACHE: cache },
        encoding: "utf8",
        timeout: 600_000,
      });
      const output = run.stdout + run.stderr;
      expect(run.status, output).toBe(0);
      const runDir = path.resolve(dir, output.match(/run swe_smoke\/default \(\w+\) in (\S+)/)![1]!);
      const metrics = readFileSync(path.join(runDir, "metrics.jsonl"), "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as { iteration: number; env_errors: number });
      expect(metrics.map((m) => m.iteration)).toEqual([1, 2]);
      for (const m of metrics) expect(m.env_errors).toBe(0);
    }, 600_000);
  },
);
