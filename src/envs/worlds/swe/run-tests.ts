// Running a selection of a swe task's tests: pytest with the task set's Python on a copy of a checkout,
// inside the episode sandbox (src/contracts/sandbox.ts: bubblewrap, no network, the system and
// the Python read-only, the checkout read-only and copied into the sandbox's own size-limited
// /tmp, rlimits on CPU, memory, processes and file size), under a wall-time limit. Whatever the
// tests do (loop, fork, fill the disk, print without end) stays inside: the copy, the processes
// and the output go with the sandbox. A run past its wall time or its output budget, or killed
// by a limit, is an EnvError (the episode's env error); failing tests are results.
import { spawn } from "node:child_process";
import { cp, mkdtemp, realpath, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { EnvError } from "../../../contracts/env.js";
import { killGroup } from "../../../contracts/process-group.js";
import {
  limitHit,
  limitsOf,
  programPaths,
  rlimitPrefix,
  sandboxCommand,
  sandboxEnv,
  sandboxFor,
} from "../../../contracts/sandbox.js";
import { episodeCgroup } from "../../../contracts/sandbox-cgroup.js";
import type { SweEnv } from "./tasks.js";

export interface TestRun {
  /** Test id -> PASSED, FAILED, ERROR, SKIPPED, XFAIL or XPASS (pytest -rA's summary). */
  readonly results: ReadonlyMap<string, string>;
  /** The tail of the output, at most the env's max_output_chars. */
  readonly tail: string;
  readonly exitCode: number | null;
}

/** A PASSED line is the id alone; the others may add " - message" (a failing id with " - " in it is cut there: only passes are counted by id). */
const PASSED = /^PASSED (.+)$/;
const OTHER = /^(FAILED|ERROR|XFAIL|XPASS|SKIPPED) (.+?)(?: - .*)?$/;
/** Output kept in memory while a run goes (its tail); what is shown is cut to max_output_chars. */
const KEPT_BYTES = 1024 * 1024;

function parseResults(output: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of output.split("\n")) {
    const pass = PASSED.exec(line);
    if (pass?.[1]) out.set(pass[1], "PASSED");
    const m = pass ? null : OTHER.exec(line);
    if (m?.[1] && m[2]) out.set(m[2], m[1]);
  }
  return out;
}

/** pytest's words for a selection (test files or ids, never an option). */
function pytestArgs(selection: readonly string[]): string[] {
  return [
    "-m",
    "pytest",
    "-q",
    "-rA",
    "--tb=short",
    "-p",
    "no:cacheprovider",
    "-o",
    "addopts=",
    "-W",
    "ignore",
    ...selection,
  ];
}

/**
 * Runs `selection` on a copy of `checkout`. The checkout is shown read-only and copied into the
 * sandbox's /tmp/repo (the tests write there, bounded by disk_mb); without a sandbox (mode off,
 * or auto where bubblewrap cannot run) the copy is a host folder removed afterwards.
 */
export async function runTests(
  env: SweEnv,
  python: string,
  checkout: string,
  selection: readonly string[],
): Promise<TestRun> {
  const where = sandboxFor({ ...env.sandbox, network: false });
  if ("refusal" in where) throw new EnvError(where.refusal, "unavailable");
  const limits = limitsOf(env.sandbox);
  const pyArgs = [python, ...pytestArgs(selection)];
  let argv: string[];
  let childEnv: Record<string, string>;
  let scratch: string | undefined;
  let cwd: string;
  if ("bwrap" in where) {
    const repo = "/tmp/repo";
    const script = 'cp -R "$1" /tmp/repo && cd /tmp/repo && shift && exec "$@"';
    childEnv = sandboxEnv({
      PYTHONDONTWRITEBYTECODE: "1",
      PYTHONPATH: path.posix.join(repo, env.import_root),
      PYTHONHASHSEED: "0",
    });
    delete childEnv.VIRTUAL_ENV;
    cwd = checkout;
    argv = sandboxCommand(
      {
        bwrap: where.bwrap,
        cwd: checkout,
        readOnly: programPaths([python], checkout, process.env.PATH),
        network: false,
        env: childEnv,
        limits,
      },
      ["/bin/sh", "-c", script, "sh", checkout, ...rlimitPrefix(limits), ...pyArgs],
    );
  } else {
    scratch = await realpath(await mkdtemp(path.join(os.tmpdir(), "arl-swe-run-")));
    cwd = path.join(scratch, "repo");
    await cp(checkout, cwd, { recursive: true });
    childEnv = {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: scratch,
      PYTHONDONTWRITEBYTECODE: "1",
      PYTHONPATH: path.join(cwd, env.import_root),
      PYTHONHASHSEED: "0",
      LANG: "C.UTF-8",
    };
    argv = pyArgs;
  }
  // Root: the process limit is a pids cgroup's (RLIMIT_NPROC does not bind root).
  const cgroup = "bwrap" in where ? episodeCgroup(limits.processes) : undefined;
  try {
    return await spawnBounded(env, cgroup ? cgroup.wrap(argv) : argv, cwd, childEnv, "bwrap" in where);
  } finally {
    cgroup?.dispose();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  }
}

function spawnBounded(
  env: SweEnv,
  argv: readonly string[],
  cwd: string,
  childEnv: Record<string, string>,
  sandboxed: boolean,
): Promise<TestRun> {
  const [file, ...args] = argv;
  return new Promise((resolve, reject) => {
    const child = spawn(file ?? "", args, { cwd, env: childEnv, stdio: ["ignore", "pipe", "pipe"], detached: true });
    let out = "";
    let stderr = "";
    let written = 0;
    let killedFor: "time" | "output" | undefined;
    const keep = (c: Buffer) => {
      written += c.length;
      out = (out + c.toString("utf8")).slice(-KEPT_BYTES);
      if (written > env.sandbox.output_bytes && !killedFor) {
        killedFor = "output";
        killGroup(child.pid);
      }
    };
    child.stdout.on("data", keep);
    child.stderr.on("data", (c: Buffer) => {
      keep(c);
      stderr = (stderr + c.toString("utf8")).slice(-4096);
    });
    const timer = setTimeout(() => {
      killedFor ??= "time";
      killGroup(child.pid);
    }, env.test_timeout_s * 1000);
    child.on("error", (e) => {
      clearTimeout(timer);
      reject(new EnvError(`swe: cannot start the test run (${file}): ${e.message}`, "unavailable"));
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      if (killedFor === "time")
        return reject(
          new EnvError(
            `swe: the test run did not end within test_timeout_s ${env.test_timeout_s} s and was stopped`,
            "timeout",
          ),
        );
      if (killedFor === "output")
        return reject(
          new EnvError(
            `swe: the test run wrote more than sandbox.output_bytes ${env.sandbox.output_bytes} bytes and was stopped`,
            "crash",
          ),
        );
      const limit =
        sandboxed && code !== 0 && code !== 1 ? limitHit(code, signal, stderr, limitsOf(env.sandbox)) : undefined;
      if (limit !== undefined) return reject(new EnvError(`swe: the test run ${limit} and was stopped`, "crash"));
      const tail = out.length > env.max_output_chars ? `...\n${out.slice(-env.max_output_chars)}` : out;
      resolve({ results: parseResults(out), tail, exitCode: code });
    });
  });
}
