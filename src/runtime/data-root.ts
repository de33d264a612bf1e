// The run's data root: the folder the plan's data paths (relative, with their sha256 in the
// hashed plan) are found below and confined to. It is chosen when the run starts (the spec's
// folder, the plan file's folder, or --data-root) and recorded in the run directory, so that
// `--resume` finds the same files whatever the environment or working directory: the run is
// repeatable from its plan and its directory alone. It is not part of the plan's meaning (the
// same data elsewhere is the same experiment), so plan hashes do not depend on it.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { writeFileAtomic } from "../plan/files.js";
import type { Plan } from "../plan/schema.js";
import type { RunDirectory } from "./run-dir.js";

export const DATA_ROOT_FILE = "data-root.json";

/** Whether any env of the plan, or its cold start (rollout.sft.data), reads a data file (and so needs a data root). */
function planNamesDataFiles(plan: Plan): boolean {
  return (
    Object.values(plan.envs).some(
      (e) =>
        (e.kind === "sql" && (e.database !== null || e.questions !== null)) ||
        e.kind === "agent" ||
        (e.kind === "swe" && e.requirements !== null),
    ) || (plan.rollout.sft?.data ?? null) !== null
  );
}

export function recordDataRoot(run: RunDirectory, root: string): void {
  writeFileAtomic(
    path.join(run.dir, DATA_ROOT_FILE),
    `${JSON.stringify({ data_root: path.resolve(root) }, null, 2)}\n`,
  );
}

/** The recorded data root; undefined for run directories written before it was recorded (and folders that are not run directories). */
export function recordedDataRoot(run: Pick<RunDirectory, "dir">): string | undefined {
  const file = path.join(run.dir, DATA_ROOT_FILE);
  if (!existsSync(file)) return undefined;
  let root: unknown;
  try {
    root = (JSON.parse(readFileSync(file, "utf8")) as { data_root?: unknown }).data_root;
  } catch {
    throw new DataRootError(`${file} is damaged (not JSON); give the data root again with --data-root DIR`);
  }
  if (typeof root !== "string" || !path.isAbsolute(root))
    throw new DataRootError(`${file} names no absolute data_root; give the data root again with --data-root DIR`);
  return root;
}

export class DataRootError extends Error {}

/**
 * The data root of a resumed run: `given` (--data-root), else the recorded one. A given root is
 * recorded only after `verify` accepted the plan's data files there (their sha256s decide
 * whether it is the same data), so a mistyped one does not replace a good record. A run
 * directory without a record needs --data-root when its plan names data files.
 */
export function resumeDataRoot(
  run: RunDirectory,
  plan: Plan,
  given: string | undefined,
  verify: (root: string) => void,
): string | undefined {
  if (given !== undefined) {
    verify(given);
    recordDataRoot(run, given);
    return given;
  }
  const recorded = recordedDataRoot(run);
  if (recorded === undefined && planNamesDataFiles(plan)) {
    throw new DataRootError(
      `${run.dir} records no data root (it was started by an older arl) and its plan names data files; give it with --data-root DIR (the folder of the spec it was compiled from)`,
    );
  }
  return recorded;
}
