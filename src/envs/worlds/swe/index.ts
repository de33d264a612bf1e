// The built-in `swe` env (docs/envs.md#coding-tasks): a checkout of a Python package with an
// injected bug, the package's own tests as the judge. Tools: list_files, read_file, search, edit
// (exact text, found once), run_tests (a selection, in the sandbox, bounded) and submit. State
// signals: test_runs, edits, test_edits (edit calls on a file outside source_paths: tests,
// conftest, configuration). Outcome signals, from one run of the task's tests on a fresh copy of
// the snapshot with the agent's changes to source_paths applied and every other file as the task
// has it (so editing the tests earns nothing): resolved (= success), tests_passed, tests_failed
// (of FAIL_TO_PASS and PASS_TO_PASS), patch_lines, test_edits.
import { cp, lstat, mkdir, mkdtemp, readdir, readFile, realpath, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import {
  EnvError,
  type EnvInstance,
  type EnvKind,
  type Observation,
  type Signals,
  type StepResult,
} from "../../../contracts/env.js";
import { sandboxHostCheck } from "../../../contracts/sandbox.js";
import type { ToolCall } from "../../../contracts/tool-calls.js";
import { runTests, type TestRun } from "./run-tests.js";
import { sweTaskSet, type SweEnv, type SweTask, type SweTaskSet } from "./tasks.js";
import { changedLines, isUnder, ToolRefusal, Workspace } from "./workspace.js";

export { sweTaskSet, type SweEnv } from "./tasks.js";

const TOOLS = ["list_files", "read_file", "search", "edit", "run_tests", "submit"] as const;
const SHOWN_FAILING = 5;

function intro(env: SweEnv, task: SweTask): string {
  const failing = task.fail_to_pass.slice(0, SHOWN_FAILING).join("\n  ");
  const more =
    task.fail_to_pass.length > SHOWN_FAILING ? `\n  ... and ${task.fail_to_pass.length - SHOWN_FAILING} more` : "";
  return [
    `This is a checkout of the Python package ${env.package} ${env.package_version}. A bug in its code makes these tests fail:\n  ${failing}${more}`,
    `Find the bug in the package's code (${env.source_paths.join(", ")}) and fix it with edit. Changes to the tests or any other file are undone before scoring. run_tests runs tests (files or test ids; none: ${env.test_files.join(" ")}). Call submit when you are done.`,
  ].join("\n");
}

const messages = {
  submitted: "Submitted; the task's tests decide the outcome.",
  ended: "error: the episode has ended (submit was called)",
  unknown: (name: string) =>
    `error: unknown tool ${JSON.stringify(name.slice(0, 40))}; the tools are ${TOOLS.join(", ")}`,
  badSelection: 'error: "tests" is a list of test files or test ids separated by spaces (relative paths, no options)',
};

function report(run: TestRun): string {
  const counts = new Map<string, number>();
  for (const r of run.results.values()) counts.set(r, (counts.get(r) ?? 0) + 1);
  const summary =
    counts.size === 0
      ? `no test ran (exit status ${run.exitCode})`
      : [...counts].map(([k, n]) => `${n} ${k.toLowerCase()}`).join(", ");
  return `${summary}\n${run.tail}`;
}

export class SweInstance implements EnvInstance {
  private testRuns = 0;
  private edits = 0;
  private testEdits = 0;
  private finished = false;
  /** Bumped by every edit that changed a file: the outcome is recomputed only after one. */
  private revision = 0;
  private graded: { readonly revision: number; readonly signals: Signals } | undefined;

  constructor(
    private readonly env: SweEnv,
    private readonly set: SweTaskSet,
    private readonly task: SweTask,
    private readonly ws: Workspace,
  ) {}

  /** The checkout's folder (removed by close). */
  get checkout(): string {
    return this.ws.root;
  }

  private signals(): Signals {
    return { test_runs: this.testRuns, edits: this.edits, test_edits: this.testEdits };
  }

  private result(text: string, terminated = false): StepResult {
    return { text, signals: this.signals(), terminated };
  }

  async reset(): Promise<Observation> {
    return { text: intro(this.env, this.task), signals: this.signals() };
  }

  async step(toolCall: ToolCall): Promise<StepResult> {
    if (this.finished) return this.result(messages.ended, true);
    const name = typeof toolCall?.name === "string" ? toolCall.name : "";
    const args: Record<string, unknown> =
      toolCall && typeof toolCall.arguments === "object" && toolCall.arguments !== null ? toolCall.arguments : {};
    try {
      switch (name) {
        case "list_files":
          return this.result(await this.ws.list(args.path, this.env.max_results));
        case "read_file":
          return this.result(await this.ws.read(args.path, args.start_line, args.end_line, this.env.max_read_chars));
        case "search":
          return this.result(await this.ws.search(args.pattern, args.path, this.env.max_results));
        case "edit": {
          this.edits++;
          if (typeof args.path === "string" && !isUnder(args.path.trim().replace(/^\.\/+/, ""), this.env.source_paths))
            this.testEdits++;
          const done = await this.ws.edit(args.path, args.old, args.new);
          this.revision++;
          return this.result(done.message);
        }
        case "run_tests": {
          const selection = this.selection(args.tests);
          this.testRuns++;
          return this.result(report(await runTests(this.env, this.set.python, this.ws.root, selection)));
        }
        case "submit":
          this.finished = true;
          return this.result(messages.submitted, true);
        default:
          return this.result(messages.unknown(name));
      }
    } catch (e) {
      if (e instanceof ToolRefusal) return this.result(e.message);
      throw e;
    }
  }

  private selection(tests: unknown): string[] {
    if (tests === undefined || tests === null || tests === "") return [...this.env.test_files];
    const words =
      typeof tests === "string"
        ? tests.split(/\s+/).filter(Boolean)
        : Array.isArray(tests) && tests.every((t) => typeof t === "string")
          ? tests
          : undefined;
    if (!words || words.length === 0 || words.length > 200) throw new ToolRefusal(messages.badSelection);
    for (const w of words) {
      if (w.startsWith("-")) throw new ToolRefusal(messages.badSelection);
      this.ws.resolve(w.split("::")[0], "tests");
    }
    return words;
  }

  async outcome(): Promise<Signals> {
    if (this.graded?.revision !== this.revision) this.graded = { revision: this.revision, signals: await this.grade() };
    return this.graded.signals;
  }

  /** The task's tests on a fresh copy of the snapshot with the bug, the agent's source changes applied, every other file the task's. */
  private async grade(): Promise<Signals> {
    const root = await realpath(await mkdtemp(path.join(os.tmpdir(), "arl-swe-grade-")));
    try {
      const repo = path.join(root, "repo");
      await cp(this.set.snapshot, repo, { recursive: true });
      await writeFile(path.join(repo, this.task.file), this.task.buggy_source);
      let patchLines = 0;
      for (const rel of await sourceFiles(repo, this.env.source_paths)) {
        const before = await readText(path.join(repo, rel));
        const after = await this.ws.text(rel);
        if (after === undefined || after === before) continue;
        patchLines += changedLines(before ?? "", after);
        await mkdir(path.dirname(path.join(repo, rel)), { recursive: true });
        await writeFile(path.join(repo, rel), after);
      }
      const run = await runTests(this.env, this.set.python, repo, [...this.env.test_files]);
      const judged = [...this.task.fail_to_pass, ...this.task.pass_to_pass];
      const passed = judged.filter((t) => run.results.get(t) === "PASSED").length;
      const resolved = passed === judged.length;
      return {
        resolved,
        success: resolved,
        tests_passed: passed,
        tests_failed: judged.length - passed,
        patch_lines: patchLines,
        test_edits: this.testEdits,
      };
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  }

  async close(): Promise<void> {
    await this.ws.close();
  }
}

async function readText(file: string): Promise<string | undefined> {
  return readFile(file, "utf8").catch(() => undefined);
}

/** The files below the source paths of a checkout (relative paths). */
async function sourceFiles(repo: string, sources: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  const walk = async (rel: string): Promise<void> => {
    const st = await lstat(path.join(repo, rel)).catch(() => undefined);
    if (st?.isFile()) out.push(rel);
    else if (st?.isDirectory())
      for (const name of (await readdir(path.join(repo, rel))).sort()) await walk(path.join(rel, name));
  };
  for (const s of sources) await walk(path.normalize(s));
  return out;
}

/** The task of `task`, generated (or read from the cache) first when needed. */
async function taskOf(
  env: SweEnv,
  task: number,
  root: string | undefined,
): Promise<{ set: SweTaskSet; task: SweTask }> {
  if (!Number.isInteger(task) || task < 0 || task >= env.tasks)
    throw new RangeError(`swe: task ${task} is outside 0..${env.tasks - 1}`);
  const set = await sweTaskSet(env, undefined, root);
  const t = set.tasks[task];
  if (!t) throw new EnvError(`swe: the generated set has no task ${task}`, "protocol");
  return { set, task: t };
}

const TOKEN = /[A-Za-z_]+|\d|[^\s\w]/g;

/**
 * The `swe` env kind; `root` is the run's data root (a requirements file outside the stdlib lies
 * below it).
 */
export function createSweEnv(options: { readonly root?: string } = {}): EnvKind<SweEnv> {
  const { root } = options;
  return {
    kind: "swe",

    async provision(env, context) {
      const set = await sweTaskSet(env, context.log, root);
      context.log(
        `env '${context.name}': swe ${env.package} ${env.package_version}: ${set.tasks.length} tasks in ${set.dir}`,
      );
    },

    async create(env, task) {
      const { set, task: t } = await taskOf(env, task, root);
      const ws = await Workspace.create(set.snapshot, t.file, t.buggy_source);
      return new SweInstance(env, set, t, ws);
    },

    vocabulary(env) {
      const texts: string[] = [
        ...TOOLS,
        "path",
        "start_line",
        "end_line",
        "pattern",
        "old",
        "new",
        "tests",
        env.package,
        ...env.test_files,
        ...env.source_paths,
        messages.submitted,
        messages.ended,
        messages.unknown("x"),
        messages.badSelection,
      ];
      texts.push(
        "passed failed error skipped no test ran exit status Edited at line lines replaced by ... cut at characters; read from line on with",
        "0 1 2 3 4 5 6 7 8 9",
      );
      texts.push(
        "def return if else elif for while in not and or is None True False self import from class pass assert == != <= >= < > + - * / % ( ) [ ] { } : , . = ' \" _",
      );
      const words = new Set<string>();
      for (const text of texts) for (const m of text.matchAll(TOKEN)) words.add(m[0]);
      return [...words].sort();
    },

    async hostCheck(env) {
      return sandboxHostCheck({ ...env.sandbox, network: false });
    },

    async walkthrough(env, task) {
      const { task: t } = await taskOf(env, task, root);
      return [
        { name: "read_file", arguments: { path: t.file, start_line: Math.max(1, t.line - 3), end_line: t.line + 3 } },
        { name: "edit", arguments: { path: t.fix.path, old: t.fix.old, new: t.fix.new } },
        { name: "submit", arguments: {} },
      ];
    },
  };
}

/** The registered `swe` env: no data root, so only a stdlib requirements file is found (see `envKindsWithDataRoot`). */
export const sweEnv: EnvKind<SweEnv> = createSweEnv();
