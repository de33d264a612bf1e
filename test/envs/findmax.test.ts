// The built-in findmax env: tasks by id (deterministic, distinct, split by task), the seed's
// findMax example, walkthroughs that pass the hidden tests, seeded bugs that fail them, bad tool
// calls, and cleanup. The sandbox's limits and isolation are in findmax-sandbox.test.ts.
import { existsSync, rmSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { EnvError, type StepResult } from "../../src/contracts/env.js";
import { findmaxEnv, findmaxTask, type FindmaxEnv } from "../../src/envs/worlds/findmax/index.js";
import { FUNCTION_IDS, type FunctionId, type Task } from "../../src/envs/worlds/findmax/tasks.js";
import { envKinds } from "../../src/envs/registry.js";
import { splitTasks } from "../../src/plan/splits.js";
import { examplesDir, lower } from "../plan/support.js";
import { makeEnv, open, episode, step } from "../helpers/findmax.js";

const ALL = makeEnv({ functions: [...FUNCTION_IDS], tasks: 2000 });

const signature = (t: Task) => JSON.stringify([t.buggy, t.visible, t.hidden]);

/** Runs `fn`'s source on `args` in this process: our own generated code only. */
function evaluate(task: Task, source: string, args: readonly unknown[]): unknown {
  // eslint-disable-next-line @typescript-eslint/no-implied-eval -- running the generated reference solution is the test
  const f = new Function(`"use strict";\n${source}\nreturn ${task.name};`)() as (...a: unknown[]) => unknown;
  try {
    return f(...args.map((a) => (Array.isArray(a) ? [...a] : a)));
  } catch (e) {
    return `threw ${String(e)}`;
  }
}

const passes = (task: Task, source: string, t: Task["hidden"][number]) =>
  JSON.stringify(evaluate(task, source, t.args)) === JSON.stringify(t.expected);

describe("findmax tasks", () => {
  it("is registered as a built-in env kind", () => {
    expect(envKinds.get("findmax")).toBe(findmaxEnv);
  });

  it("is deterministic: the same id and version give the same problem, the vocabulary is a fixed sorted list", () => {
    for (const id of [0, 1, 7, 123, 1999]) expect(findmaxTask(ALL, id)).toEqual(findmaxTask(ALL, id));
    const v1 = findmaxEnv.vocabulary(ALL);
    expect(findmaxEnv.vocabulary(ALL)).toEqual(v1);
    expect([...v1].sort()).toEqual(v1);
    expect(new Set(v1).size).toBe(v1.length);
    // JavaScript keywords and punctuation of the sources, the tools, the function names.
    for (const w of [
      "function",
      "let",
      "const",
      "for",
      "of",
      "while",
      "if",
      "return",
      "{",
      "}",
      "(",
      ")",
      "[",
      "]",
      ";",
      ",",
      ".",
      "=",
      "<",
      ">",
      "<=",
      "++",
      "--",
      "+=",
      "-",
      "===",
      "run_tests",
      "read_code",
      "write_code",
      "finish",
      "code",
      "findMax",
      "findMin",
      "sum",
      "indexOf",
      "countIf",
      "reverse",
      "best",
      "arr",
      "length",
      "slice",
      "push",
      "PASS",
      "FAIL",
      "expected",
      "got",
    ])
      expect(v1, w).toContain(w);
    // A plan's functions narrow the vocabulary.
    expect(findmaxEnv.vocabulary(makeEnv({ functions: ["find_max"] }))).not.toContain("countIf");
    // Another version is another task set (task 0 stays the seed's example).
    const v2 = makeEnv({ functions: [...FUNCTION_IDS], tasks: 2000, version: "2" });
    const differing = [1, 2, 3, 4, 5, 6, 7, 8].filter(
      (id) => signature(findmaxTask(v2, id)) !== signature(findmaxTask(ALL, id)),
    );
    expect(differing.length).toBe(8);
  });

  it("gives every task id its own problem, and the train and test splits different problems", () => {
    const seen = new Map<string, number>();
    for (let id = 0; id < ALL.tasks; id++) {
      const s = signature(findmaxTask(ALL, id));
      expect(seen.get(s), `task ${id} repeats task ${seen.get(s)}`).toBeUndefined();
      seen.set(s, id);
    }
    // The shipped task set: 400 tasks, four functions. Most ids even differ in their code.
    const env = makeEnv();
    const sources = new Set(Array.from({ length: env.tasks }, (_, id) => findmaxTask(env, id).buggy));
    expect(sources.size).toBeGreaterThan(350);
    const train = splitTasks("code", env, "train").map((id) => signature(findmaxTask(env, id)));
    const test = splitTasks("code", env, "test").map((id) => signature(findmaxTask(env, id)));
    expect(train.length).toBe(320);
    expect(test.length).toBe(80);
    expect(train.filter((s) => test.includes(s))).toEqual([]);
    // Every function and bug class appears in the test split.
    const kinds = new Set(
      splitTasks("code", env, "test").map((id) => `${findmaxTask(env, id).fn}/${findmaxTask(env, id).bug}`),
    );
    expect(kinds.size).toBe(12);
  });

  it("task 0 is the seed's findMax example: best = 0, tests [3, 1, 2] -> 3, [-2, -5, -8] -> -2, [0] -> 0", () => {
    const t = findmaxTask(makeEnv(), 0);
    expect(t.fn).toBe("find_max");
    expect(t.bug).toBe("zero_init");
    expect(t.buggy).toContain("let best = 0;");
    expect(t.buggy).toContain("function findMax(arr) {");
    expect(t.visible).toEqual([
      { args: [[3, 1, 2]], expected: 3 },
      { args: [[-2, -5, -8]], expected: -2 },
      { args: [[0]], expected: 0 },
    ]);
    expect(t.fixed).toContain("let best = arr[0];");
    // The hidden tests are unlike the visible ones: longer arrays or large values.
    for (const h of t.hidden)
      expect((h.args[0] as number[]).length > 4 || Math.abs((h.args[0] as number[])[0]!) > 9).toBe(true);
  });

  it("each seeded bug fails some visible and some hidden test, and each fix passes them all (600 tasks, in process)", () => {
    const bugs = new Map<FunctionId, Set<string>>();
    for (let id = 0; id < 600; id++) {
      const t = findmaxTask(ALL, id);
      bugs.set(t.fn, (bugs.get(t.fn) ?? new Set()).add(t.bug));
      expect(t.visible).toHaveLength(3);
      expect(t.hidden).toHaveLength(8);
      expect(
        t.visible.some((c) => !passes(t, t.buggy, c)),
        `task ${id}: a visible test fails`,
      ).toBe(true);
      expect(
        t.hidden.some((c) => !passes(t, t.buggy, c)),
        `task ${id}: a hidden test fails`,
      ).toBe(true);
      for (const c of [...t.visible, ...t.hidden])
        expect(passes(t, t.fixed, c), `task ${id}: the fix passes ${JSON.stringify(c)}`).toBe(true);
      // The fix is a small edit of the buggy code.
      const a = t.buggy.split("\n");
      const b = t.fixed.split("\n");
      expect(a.length).toBe(b.length);
      expect(a.filter((l, i) => l !== b[i]).length).toBeLessThanOrEqual(2);
      // Hidden inputs are never visible inputs.
      const visible = new Set(t.visible.map((c) => JSON.stringify(c.args)));
      for (const h of t.hidden) expect(visible.has(JSON.stringify(h.args))).toBe(false);
    }
    expect(Object.fromEntries([...bugs].map(([fn, s]) => [fn, [...s].sort()]))).toEqual({
      find_max: ["skip_last", "wrong_compare", "zero_init"],
      find_min: ["skip_last", "wrong_compare", "zero_init"],
      sum: ["skip_first", "skip_last", "start_one"],
      index_of: ["last_match", "not_found_zero", "off_by_one"],
      count_if: ["less_or_equal", "skip_first", "skip_last"],
      reverse: ["drop_first", "drop_last", "skip_middle"],
    });
  });
});

describe("findmax episodes", () => {
  it("the seed's example: run_tests shows the failure, the walkthrough fixes it and passes the hidden tests", async () => {
    const env = makeEnv();
    await episode(env, 0, async (inst) => {
      const first = await inst.reset();
      expect(first.text).toContain("findMax");
      expect(first.signals).toEqual({ test_runs: 0, visible_pass_fraction: 0 });
      expect((await step(inst, "read_code")).text).toContain("let best = 0;");
      const run = await step(inst, "run_tests");
      expect(run.text.split("\n")).toEqual([
        "2 of 3 tests pass.",
        "PASS findMax([3, 1, 2]) = 3",
        "FAIL findMax([-2, -5, -8]): expected -2, got 0",
        "PASS findMax([0]) = 0",
      ]);
      expect(run.signals).toEqual({ test_runs: 1, visible_pass_fraction: 2 / 3 });
      expect(run.terminated).toBe(false);
      const buggy = await inst.outcome();
      expect(buggy.tests_passed).toBe(false);
      expect(buggy.success).toBe(false);
      expect(buggy.pass_fraction).toBeLessThan(1);

      const calls = (await findmaxEnv.walkthrough!(env, 0))!;
      expect(calls.map((c) => c.name)).toEqual(["read_code", "write_code", "run_tests", "finish"]);
      let last: StepResult | undefined;
      for (const c of calls) last = await inst.step(c);
      expect(last!.terminated).toBe(true);
      expect(last!.signals).toEqual({ test_runs: 2, visible_pass_fraction: 1 });
      expect(await inst.outcome()).toEqual({ tests_passed: true, pass_fraction: 1, success: true });
    });
  });

  it("for tasks of every function and bug, the original fails a hidden test and the walkthrough passes them all", async () => {
    const F = ALL.functions.length;
    // Ids f + F*b are function f's bug b; + 6F*k another way of writing it.
    const ids = FUNCTION_IDS.flatMap((_, f) => [0, 1, 2].map((b) => f + F * b + 6 * F * (f % 2)));
    const check = async (id: number) =>
      episode(ALL, id, async (inst) => {
        const buggy = await inst.outcome();
        const visible = await step(inst, "run_tests");
        for (const c of (await findmaxEnv.walkthrough!(ALL, id))!) await inst.step(c);
        const fixed = await inst.outcome();
        return { id, buggy, visible: visible.signals.visible_pass_fraction, fixed };
      });
    const results = [];
    for (let i = 0; i < ids.length; i += 6) results.push(...(await Promise.all(ids.slice(i, i + 6).map(check))));
    for (const r of results) {
      expect(r.buggy.tests_passed, `task ${r.id}`).toBe(false);
      expect(r.buggy.pass_fraction as number, `task ${r.id}`).toBeLessThan(1);
      expect(r.visible as number, `task ${r.id}`).toBeLessThan(1);
      expect(r.fixed, `task ${r.id}`).toEqual({ tests_passed: true, pass_fraction: 1, success: true });
    }
    expect(new Set(results.map((r) => findmaxTask(ALL, r.id).fn)).size).toBe(6);
  });

  it("bad tool calls are error observations, never exceptions; after finish the episode has ended", async () => {
    await episode(makeEnv(), 0, async (inst) => {
      const original = (await step(inst, "read_code")).text;
      for (const args of [{}, { code: 42 }, { code: null }, { text: "function findMax() {}" }]) {
        const r = await step(inst, "write_code", args);
        expect(r.text).toMatch(/^error: write_code needs the argument "code"/);
        expect(r.terminated).toBe(false);
      }
      expect((await step(inst, "read_code")).text).toBe(original);
      expect((await step(inst, "write_code", { code: "x".repeat(20_001) })).text).toMatch(/^error: the code is longer/);
      const unknown = await step(inst, "rm_rf");
      expect(unknown.text).toBe('error: unknown tool "rm_rf"; the tools are run_tests, read_code, write_code, finish');
      expect(unknown.terminated).toBe(false);
      expect((await inst.step({ name: undefined, arguments: undefined } as never)).text).toMatch(
        /^error: unknown tool/,
      );
      const fin = await step(inst, "finish");
      expect(fin).toMatchObject({ terminated: true });
      expect(await step(inst, "run_tests")).toMatchObject({
        text: "error: the episode has ended (finish was called)",
        terminated: true,
      });
    });
  });

  it("close() removes the scratch folder; a broken sandbox (runner gone) is an EnvError, not a failed test", async () => {
    const inst = await open(makeEnv(), 0);
    const dir = inst.scratch;
    expect(existsSync(path.join(dir, "runner.mjs"))).toBe(true);
    await step(inst, "run_tests");
    await inst.close();
    expect(existsSync(dir)).toBe(false);

    const broken = await open(makeEnv(), 0);
    rmSync(broken.scratch, { recursive: true, force: true });
    await expect(step(broken, "run_tests")).rejects.toBeInstanceOf(EnvError);
    await broken.close();
  });

  it("runs the shipped example's env (lowered from findmax.arl)", async () => {
    const plan = lower(path.join(examplesDir, "findmax.arl"))[0]!.plan;
    const env = plan.envs.code as FindmaxEnv;
    expect(env.kind).toBe("findmax");
    const kind = envKinds.get(env.kind)!;
    const inst = await kind.create(env, 0, plan.seed);
    try {
      expect((await inst.reset()).text).toContain("findMax");
      expect((await inst.step({ name: "run_tests", arguments: {} })).text).toContain(
        "FAIL findMax([-2, -5, -8]): expected -2, got 0",
      );
    } finally {
      await inst.close();
    }
  });
});
