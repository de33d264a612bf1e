// What the cluster tests (SLURM, Ray) read of a submitted sweep of `countingExperiment`: `arl
// status --json` per variant, polled until a condition holds, each variant's committed iterations
// and its run's results.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { expect } from "vitest";
import { runArl } from "./cli.js";
import { runResults, type RunResults } from "./run-results.js";

export interface StatusLine {
  variant: string;
  phase: string;
  run_dir: string | null;
  iteration: number;
  job: string | null;
  job_state: string | null;
  log_tail: string[];
  submittable: boolean;
}

/** `arl status spec.arl --runs cluster --json` in `cwd`, by variant. */
export async function sweepStatus(cwd: string, env: Record<string, string>): Promise<Map<string, StatusLine>> {
  const shown = await runArl(["status", "spec.arl", "--runs", "cluster", "--json"], { cwd, env });
  expect(shown.code, shown.stderr).toBe(0);
  const lines = shown.stdout
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as StatusLine);
  return new Map(lines.map((l) => [l.variant, l]));
}

/** Polls `arl status` until `done` holds (a loaded machine can take minutes; never a timing assertion). */
export async function waitForStatus(
  cwd: string,
  env: Record<string, string>,
  what: string,
  done: (s: Map<string, StatusLine>) => boolean,
  limitMinutes = 5,
): Promise<Map<string, StatusLine>> {
  for (
    const deadline = Date.now() + limitMinutes * 60_000;
    Date.now() < deadline;
    await new Promise((r) => setTimeout(r, 1000))
  ) {
    const s = await sweepStatus(cwd, env);
    if (done(s)) return s;
  }
  const last = [...(await sweepStatus(cwd, env)).values()];
  throw new Error(`waited ${limitMinutes} minutes for ${what}: ${JSON.stringify(last)}`);
}

/** Committed iterations of the only run directory of `variant` under `root` (0 while there is none, or it is being written). */
export function committedIterations(root: string, variant: string): number {
  const base = path.join(root, "counting", variant);
  const [run] = existsSync(base) ? readdirSync(base) : [];
  const state = run ? path.join(base, run, "state.json") : "";
  try {
    return run && existsSync(state) ? (JSON.parse(readFileSync(state, "utf8")) as { iteration: number }).iteration : 0;
  } catch {
    return 0;
  }
}

/** Per variant: what its only run directory under `root` computed. */
export function variantResults(root: string, variants: readonly string[]): Record<string, RunResults> {
  return Object.fromEntries(
    variants.map((variant) => {
      const runs = readdirSync(path.join(root, "counting", variant));
      expect(runs, variant).toHaveLength(1);
      return [variant, runResults(path.join(root, "counting", variant, runs[0]!))];
    }),
  );
}
