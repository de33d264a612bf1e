// The built-in `findmax` env: repair a function with a seeded bug (tasks.ts) so that every test
// passes. Tools: read_code (the current source), write_code {code} (replace it), run_tests (the
// visible tests: pass/fail with expected vs actual), finish (submit; the episode ends). The code
// runs in a separate, limited process (sandbox.ts). State signals: test_runs,
// visible_pass_fraction (after the last run). Outcome signals, from the hidden tests run on the
// final code when outcome() is read: tests_passed, pass_fraction, success (= tests_passed).
import type { EnvInstance, EnvKind, Observation, Signals, StepResult } from "../../../contracts/env.js";
import type { ToolCall } from "../../../contracts/tool-calls.js";
import type { PlanEnv } from "../../../plan/schema.js";
import { maxSourceChars, Sandbox, sandboxLayers, type RunResult } from "./sandbox.js";
import {
  allSources,
  FUNCTION_IDS,
  functionSpec,
  generateTask,
  type Expected,
  type FunctionId,
  type Task,
  type TestCase,
} from "./tasks.js";

export type FindmaxEnv = Extract<PlanEnv, { kind: "findmax" }>;

const TOOLS = ["run_tests", "read_code", "write_code", "finish"] as const;
const FILE = "solution.js";

// --- observation text -------------------------------------------------------------------------

function intro(task: Pick<Task, "name" | "signature" | "description">): string {
  return `Check the failing tests of the function ${task.name} in ${FILE} and fix its code so that every test passes. ${task.signature} should ${task.description}. Call finish when you are done.`;
}

/** A value as the runner encodes it (see runner.ts), shown as JavaScript would write it. */
function show(v: unknown, depth = 0): string {
  if (typeof v === "number") return Object.is(v, -0) ? "0" : String(v);
  if (typeof v === "string") return JSON.stringify(v);
  if (typeof v === "boolean" || v === null) return String(v);
  if (Array.isArray(v)) return depth > 3 ? "[...]" : `[${v.map((x) => show(x, depth + 1)).join(", ")}]`;
  if (typeof v === "object") {
    const o = v as { $?: unknown; text?: unknown; length?: unknown };
    switch (o.$) {
      case "undefined":
      case "NaN":
      case "Infinity":
      case "-Infinity":
        return o.$;
      case "bigint":
        return `${String(o.text)}n`;
      case "string":
        return `${JSON.stringify(String(o.text))}...`;
      case "array":
        return typeof o.length === "number" ? `an array of ${o.length} elements` : "a nested array";
      case "symbol":
        return "a symbol";
      case "function":
        return "a function";
      default:
        return "an object";
    }
  }
  return "an unreadable value";
}

function clip(s: string, n = 160): string {
  return s.length > n ? `${s.slice(0, n - 3)}...` : s;
}

const call = (task: Task, t: TestCase) => clip(`${task.name}(${t.args.map((a) => show(a)).join(", ")})`, 120);
const encodeExpected = (e: Expected) => JSON.stringify(e);

interface Graded {
  readonly passed: number;
  readonly total: number;
  readonly lines: readonly string[];
  readonly loadError?: string;
}

function grade(task: Task, tests: readonly TestCase[], run: RunResult): Graded {
  if (run.loadError !== undefined) return { passed: 0, total: tests.length, lines: [], loadError: run.loadError };
  let passed = 0;
  const lines = tests.map((t, i) => {
    const r = run.results[i] ?? { ok: false as const, error: "not run" };
    if (r.ok && JSON.stringify(r.value) === encodeExpected(t.expected)) {
      passed++;
      return `PASS ${call(task, t)} = ${clip(show(t.expected), 80)}`;
    }
    const got = r.ok ? `got ${clip(show(r.value), 80)}` : `error: ${clip(r.error, 200)}`;
    return `FAIL ${call(task, t)}: expected ${clip(show(t.expected), 80)}, ${got}`;
  });
  return { passed, total: tests.length, lines };
}

function report(g: Graded): string {
  const head = `${g.passed} of ${g.total} tests pass.`;
  if (g.loadError !== undefined) return `${head} The code did not load: ${clip(g.loadError, 300)}`;
  return [head, ...g.lines].join("\n");
}

const messages = {
  saved: (lines: number) => `Saved ${FILE} (${lines} lines).`,
  noCode: 'error: write_code needs the argument "code", a string with the complete new source',
  tooLong: `error: the code is longer than ${maxSourceChars} characters`,
  submitted: "Submitted; the hidden tests decide the outcome.",
  ended: "error: the episode has ended (finish was called)",
  unknown: (name: string) => `error: unknown tool ${JSON.stringify(clip(name, 40))}; the tools are ${TOOLS.join(", ")}`,
};

// --- the instance -----------------------------------------------------------------------------

export class FindmaxInstance implements EnvInstance {
  private code: string;
  private testRuns = 0;
  private visibleFraction = 0;
  private finished = false;
  private graded: { readonly code: string; readonly signals: Signals } | undefined;

  constructor(
    private readonly task: Task,
    private readonly sandbox: Sandbox,
  ) {
    this.code = task.buggy;
  }

  /** The scratch folder the code runs in (removed by close). */
  get scratch(): string {
    return this.sandbox.dir;
  }

  private signals(): Signals {
    return { test_runs: this.testRuns, visible_pass_fraction: this.visibleFraction };
  }

  private result(text: string, terminated = false): StepResult {
    return { text, signals: this.signals(), terminated };
  }

