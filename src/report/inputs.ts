// Which run directories a report covers, and where it is written. `arl report` takes run
// directories, a directory above them (every run below it: a sweep's `runs/<experiment>`), or
// a spec's plans (the runs of its variants under the runs folder). One plan run several times
// is reported by its newest directory. A report of one run goes into that run's directory; a
// report of several into the directory that holds them (never the working directory). See
// docs/architecture.md, "Reports".
import { existsSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { ReportInputError, runDirsBelow } from "./load.js";

export interface ReportInputs {
  /** Run directories, as given or found (relative to cwd where they were given so). */
  readonly dirs: readonly string[];
  /** Where the report is written unless --out says otherwise. */
  readonly outDir: string;
  readonly notes: readonly string[];
}

/** The plans a spec lowers to, in the spec's order. */
export interface PlannedVariant {
  readonly experiment: string;
  readonly variant: string;
  readonly hash: string;
}

/** How deep below a given directory run directories are looked for (runs/<experiment>/<variant>/<run>). */
const SEARCH_DEPTH = 4;
const SEARCH_LIMIT = 500;

function planHash(dir: string): string | undefined {
  try {
    const plan = JSON.parse(readFileSync(path.join(dir, "plan.json"), "utf8")) as { hash?: unknown };
    return typeof plan.hash === "string" ? plan.hash : undefined;
  } catch {
    return undefined;
  }
}

/** Run directories named `<hash12>-<UTC time>[-n]` sort by time within one plan: the newest is last. */
function newestPerPlan(dirs: readonly string[], notes: string[], cwd: string): string[] {
  const byHash = new Map<string, string[]>();
  const kept: string[] = [];
  for (const dir of dirs) {
    const hash = planHash(dir);
    if (hash === undefined) kept.push(dir);
    else byHash.set(hash, [...(byHash.get(hash) ?? []), dir]);
  }
  for (const same of byHash.values()) {
    const sorted = [...same].sort((a, b) => (path.basename(a) < path.basename(b) ? -1 : 1));
    const newest = sorted[sorted.length - 1];
    if (newest === undefined) continue;
    kept.push(newest);
    if (sorted.length > 1)
      notes.push(
        `${sorted.length} run directories of one plan: reported the newest, ${path.relative(cwd, newest) || newest}; give a run directory to report another`,
      );
  }
  return dirs.filter((d) => kept.includes(d));
}

/** The deepest directory holding every one of `dirs` (absolute). */
function commonAncestor(dirs: readonly string[]): string {
  const split = dirs.map((d) => path.resolve(d).split(path.sep));
  const first = split[0] ?? [];
  let n = 0;
  while (n < first.length && split.every((parts) => parts[n] === first[n])) n++;
  return first.slice(0, n).join(path.sep) || path.sep;
}

/** The run directories of the given paths: each run directory itself, every run below any other directory. */
export function reportInputs(given: readonly string[], cwd: string): ReportInputs {
  const notes: string[] = [];
  const dirs: string[] = [];
  let expanded: string | undefined;
  for (const g of given) {
    const abs = path.resolve(cwd, g);
    if (!existsSync(abs) || !statSync(abs).isDirectory() || existsSync(path.join(abs, "plan.json"))) {
      // loadRun reports what is wrong with a path that is no directory.
      dirs.push(g);
      continue;
    }
    const below = runDirsBelow(abs, SEARCH_DEPTH, SEARCH_LIMIT);
    if (below.length === 0)
      throw new ReportInputError(
        `'${g}' is not a run directory (it has no plan.json) and has no run directory below it; give a run directory (OUT/<experiment>/<variant>/<hash>-<time>) or the folder that holds a sweep's runs`,
        2,
      );
    expanded = abs;
    dirs.push(...newestPerPlan(below, notes, cwd).map((d) => path.relative(cwd, d) || d));
  }
  const outDir =
    given.length === 1 && expanded
      ? expanded
      : dirs.length === 1
        ? path.resolve(cwd, dirs[0] ?? ".")
        : commonAncestor(dirs.map((d) => path.resolve(cwd, d)));
  return { dirs, outDir, notes };
}

/**
 * The run directories below `root/<experiment>` for each of `experiments` (absolute), by the
 * hash of the plan each holds; a plan run several times has them oldest first (named
 * `<hash12>-<UTC time>[-n]`, so by name). `arl status` and `arl submit` read a sweep's state so.
 */
export function runsByPlanHash(experiments: readonly string[], root: string): Map<string, string[]> {
  const byHash = new Map<string, string[]>();
  for (const experiment of experiments) {
    const dir = path.join(root, experiment);
    for (const run of existsSync(dir) ? runDirsBelow(dir, SEARCH_DEPTH - 1, SEARCH_LIMIT) : []) {
      const hash = planHash(run);
      if (hash !== undefined) byHash.set(hash, [...(byHash.get(hash) ?? []), run]);
    }
  }
  for (const runs of byHash.values()) runs.sort((a, b) => (path.basename(a) < path.basename(b) ? -1 : 1));
  return byHash;
}

/**
 * The run directories of a spec's variants below `runsRoot` (the folder `arl run --out` wrote
 * to), in the spec's order; a variant never run is a note, and no run at all an error.
 */
export function specRuns(plans: readonly PlannedVariant[], runsRoot: string, spec: string, cwd: string): ReportInputs {
  const root = path.resolve(cwd, runsRoot);
  if (!existsSync(root))
    throw new ReportInputError(
      `no runs of '${spec}': '${runsRoot}' does not exist; run 'arl run ${spec}' first, or give --runs DIR (the --out of that run)`,
      1,
    );
  const experiments = [...new Set(plans.map((p) => p.experiment))];
  const byHash = runsByPlanHash(experiments, root);
  const notes: string[] = [];
  const dirs: string[] = [];
  const missing: string[] = [];
  for (const p of plans) {
    const runs = newestPerPlan(byHash.get(p.hash) ?? [], notes, cwd);
    if (runs.length === 0) missing.push(`${p.experiment}/${p.variant}`);
    dirs.push(...runs);
  }
  if (dirs.length === 0)
    throw new ReportInputError(
      `no runs of '${spec}' under '${runsRoot}' (none of its ${plans.length} plan${plans.length === 1 ? "" : "s"} has a run directory there); run 'arl run ${spec}' first, or give --runs DIR`,
      1,
    );
  if (missing.length > 0)
    notes.push(`not run yet (no run directory of its plan under ${runsRoot}): ${missing.join(", ")}`);
  const outDir = experiments.length === 1 ? path.join(root, experiments[0] ?? "") : root;
  return {
    dirs: dirs.map((d) => path.relative(cwd, d) || d),
    outDir: dirs.length === 1 ? path.resolve(dirs[0] ?? ".") : outDir,
    notes,
  };
}
