// The tasks of a `swe` env: made by the generator (runtime-gpu/arl_swe, run with arl's Python)
// from the preset's sdist, cached on disk under a key of the generator's version and the
// preset's fields (seed and requirements file included), and read back here, with the Python
// that runs the tests (the requirements' venv, or arl's). One generation per key and process:
// the episodes of a run share the promise.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { EnvError } from "../../../contracts/env.js";
import { killGroup } from "../../../contracts/process-group.js";
import { STDLIB_ROOT } from "../../../contracts/paths.js";
import { pythonCandidates, RUNTIME_GPU_DIR } from "../../../contracts/python.js";
import { verifyDataFile } from "../../data-files.js";
import type { PlanEnv } from "../../../plan/schema.js";

export type SweEnv = Extract<PlanEnv, { kind: "swe" }>;

/** The generator version this runtime runs (runtime-gpu/arl_swe/generate.py GENERATOR_VERSION). */
const SWE_GENERATOR_VERSION = "1";

export interface SweTask {
  readonly id: number;
  /** The source file the bug is in, relative to the repository root. */
  readonly file: string;
  readonly function: string;
  readonly kind: string;
  readonly line: number;
  readonly what: string;
  /** The whole text of `file` with the bug. */
  readonly buggy_source: string;
  /** The gold patch as one edit call: replace `old` (once in the buggy file) by `new`. */
  readonly fix: { readonly path: string; readonly old: string; readonly new: string };
  readonly fail_to_pass: readonly string[];
  readonly pass_to_pass: readonly string[];
}

export interface SweTaskSet {
  /** The cached folder: snapshot/ (the unpacked sdist, gold code), tasks.jsonl, meta.json. */
  readonly dir: string;
  readonly snapshot: string;
  readonly tasks: readonly SweTask[];
  /** The Python that runs the tests: the venv of the env's requirements, or arl's. */
  readonly python: string;
}

/** The Python that generates the tasks, and runs every test of an env without requirements (else their venv is made from it): $ARL_SWE_PYTHON, else arl's (ARL_PYTHON, the package's .venv, python3). */
function swePython(): string {
  return process.env.ARL_SWE_PYTHON ?? pythonCandidates()[0] ?? "python3";
}

/** The cache of generated envs: $ARL_ENV_CACHE (as the env host's generated games), else ~/.cache/arl/envs. */
function sweCacheDir(): string {
  return process.env.ARL_ENV_CACHE ?? path.join(os.homedir(), ".cache", "arl", "envs");
}

/**
 * What the generator reads: the preset's fields that determine the tasks, its requirements file
 * (checked against the plan's sha256; a stdlib one is found without a data root), and the Python
 * that runs the tests or makes their venv.
 */
function generatorConfig(env: SweEnv, root: string | undefined): Record<string, unknown> {
  const req = env.requirements;
  const requirements = req
    ? {
        path: verifyDataFile(
          req,
          root ?? (req.path.startsWith("std/") ? STDLIB_ROOT : undefined),
          "requirements",
          "swe",
        ),
        sha256: req.sha256,
      }
    : null;
  return {
    package: env.package,
    version: env.package_version,
    sha256: env.sha256,
    seed: env.generator_seed,
    tasks: env.tasks,
    test_files: env.test_files,
    source_paths: env.source_paths,
    import_root: env.import_root,
    mutations: env.mutations,
    max_per_function: env.max_per_function,
    test_timeout_s: env.test_timeout_s,
    python: swePython(),
    ...(requirements ? { requirements } : {}),
  };
}

const made = new Map<string, Promise<SweTaskSet>>();

/**
 * The env's tasks: from the cache, else generated into it (minutes: one test run per candidate
 * bug); `root` is the run's data root, below which a requirements file outside the stdlib lies.
 */
export function sweTaskSet(
  env: SweEnv,
  log: (line: string) => void = () => {},
  root: string | undefined = undefined,
): Promise<SweTaskSet> {
  if (env.generator !== SWE_GENERATOR_VERSION) {
    return Promise.reject(
      new EnvError(
        `swe: the plan asks for task generator ${JSON.stringify(env.generator)}, and this arl has generator ${SWE_GENERATOR_VERSION}`,
        "unavailable",
      ),
    );
  }
  let config;
  try {
    config = generatorConfig(env, root);
  } catch (e) {
    return Promise.reject(e instanceof Error ? e : new Error(String(e)));
  }
  const key = JSON.stringify(config);
  let set = made.get(key);
  if (!set) {
    set = generate(config, env, log);
    made.set(key, set);
    set.catch(() => made.delete(key));
  }
  return set;
}

function generate(config: Record<string, unknown>, env: SweEnv, log: (line: string) => void): Promise<SweTaskSet> {
  // Generous: each candidate is one run of the tests, and several candidates are tried a task.
  const limitMs = (env.test_timeout_s * (env.tasks * 8 + 4) + 600) * 1000;
  return new Promise((resolve, reject) => {
    const python = swePython();
    const child = spawn(python, ["-m", "arl_swe", "generate", JSON.stringify(config), sweCacheDir()], {
      cwd: RUNTIME_GPU_DIR,
      env: { ...process.env, PYTHONPATH: [RUNTIME_GPU_DIR, process.env.PYTHONPATH].filter(Boolean).join(":") },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => (stdout = (stdout + c.toString("utf8")).slice(-65536)));
    child.stderr.on("data", (c: Buffer) => {
      const text = c.toString("utf8");
      stderr = (stderr + text).slice(-8192);
      for (const line of text.split("\n"))
        if (line.startsWith("task ") || line.startsWith("requirements "))
          log(`swe ${env.package} ${env.package_version}: ${line}`);
    });
    const timer = setTimeout(() => killGroup(child.pid), limitMs);
    child.on("error", (e) => {
      clearTimeout(timer);
      reject(new EnvError(`swe: cannot start the task generator with ${python}: ${e.message}`, "unavailable"));
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      const why = stderr
        .split("\n")
        .filter((l) => l.startsWith("arl_swe: "))
        .pop()
        ?.slice("arl_swe: ".length);
      if (code !== 0) {
        const tail = stderr.trim().split("\n").slice(-3).join(" | ");
        return reject(
          new EnvError(
            `swe: generating the tasks of ${env.package} ${env.package_version} failed: ${why ?? (tail || `exit status ${code}`)}`,
            "unavailable",
          ),
        );
      }
      try {
        const made = JSON.parse(stdout.trim().split("\n").pop() ?? "") as { dir: string; python: string };
        resolve(readTaskSet(made.dir, env.tasks, made.python));
      } catch (e) {
        reject(
          e instanceof EnvError
            ? e
            : new EnvError(`swe: the task generator's answer could not be read: ${(e as Error).message}`, "protocol"),
        );
      }
    });
  });
}

/** The task set in `dir`, checked to hold `count` tasks, its tests run by `python`. */
function readTaskSet(dir: string, count: number, python: string): SweTaskSet {
  const lines = readFileSync(path.join(dir, "tasks.jsonl"), "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "");
  const tasks = lines.map((l) => JSON.parse(l) as SweTask);
  if (tasks.length < count)
    throw new EnvError(`swe: ${dir} holds ${tasks.length} tasks, and the plan asks for ${count}`, "protocol");
  return { dir, snapshot: path.join(dir, "snapshot"), tasks: tasks.slice(0, count), python };
}
