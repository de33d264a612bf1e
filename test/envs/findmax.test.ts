// The built-in findmax env: tasks by id (deterministic, distinct, split by task), the seed's
// findMax example, walkthroughs that pass the hidden tests, seeded bugs that fail them, the
// sandbox's limits and isolation, bad tool calls, and cleanup.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { EnvError, type EnvInstance, type StepResult } from "../../src/contracts/env.js";
import { findmaxEnv, findmaxTask, type FindmaxEnv, type FindmaxInstance } from "../../src/envs/worlds/findmax/index.js";
import type { SandboxSwitch } from "../../src/envs/worlds/findmax/isolation.js";
import { Sandbox, sandboxLayers } from "../../src/envs/worlds/findmax/sandbox.js";
import { FUNCTION_IDS, type FunctionId, type Task } from "../../src/envs/worlds/findmax/tasks.js";
import { envKinds } from "../../src/envs/registry.js";
import { splitTasks } from "../../src/plan/splits.js";
import { examplesDir, lower } from "../plan/support.js";

function makeEnv(overrides: Partial<FindmaxEnv> = {}): FindmaxEnv {
  return {
    kind: "findmax",
    description: null,
    version: "1",
    tasks: 400,
    split: { train: 0.8, valid: 0, test: 0.2 },
    weight: 1,
    signals: {},
    optimal_steps: 3,
    budget_is_task_rule: false,
    reward_range: [0, 1],
    functions: ["find_max", "find_min", "sum", "index_of"],
    visible_tests: 3,
    hidden_tests: 8,
    time_limit_ms: 2000,
    memory_limit_mb: 128,
    require_namespaces: true,
    ...overrides,
  };
}

const ALL = makeEnv({ functions: [...FUNCTION_IDS], tasks: 2000 });
const signature = (t: Task) => JSON.stringify([t.buggy, t.visible, t.hidden]);

async function open(env: FindmaxEnv, task: number): Promise<FindmaxInstance> {
  const inst = (await findmaxEnv.create(env, task, 0)) as FindmaxInstance;
  await inst.reset();
  return inst;
}

/** Opens an episode, runs `body`, always closes it. */
async function episode<T>(env: FindmaxEnv, task: number, body: (inst: FindmaxInstance) => Promise<T>): Promise<T> {
  const inst = await open(env, task);
  try {
    return await body(inst);
  } finally {
    await inst.close();
  }
}

const step = (inst: EnvInstance, name: string, args: Record<string, unknown> = {}): Promise<StepResult> =>
  inst.step({ name, arguments: args });

/** Writes `code` as findMax's source and runs the visible tests. */
async function runCode(inst: EnvInstance, code: string): Promise<string> {
  await step(inst, "write_code", { code });
  return (await step(inst, "run_tests")).text;
}

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