  async reset(): Promise<Observation> {
    this.code = this.task.buggy;
    this.testRuns = 0;
    this.visibleFraction = 0;
    this.finished = false;
    this.graded = undefined;
    return { text: intro(this.task), signals: this.signals() };
  }

  async step(toolCall: ToolCall): Promise<StepResult> {
    if (this.finished) return this.result(messages.ended, true);
    const name = typeof toolCall?.name === "string" ? toolCall.name : "";
    const args: Record<string, unknown> =
      toolCall && typeof toolCall.arguments === "object" && toolCall.arguments !== null ? toolCall.arguments : {};
    switch (name) {
      case "read_code":
        return this.result(this.code);
      case "write_code": {
        const code = args.code;
        if (typeof code !== "string") return this.result(messages.noCode);
        if (code.length > maxSourceChars) return this.result(messages.tooLong);
        this.code = code;
        return this.result(
          messages.saved(code.split("\n").filter((l, i, all) => l !== "" || i < all.length - 1).length),
        );
      }
      case "run_tests": {
        const run = await this.sandbox.run(
          this.task.name,
          this.code,
          this.task.visible.map((t) => t.args),
        );
        const g = grade(this.task, this.task.visible, run);
        this.testRuns++;
        this.visibleFraction = g.total === 0 ? 0 : g.passed / g.total;
        return this.result(report(g));
      }
      case "finish":
        this.finished = true;
        return this.result(messages.submitted, true);
      default:
        return this.result(messages.unknown(name));
    }
  }

  async outcome(): Promise<Signals> {
    if (this.graded?.code !== this.code) {
      const run = await this.sandbox.run(
        this.task.name,
        this.code,
        this.task.hidden.map((t) => t.args),
      );
      const g = grade(this.task, this.task.hidden, run);
      const all = g.passed === g.total;
      this.graded = {
        code: this.code,
        signals: { tests_passed: all, pass_fraction: g.total === 0 ? 0 : g.passed / g.total, success: all },
      };
    }
    return this.graded.signals;
  }

  async close(): Promise<void> {
    await this.sandbox.close();
  }
}

// --- the kind ---------------------------------------------------------------------------------

function params(env: FindmaxEnv) {
  return {
    version: env.version,
    functions: env.functions as readonly FunctionId[],
    visible_tests: env.visible_tests,
    hidden_tests: env.hidden_tests,
  };
}

/** The problem of task `task` of this env (exported for tests and tools). */
export function findmaxTask(env: FindmaxEnv, task: number): Task {
  return generateTask(params(env), task);
}

const TOKEN = /[A-Za-z_$][A-Za-z0-9_$]*|\d+|===|!==|<=|>=|\+\+|--|\+=|-=|=>|&&|\|\||[^\s\w]/g;

export const findmaxEnv: EnvKind<FindmaxEnv> = {
  kind: "findmax",

  async create(env, task) {
    if (!Number.isInteger(task) || task < 0 || task >= env.tasks)
      throw new RangeError(`findmax: task ${task} is outside 0..${env.tasks - 1}`);
    const t = findmaxTask(env, task);
    const sandbox = await Sandbox.create({ timeLimitMs: env.time_limit_ms, memoryLimitMb: env.memory_limit_mb });
    return new FindmaxInstance(t, sandbox);
  },

  vocabulary(env) {
    const fns = [...new Set(env.functions as readonly FunctionId[])].filter((f) =>
      (FUNCTION_IDS as readonly string[]).includes(f),
    );
    const texts: string[] = [...TOOLS, "code", FILE, ...allSources(fns)];
    for (const fn of fns) texts.push(intro(functionSpec(fn)));
    texts.push(
      messages.saved(9),
      messages.noCode,
      messages.tooLong,
      messages.submitted,
      messages.ended,
      messages.unknown("x"),
      "3 of 3 tests pass. The code did not load: SyntaxError: Unexpected token (line 1)",
      "PASS findMax([3, 1, 2]) = 3",
      "FAIL findMax([-2, -5, -8]): expected -2, got 0 undefined NaN Infinity true false null",
      "error: time limit exceeded (2000 ms) memory limit exceeded (128 MB) TypeError: ReferenceError: RangeError: Maximum call stack size exceeded is not defined is not a function",
      "0 1 2 3 4 5 6 7 8 9",
    );
    const words = new Set<string>();
    for (const text of texts) for (const m of text.matchAll(TOKEN)) words.add(m[0]);
    return [...words].sort();
  },

  async hostCheck(env) {
    if ((await sandboxLayers()).namespaces) return {};
    const risk =
      "the sandbox for the policy's code has no mount and PID namespaces on this machine (bubblewrap is missing or cannot run, and unshare cannot make user namespaces): code that escaped the vm could connect to unix sockets by path and signal your processes";
    const install =
      "install bubblewrap (Debian/Ubuntu: apt install bubblewrap; Fedora: dnf install bubblewrap; none exists for macOS)";
    if (env.require_namespaces)
      return {
        refusal: `${risk}; ${install}, or set require_namespaces: false in the env to run it with the other layers only`,
      };
    return { warning: `${risk} (require_namespaces: false); ${install} to close this` };
  },

  async walkthrough(env, task) {
    const t = findmaxTask(env, task);
    return [
      { name: "read_code", arguments: {} },
      { name: "write_code", arguments: { code: t.fixed } },
      { name: "run_tests", arguments: {} },
      { name: "finish", arguments: {} },
    ];
  },
};
