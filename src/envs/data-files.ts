// The data files a plan's envs name (sql's database and questions, an agent's task file, a
// dataset's rows and verifier, a swe env's requirements;
// {path, sha256}, the path relative to the run's data
// root; `std/...` in the stdlib): where each one lies (confined to the data root), and the check
// that its bytes still hash to the plan's sha256, before anything reads it.
import { existsSync, statSync, type Stats } from "node:fs";
import path from "node:path";
import { refusalReason, resolveConfined } from "../contracts/confine.js";
import { STDLIB_ROOT } from "../contracts/paths.js";
import { sha256File } from "../plan/hash.js";
import type { PlanEnv } from "../plan/schema.js";
import { EnvError } from "../contracts/env.js";

/** A plan's reference to one data file of an env. */
export type DataFile = NonNullable<Extract<PlanEnv, { kind: "sql" }>["database"]>;

/**
 * The folder a plan's data paths are relative to: the `root` the env kind was made with (the
 * run's data root, recorded in its run directory). Never the process environment: a run must
 * be repeatable from its plan and run directory alone.
 */
function dataRoot(root: string | undefined, file: DataFile, what: string, kind: string): string {
  if (root === undefined) {
    throw new EnvError(
      `${kind} env: the ${what} file '${file.path}' cannot be located: this ${kind} env was made without a data root ('arl run' passes the spec's folder or --data-root)`,
      "unavailable",
    );
  }
  return path.resolve(root);
}

/**
 * Where a plan's data file lies: `std/...` in the stdlib when it is there, else below `root`,
 * confined to that folder on real paths. An absolute path, `..` out of the folder or a link
 * leading out of it is refused before the file is opened.
 */
function resolveDataPath(file: DataFile, root: string, what: string, kind: string): string {
  const inStdlib = file.path.startsWith("std/") ? resolveConfined(file.path, STDLIB_ROOT, [STDLIB_ROOT]) : undefined;
  if (inStdlib?.ok && existsSync(inStdlib.real)) return inStdlib.real;
  const confined = resolveConfined(file.path, root, [root]);
  if (!confined.ok) {
    throw new EnvError(
      `${kind} env: the plan's ${what} file '${file.path}' is refused: ${refusalReason(confined.reason, root)} (the run's data root); it was not read`,
      "unavailable",
    );
  }
  return confined.real;
}

const verified = new Map<string, { mtimeMs: number; size: number; sha256: string }>();

/** Where a plan's data file lies below `root` (confined), checked to be a file, not yet read. */
export function locateDataFile(
  file: DataFile,
  root: string | undefined,
  what: string,
  kind: string,
): { absolute: string; stat: Stats } {
  const base = dataRoot(root, file, what, kind);
  const absolute = resolveDataPath(file, base, what, kind);
  let stat;
  try {
    stat = statSync(absolute);
  } catch {
    throw new EnvError(
      `${kind} env: the ${what} file '${file.path}' does not exist (looked for ${absolute}; data paths are relative to ${base})`,
      "unavailable",
    );
  }
  if (!stat.isFile()) throw new EnvError(`${kind} env: the ${what} '${absolute}' is not a file`, "unavailable");
  return { absolute, stat };
}

/** The refusal of a data file whose bytes hash to `sha256`, not to the plan's. */
export function dataFileChanged(
  file: DataFile,
  absolute: string,
  sha256: string,
  kind: string,
  what: string,
): EnvError {
  return new EnvError(
    `${kind} env: the ${what} file '${absolute}' has sha256 ${sha256}, but the plan was compiled against ${file.sha256}; refusing to run on different data (recompile the spec if the change is intended)`,
    "unavailable",
  );
}

/** Checks the file's sha256 against the plan's (re-hashing only when size or mtime changed). */
export function verifyDataFile(file: DataFile, root: string | undefined, what: string, kind = "sql"): string {
  const { absolute, stat } = locateDataFile(file, root, what, kind);
  const known = verified.get(absolute);
  let sha256 = known && known.mtimeMs === stat.mtimeMs && known.size === stat.size ? known.sha256 : undefined;
  if (sha256 === undefined) {
    sha256 = sha256File(absolute);
    verified.set(absolute, { mtimeMs: stat.mtimeMs, size: stat.size, sha256 });
  }
  if (sha256 !== file.sha256) throw dataFileChanged(file, absolute, sha256, kind, what);
  return absolute;
}

/** Checks every data file of a plan's envs below `root` (confined, sha256 against the plan's), reading none but to hash it. */
export function verifyPlanDataFiles(envs: Readonly<Record<string, PlanEnv>>, root: string): void {
  for (const env of Object.values(envs)) {
    if (env.kind === "agent") verifyDataFile(env.task_file, root, "task", "agent");
    if (env.kind === "dataset") {
      // Not even hashed when larger than its bound: the env refuses to read it (dataset/index.ts).
      const { stat } = locateDataFile(env.data, root, "data", "dataset");
      if (stat.size > env.max_data_bytes)
        throw new EnvError(
          `dataset env: the data file '${env.data.path}' holds ${stat.size} bytes, more than max_data_bytes (${env.max_data_bytes}); it was not read (raise the env's max_data_bytes, or cut the file)`,
          "unavailable",
        );
      verifyDataFile(env.data, root, "data", "dataset");
      if (env.verifier) verifyDataFile(env.verifier, root, "verifier", "dataset");
    }
    if (env.kind === "swe" && env.requirements) verifyDataFile(env.requirements, root, "requirements", "swe");
    if (env.kind !== "sql") continue;
    if (env.database) verifyDataFile(env.database, root, "database");
    if (env.questions) verifyDataFile(env.questions, root, "questions");
  }
}