describe("findmax sandbox", () => {
  const fast = makeEnv({ time_limit_ms: 300, memory_limit_mb: 64 });

  it("stops an infinite loop (in the function, at load, in microtasks) within the time limit", async () => {
    await episode(fast, 0, async (inst) => {
      let t0 = performance.now();
      const loop = await runCode(inst, "function findMax(arr) {\n  while (true) {}\n}\n");
      const perTest = (performance.now() - t0) / 3;
      expect(loop.split("\n")[0]).toBe("0 of 3 tests pass.");
      expect(loop.match(/time limit exceeded \(300 ms\)/g)).toHaveLength(3);
      // ~300 ms a test (the vm's watchdog) plus a share of the process start (slow on a loaded machine).
      expect(perTest).toBeLessThan(300 + 1500);

      t0 = performance.now();
      const top = await runCode(inst, "for (;;) {}\nfunction findMax(arr) { return arr[0]; }\n");
      expect(top).toBe("0 of 3 tests pass. The code did not load: time limit exceeded (300 ms) while loading the code");
      expect(performance.now() - t0).toBeLessThan(300 + 4000);

      const micro = await runCode(
        inst,
        "function findMax(arr) {\n  const go = () => Promise.resolve().then(go);\n  go();\n  return 3;\n}\n",
      );
      // An endless promise chain also allocates: whichever limit it reaches first stops it.
      expect(micro).toMatch(/time limit exceeded \(300 ms\)|memory limit exceeded \(64 MB\)/);

      const hidden = await inst.outcome();
      expect(hidden).toEqual({ tests_passed: false, pass_fraction: 0, success: false });
      // The env still works afterwards.
      expect(await runCode(inst, "function findMax(arr) { return Math.max(...arr); }")).toMatch(/^3 of 3 tests pass\./);
    });
  });

  it("stops a memory hog; memory outside the heap is capped where the OS allows it", async () => {
    const layers = await sandboxLayers();
    // A long time limit, so that the memory limit is what stops it.
    await episode(makeEnv({ time_limit_ms: 20_000, memory_limit_mb: 64 }), 0, async (inst) => {
      const hog = await runCode(
        inst,
        "function findMax(arr) {\n  const xs = [];\n  while (true) xs.push(new Array(100000).fill(1.5));\n}\n",
      );
      expect(hog.split("\n")[0]).toBe("0 of 3 tests pass.");
      expect(hog.match(/memory limit exceeded \(64 MB\)/g)).toHaveLength(3);

      const buffer = await runCode(
        inst,
        "function findMax(arr) {\n  const b = new Uint8Array(2 ** 31);\n  b.fill(1);\n  return arr[0];\n}\n",
      );
      expect(buffer.split("\n")[0]).toMatch(/^[0-3] of 3 tests pass\.$/);
      if (layers.dataLimit) expect(buffer).toContain("RangeError: Array buffer allocation failed");
      // Deep recursion is an ordinary exception.
      expect(await runCode(inst, "function findMax(arr) { return findMax(arr); }")).toContain(
        "error: RangeError: Maximum call stack size exceeded",
      );
    });
  });

  it("gives the code no require, process, fetch, import, console or eval; exceptions and syntax errors are failed runs with a message", async () => {
    await episode(fast, 0, async (inst) => {
      expect(await runCode(inst, "function findMax(arr) {\n  const fs = require('fs');\n  return 1;\n}\n")).toContain(
        "FAIL findMax([3, 1, 2]): expected 3, error: ReferenceError: require is not defined",
      );
      expect(await runCode(inst, "function findMax(arr) {\n  process.exit(0);\n}\n")).toContain(
        "error: ReferenceError: process is not defined",
      );
      expect(
        await runCode(inst, "function findMax(arr) {\n  fetch('http://127.0.0.1:9/');\n  return arr[0];\n}\n"),
      ).toContain("error: ReferenceError: fetch is not defined");
      expect(await runCode(inst, "function findMax(arr) {\n  import('node:fs');\n  return 3;\n}\n")).toBe(
        "0 of 3 tests pass. The code did not load: import is not available to the code",
      );
      const globals = await runCode(
        inst,
        "function findMax(arr) {\n  const t = { require: typeof require, process: typeof process, fetch: typeof fetch, console: typeof console, WebAssembly: typeof WebAssembly, SharedArrayBuffer: typeof SharedArrayBuffer, Atomics: typeof Atomics, module: typeof module, Buffer: typeof Buffer, setTimeout: typeof setTimeout, XMLHttpRequest: typeof XMLHttpRequest };\n  const found = Object.keys(t).filter((k) => t[k] !== 'undefined');\n  return found.length ? found.join(' ') : 'none';\n}\n",
      );
      expect(globals).toContain('FAIL findMax([3, 1, 2]): expected 3, got "none"');
      expect(await runCode(inst, "function findMax(arr) {\n  return eval('arr[0]');\n}\n")).toContain(
        "error: EvalError: Code generation from strings disallowed for this context",
      );
      expect(await runCode(inst, "function findMax(arr) {\n  return Function('return 1')();\n}\n")).toContain(
        "error: EvalError",
      );

      const syntax = await runCode(inst, "function findMax(arr) {\n  let best = ;\n  return best;\n}\n");
      expect(syntax).toBe("0 of 3 tests pass. The code did not load: SyntaxError: Unexpected token ';' (line 2)");
      expect(await runCode(inst, "function findMax(arr) {\n  throw new TypeError('no');\n}\n")).toContain(
        "FAIL findMax([0]): expected 0, error: TypeError: no",
      );
      expect(
        await runCode(inst, "function findMax(arr) {\n  throw { toString() { while (true) {} } };\n}\n"),
      ).toContain("error: time limit exceeded (300 ms)");
      expect(await runCode(inst, "function findMin(arr) { return 0; }")).toBe(
        "0 of 3 tests pass. The code did not load: the code does not define a function named findMax",
      );
      expect(await runCode(inst, "throw new Error('top');")).toBe(
        "0 of 3 tests pass. The code did not load: the code threw while loading: Error: top",
      );
      // Odd return values are shown, not crashes.
      expect(await runCode(inst, "function findMax(arr) { return [undefined, NaN, 1n, {}, () => 1]; }")).toContain(
        "got [undefined, NaN, 1n, an object, a function]",
      );
      // An arrow function bound with const counts as the function.
      expect(await runCode(inst, "const findMax = (arr) => arr.reduce((a, b) => (b > a ? b : a));\n")).toMatch(
        /^3 of 3 tests pass\./,
      );
    });
  });

  it("cannot read a file outside its scratch folder by any route we know of", async () => {
    // Each route is one candidate: findMax returns "=" and what it got, or "!" and the error's name.
    const routes: Record<string, string> = {
      require: 'require("fs").readFileSync("/etc/passwd", "utf8")',
      binding: 'process.binding("fs")',
      mainModule: 'process.mainModule.require("fs").readFileSync("/etc/passwd", "utf8")',
      globalCtor:
        'globalThis.constructor.constructor("return process")().mainModule.require("fs").readFileSync("/etc/passwd", "utf8")',
      argCtor: 'arr.constructor.constructor("return process")()',
      asyncCtor: '(async function () {}).constructor("return process")()',
      eval: 'eval("process")',
      // The word import anywhere in the source is refused before the code runs; built at run time
      // it needs eval, which the context forbids.
      importCall: '(0, eval)("imp" + "ort(\'fs\')")',
      callsites: `(() => {
    Error.prepareStackTrace = (e, sites) => sites;
    const sites = new Error("x").stack;
    Error.prepareStackTrace = undefined;
    for (const s of sites) {
      const t = s.getThis();
      const fn = s.getFunction();
      for (const F of [t && t.constructor && t.constructor.constructor, fn && fn.constructor]) {
        if (typeof F === "function") {
          const p = F("return process")();
          if (p) return p.mainModule.require("fs").readFileSync("/etc/passwd", "utf8");
        }
      }
    }
    return "no host frames";
  })()`,
      caller: "String(findMax.caller)",
      wasm: "new WebAssembly.Module(new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0]))",
      fetch: 'fetch("file:///etc/passwd")',
      thisGlobal:
        'Object.getOwnPropertyNames(globalThis).filter((k) => /process|require|fetch|fs/.test(k)).join(",") || "none"',
    };
    const got: Record<string, string> = {};
    await episode(fast, 0, async (inst) => {
      for (const [label, expr] of Object.entries(routes)) {
        const code = `function findMax(arr) {\n  try {\n    const v = ${expr};\n    return "=" + (typeof v === "string" ? v.slice(0, 30) : typeof v);\n  } catch (e) {\n    return "!" + (e && e.name);\n  }\n}\n`;
        const text = await runCode(inst, code);
        expect(text).not.toContain("root:");
        got[label] = /FAIL findMax\(\[3, 1, 2\]\): expected 3, got "([^"]*)"/.exec(text)?.[1] ?? text;
      }
    });
    expect(got).toEqual({
      require: "!ReferenceError",
      binding: "!ReferenceError",
      mainModule: "!ReferenceError",
      globalCtor: expect.stringMatching(/^!(TypeError|EvalError)$/),
      argCtor: "!EvalError",
      asyncCtor: "!EvalError",
      eval: "!EvalError",
      importCall: "!EvalError",
      callsites: expect.stringMatching(/^(=no host frames|!EvalError|!TypeError)$/),
      caller: expect.stringMatching(/^(=null|!TypeError)$/),
      wasm: "!ReferenceError",
      fetch: "!ReferenceError",
      thisGlobal: "=none",
    });
  });

  it("even code that escaped the vm context could not read outside the scratch folder, start processes, reach the network or see our environment", async () => {
    const layers = await sandboxLayers();
    const sandbox = await Sandbox.create({ timeLimitMs: 1000, memoryLimitMb: 64 });
    try {
      const script = String.raw`import fs from "node:fs";
import cp from "node:child_process";
import net from "node:net";
const r = {};
const t = (k, f) => { try { r[k] = String(f()).slice(0, 300); } catch (e) { r[k] = "!" + (e.code || e.name); } };
t("passwd", () => fs.readFileSync("/etc/passwd", "utf8"));
t("parent", () => fs.readdirSync(".."));
t("own", () => fs.readdirSync(".").join(","));
t("write", () => fs.writeFileSync("x.txt", "x"));
t("spawn", () => cp.execFileSync("/bin/cat", ["/etc/passwd"]));
t("env", () => Object.keys(process.env).filter((k) => k !== "PWD").length);
t("cwd", () => process.cwd());
r.permission = typeof process.permission === "object";
const s = net.connect({ host: "1.1.1.1", port: 80 });
const done = (v) => { r.net = v; process.stdout.write(JSON.stringify(r)); process.exit(0); };
s.on("connect", () => done("connected"));
s.on("error", (e) => done("!" + e.code));
setTimeout(() => done("timeout"), 3000);
`;
      const out = await sandbox.probe(script);
      const r = JSON.parse(out.stdout) as Record<string, unknown>;
      expect(r.env).toBe("0");
      expect(r.own).toContain("probe.mjs");
      expect(r.cwd).toBe(sandbox.dir);
      if (layers.permission) {
        expect(r.permission).toBe(true);
        expect(r.passwd).toBe("!ERR_ACCESS_DENIED");
        expect(r.parent).toBe("!ERR_ACCESS_DENIED");
        expect(r.write).toBe("!ERR_ACCESS_DENIED");
        expect(r.spawn).toBe("!ERR_ACCESS_DENIED");
      }
      // Without a network namespace (and Node 20 has no network permission) only the vm layer
      // keeps the code off the network.
      if (layers.networkNamespace) expect(r.net).toMatch(/^!(ENETUNREACH|EHOSTUNREACH|ECONNREFUSED)$/);
    } finally {
      await sandbox.close();
    }
    expect(existsSync(sandbox.dir)).toBe(false);
  });

  it("even code that escaped the vm context cannot reach a unix socket by path or signal a process outside (mount and PID namespaces, from bubblewrap or else unshare)", async () => {
    const layers = await sandboxLayers();
    const outside = mkdtempSync(path.join(os.tmpdir(), "arl-outside-"));
    const socketPath = path.join(outside, "listening.sock");
    let accepted = 0;
    const server = net.createServer((c) => {
      accepted++;
      c.end("hello from outside");
    });
    await new Promise<void>((resolve) => server.listen(socketPath, resolve));
    const victim = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60000)"], { stdio: "ignore" });
    const escape = (signal: number | string) => String.raw`import net from "node:net";
const r = {};
try { process.kill(${victim.pid}, ${JSON.stringify(signal)}); r.kill = "sent"; } catch (e) { r.kill = "!" + e.code; }
const s = net.connect(${JSON.stringify(socketPath)});
const done = (v) => { r.socket = v; process.stdout.write(JSON.stringify(r)); process.exit(0); };
s.on("data", (d) => done("read " + d));
s.on("error", (e) => done("!" + e.code));
setTimeout(() => done("timeout"), 3000);
`;
    const run = async (without: readonly SandboxSwitch[], signal: number | string) => {
      const sandbox = await Sandbox.create({ timeLimitMs: 1000, memoryLimitMb: 64 }, without);
      try {
        return JSON.parse((await sandbox.probe(escape(signal))).stdout) as { kill: string; socket: string };
      } finally {
        await sandbox.close();
      }
    };
    // Where this machine can make user, mount and PID namespaces, unshare closes the holes
    // without bubblewrap; where bubblewrap works, it closes them itself.
    const unshareWorks = spawnSync("unshare", ["-r", "-m", "-p", "-f", "--mount-proc", "true"]).status === 0;
    const tools: (readonly SandboxSwitch[])[] = [
      ...(unshareWorks ? [["bwrap"] as const] : []),
      ...(layers.namespaces ? [[] as const] : []),
    ];
    try {
      // Without the layer the holes are real (signal 0 only asks whether the process is there).
      const open = await run(["namespaces"], 0);
      expect(open).toEqual({ kill: "sent", socket: "read hello from outside" });
      if (unshareWorks) expect(layers.namespaces).toBe(true);
      if (tools.length === 0)
        console.warn(
          "findmax sandbox: neither bubblewrap nor unshare can make namespaces here: code that escapes the vm context could reach unix sockets by path and signal processes outside",
        );
      for (const without of tools) {
        const before = accepted;
        const closed = await run(without, "SIGKILL");
        expect(closed.kill, `without ${without.join()}`).toBe("!ESRCH");
        expect(closed.socket, `without ${without.join()}`).toMatch(/^!(ENOENT|EACCES|ECONNREFUSED)$/);
        expect(accepted).toBe(before);
        expect(victim.exitCode).toBeNull();
        expect(victim.signalCode).toBeNull();
      }
    } finally {
      victim.kill("SIGKILL");
      server.close();
      rmSync(outside, { recursive: true, force: true });
    }
  });

  it("falls back cleanly without the permission model, the network namespace and the rlimit: the vm layer still holds", async () => {
    const sandbox = await Sandbox.create({ timeLimitMs: 500, memoryLimitMb: 64 }, [
      "permission",
      "networkNamespace",
      "dataLimit",
      "namespaces",
    ]);
    try {
      const probe = await sandbox.probe('process.stdout.write(String(typeof process.permission === "object"));');
      expect(probe.stdout).toBe("false");
      const ok = await sandbox.run("f", "function f(a) { return a.length; }", [[[1, 2, 3]], [[]]]);
      expect(ok).toEqual({
        results: [
          { ok: true, value: 3 },
          { ok: true, value: 0 },
        ],
      });
      const escape = await sandbox.run(
        "f",
        'function f(a) { try { return a.constructor.constructor("return process")().pid; } catch (e) { return e.name; } }',
        [[[1]]],
      );
      expect(escape).toEqual({ results: [{ ok: true, value: "EvalError" }] });
      const loop = await sandbox.run("f", "function f(a) { for (;;) {} }", [[[1]]]);
      expect(loop).toEqual({ results: [{ ok: false, error: "time limit exceeded (500 ms)" }] });
    } finally {
      await sandbox.close();
    }
  });

  it("gives each test a fresh context: no state or patched prototype survives from one test to the next", async () => {
    const sandbox = await Sandbox.create({ timeLimitMs: 1000, memoryLimitMb: 64 });
    try {
      const counter = await sandbox.run("f", "let calls = 0;\nfunction f(a) { calls += 1; return calls; }", [
        [[1]],
        [[2]],
        [[3]],
      ]);
      expect(counter).toEqual({ results: [1, 1, 1].map((value) => ({ ok: true, value })) });
      const remembers = await sandbox.run(
        "f",
        "function f(a) { const seen = Array.prototype.__seen || []; seen.push(a[0]); Array.prototype.__seen = seen; Object.prototype.hacked = true; return seen.length + ':' + ({}).hacked; }",
        [[[1]], [[2]]],
      );
      expect(remembers).toEqual({
        results: [
          { ok: true, value: "1:true" },
          { ok: true, value: "1:true" },
        ],
      });
      // globalThis too.
      const global = await sandbox.run(
        "f",
        "function f(a) { const before = globalThis.previous; globalThis.previous = a[0]; return before === undefined ? 'fresh' : 'saw ' + before; }",
        [[[1]], [[2]]],
      );
      expect(global).toEqual({
        results: [
          { ok: true, value: "fresh" },
          { ok: true, value: "fresh" },
        ],
      });
    } finally {
      await sandbox.close();
    }
  });

  it("reports which isolation layers this machine has (Node 20.20 on Linux: all of them)", async () => {
    const layers = await sandboxLayers();
    expect(Object.keys(layers).sort()).toEqual(["dataLimit", "namespaces", "networkNamespace", "permission"]);
    if (process.platform === "linux" && /^v20\./.test(process.version))
      expect(layers.permission).toBe("--experimental-permission");
  });
});
