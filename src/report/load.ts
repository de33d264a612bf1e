// Reading run directories for `arl report`: the plan, the manifest, the committed metrics and
// the per-task eval files. Everything is read defensively (a run may be in progress, killed, or
// written by another version): what cannot be used becomes a note, and only a path that is not
// a run directory at all, or a run with nothing to report yet, is an error.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { last } from "../contracts/checked.js";
import { loadPreflight, type PreflightRow } from "./preflight.js";

/** An input the report cannot use; `exitCode` 2 for a wrong path, 1 for a run with nothing in it. */
export class ReportInputError extends Error {
  constructor(
    message: string,
    readonly exitCode: 1 | 2,
  ) {
    super(message);
  }
}

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export interface MetricsRow {
  readonly iteration: number;
  readonly raw: JsonObject;
}

export interface EvalTaskRow {
  readonly env: string;
  readonly task: string;
  readonly n: number;
  readonly correct: number;
  readonly envErrors: number;
  /** pass@k by k; null where the task had fewer than k usable samples. */
  readonly pass: ReadonlyMap<number, number | null>;
}

export interface EvalFile {
  readonly iteration: number;
  readonly rows: readonly EvalTaskRow[];
}

/** One epoch of the SFT cold start: the mean NLL per target token on the training and held-out records. */
export interface SftEpochRow {
  readonly epoch: number;
  readonly train: number | undefined;
  readonly heldout: number | undefined;
}

/** A watchdog warning of one iteration (metrics.jsonl `warnings`). */
export interface RunWarning {
  readonly iteration: number;
  readonly code: string;
  readonly message: string;
}

export interface RunInfo {
  /** The directory as given on the command line. */
  readonly given: string;
  readonly dir: string;
  readonly experiment: string;
  readonly variant: string;
  readonly hash: string;
  /** plan.json as read: the settings the report shows (report/settings.ts). */
  readonly plan: JsonObject;
  readonly description: string | null;
  readonly overrides: readonly { path: string; value: Json }[];
  readonly seed: number | null;
  readonly plannedIterations: number | null;
  readonly evalK: readonly number[];
  readonly rewardTerms: readonly string[];
  readonly manifest: JsonObject | null;
  readonly metrics: readonly MetricsRow[];
  /** Iterations committed (state.json), or the metrics lines when there is no state file. */
  readonly iterations: number;
  readonly partial: boolean;
  readonly evals: readonly EvalFile[];
  /** preflight.json's checks (report/preflight.ts); null when the run has none. */
  readonly preflight: readonly PreflightRow[] | null;
  /** The cold start's losses per epoch (state.json, else iteration 1's metrics line); empty without one. */
  readonly sft: readonly SftEpochRow[];
  readonly warnings: readonly RunWarning[];
  readonly notes: readonly string[];
}

function isObject(x: unknown): x is JsonObject {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}

/** A JSON value as text: a scalar as `String` writes it, an array or object as JSON. */
function jsonText(x: Json): string {
  return typeof x === "object" && x !== null ? JSON.stringify(x) : String(x);
}

export function finiteNumber(x: unknown): number | undefined {
  return typeof x === "number" && Number.isFinite(x) ? x : undefined;
}

function readJsonFile(file: string, what: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new ReportInputError(`cannot read ${what} '${file}': ${(error as Error).message}`, 2);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new ReportInputError(`${what} '${file}' is not valid JSON`, 2);
  }
}

/** Run directories at most `depth` levels below `dir` (at most `limit`), in name order. */
export function runDirsBelow(dir: string, depth: number, limit = 5, found: string[] = []): string[] {
  if (depth === 0 || found.length >= limit) return found;
  let entries: string[];
  try {
    entries = readdirSync(dir).sort();
  } catch {
    return found;
  }
  for (const entry of entries) {
    const sub = path.join(dir, entry);
    try {
      if (!statSync(sub).isDirectory()) continue;
    } catch {
      continue;
    }
    if (existsSync(path.join(sub, "plan.json"))) found.push(sub);
    else runDirsBelow(sub, depth - 1, limit, found);
    if (found.length >= limit) break;
  }
  return found;
}

function parseLines(file: string, what: string, notes: string[]): JsonObject[] {
  const text = readFileSync(file, "utf8");
  const lines = text.split("\n");
  const out: JsonObject[] = [];
  for (const [i, line] of lines.entries()) {
    if (line.trim() === "") continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      // A last line without its newline is an append cut short (a killed run): skip it.
      if (i === lines.length - 1) {
        notes.push(`${what}: the last line is incomplete (the run was interrupted while writing it) and is ignored`);
        continue;
      }
      throw new ReportInputError(`${what} '${file}' line ${i + 1} is not valid JSON`, 1);
    }
    if (!isObject(value)) throw new ReportInputError(`${what} '${file}' line ${i + 1} is not a JSON object`, 1);
    out.push(value);
  }
  return out;
}

function readEvalFiles(dir: string, evalK: readonly number[], notes: string[]): EvalFile[] {
  const evalDir = path.join(dir, "eval");
  if (!existsSync(evalDir)) return [];
  const files: EvalFile[] = [];
  for (const entry of readdirSync(evalDir).sort()) {
    // base.jsonl (eval.base: the policy before the cold start) sorts first, as iteration -1.
    const m = /^(?:iteration-(\d+)|base)\.jsonl$/.exec(entry);
    if (!m) continue;
    const iteration = m[1] === undefined ? -1 : Number(m[1]);
    let lines: JsonObject[];
    try {
      lines = parseLines(path.join(evalDir, entry), `eval/${entry}`, notes);
    } catch (error) {
      if (!(error instanceof ReportInputError)) throw error;
      notes.push(`${error.message}; that eval is left out`);
      continue;
    }
    const rows: EvalTaskRow[] = [];
    for (const line of lines) {
      const n = finiteNumber(line.n);
      const correct = finiteNumber(line.correct);
      if (n === undefined || correct === undefined || line.task === undefined) continue;
      const pass = new Map<number, number | null>();
      const ks = new Set(evalK);
      for (const key of Object.keys(line)) {
        const km = /^pass@(\d+)$/.exec(key);
        if (km) ks.add(Number(km[1]));
      }
      for (const k of ks) {
        const v = line[`pass@${k}`];
        pass.set(k, finiteNumber(v) ?? null);
      }
      rows.push({
        env: jsonText(line.env ?? ""),
        task: jsonText(line.task),
        n,
        correct,
        envErrors: finiteNumber(line.env_errors) ?? 0,
        pass,
      });
    }
    files.push({ iteration, rows });
  }
  return files.sort((a, b) => a.iteration - b.iteration);
}

function sftEpochs(summary: Json | undefined): SftEpochRow[] {
  if (!isObject(summary) || !Array.isArray(summary.epochs)) return [];
  return summary.epochs.flatMap((e) => {
    const epoch = isObject(e) ? finiteNumber(e.epoch) : undefined;
    return isObject(e) && epoch !== undefined
      ? [{ epoch, train: finiteNumber(e.train_nll), heldout: finiteNumber(e.heldout_nll) }]
      : [];
  });
}

function warningsOf(metrics: readonly MetricsRow[]): RunWarning[] {
  return metrics.flatMap((m) =>
    Array.isArray(m.raw.warnings)
      ? m.raw.warnings.flatMap((w) =>
          isObject(w) && typeof w.message === "string"
            ? [{ iteration: m.iteration, code: typeof w.code === "string" ? w.code : "warning", message: w.message }]
            : [],
        )
      : [],
  );
}

/** Reads one run directory; throws ReportInputError when it is not one or has no metrics. */
export function loadRun(given: string, cwd: string): RunInfo {
  const dir = path.resolve(cwd, given);
  if (!existsSync(dir)) throw new ReportInputError(`'${given}' does not exist`, 2);
  if (!statSync(dir).isDirectory())
    throw new ReportInputError(
      `'${given}' is not a run directory (it is a file; give the directory that holds plan.json and metrics.jsonl)`,
      2,
    );
  if (!existsSync(path.join(dir, "plan.json"))) {
    const below = runDirsBelow(dir, 3);
    const hint =
      below.length > 0 ? `; run directories below it: ${below.map((d) => path.relative(cwd, d) || d).join(", ")}` : "";
    throw new ReportInputError(`'${given}' is not a run directory (it has no plan.json)${hint}`, 2);
  }
  const notes: string[] = [];
  const planValue = readJsonFile(path.join(dir, "plan.json"), "plan");
  if (!isObject(planValue))
    throw new ReportInputError(`plan '${path.join(given, "plan.json")}' is not a JSON object`, 2);
  const plan = planValue;
  const rollout = isObject(plan.rollout) ? plan.rollout : {};
  const evalPlan = isObject(plan.eval) ? plan.eval : {};
  const reward = isObject(plan.reward) ? plan.reward : {};
  const evalK = Array.isArray(evalPlan.k)
    ? evalPlan.k.filter((k): k is number => Number.isInteger(k) && (k as number) > 0).sort((a, b) => a - b)
    : [];
  const rewardTerms = isObject(reward.terms) ? Object.keys(reward.terms) : [];

  let manifest: JsonObject | null = null;
  const manifestPath = path.join(dir, "manifest.json");
  if (existsSync(manifestPath)) {
    try {
      const m = readJsonFile(manifestPath, "manifest");
      if (isObject(m)) manifest = m;
    } catch (error) {
      if (!(error instanceof ReportInputError)) throw error;
      notes.push(error.message);
    }
  } else {
    notes.push("no manifest.json: the trainer never started, so versions are unknown");
  }

  const metricsPath = path.join(dir, "metrics.jsonl");
  if (!existsSync(metricsPath))
    throw new ReportInputError(
      `run '${given}' has no metrics yet (no metrics.jsonl: no iteration has completed); nothing to report`,
      1,
    );
  let metrics: MetricsRow[] = parseLines(metricsPath, "metrics.jsonl", notes).flatMap((raw) => {
    const iteration = finiteNumber(raw.iteration);
    return iteration === undefined ? [] : [{ iteration, raw }];
  });

  let state: JsonObject | null = null;
  const statePath = path.join(dir, "state.json");
  if (existsSync(statePath)) {
    try {
      const s = readJsonFile(statePath, "state");
      if (isObject(s)) state = s;
    } catch (error) {
      if (!(error instanceof ReportInputError)) throw error;
      notes.push(error.message);
    }
  }
  const committed = finiteNumber(state?.iteration);
  if (committed !== undefined) {
    const uncommitted = metrics.filter((m) => m.iteration > committed).length;
    if (uncommitted > 0) {
      notes.push(
        `${uncommitted} metrics line(s) after the last committed iteration (${committed}) are ignored: the run stopped before committing them`,
      );
      metrics = metrics.filter((m) => m.iteration <= committed);
    }
  }
  if (metrics.length === 0)
    throw new ReportInputError(`run '${given}' has no metrics yet (no iteration has completed); nothing to report`, 1);

  const iterations = committed ?? last(metrics).iteration;
  const plannedIterations = finiteNumber(rollout.iterations) ?? null;
  const partial = plannedIterations !== null && iterations < plannedIterations;
  let evals = readEvalFiles(dir, evalK, notes);
  const beyond = evals.filter((e) => e.iteration > iterations);
  if (beyond.length > 0) {
    notes.push(`eval results of uncommitted iteration(s) ${beyond.map((e) => e.iteration).join(", ")} are ignored`);
    evals = evals.filter((e) => e.iteration <= iterations);
  }
  if (partial)
    notes.unshift(
      `partial run: ${iterations} of ${plannedIterations} iterations committed (interrupted, or still running)`,
    );

  const overrides = Array.isArray(plan.overrides)
    ? plan.overrides.flatMap((o) =>
        isObject(o) && typeof o.path === "string" ? [{ path: o.path, value: o.value ?? null }] : [],
      )
    : [];
  return {
    given,
    dir,
    experiment: typeof plan.experiment === "string" ? plan.experiment : "(unknown experiment)",
    variant: typeof plan.variant === "string" ? plan.variant : "(unknown variant)",
    hash: typeof plan.hash === "string" ? plan.hash : "(no hash)",
    plan,
    description: typeof plan.description === "string" ? plan.description : null,
    overrides,
    seed: finiteNumber(plan.seed) ?? finiteNumber(manifest?.seed) ?? null,
    plannedIterations,
    evalK,
    rewardTerms,
    manifest,
    metrics,
    iterations,
    partial,
    evals,
    preflight: loadPreflight(dir, notes),
    sft: sftEpochs(state?.sft ?? metrics.find((m) => m.raw.sft !== undefined)?.raw.sft),
    warnings: warningsOf(metrics),
    notes,
  };
}

/** Short labels for runs, unique within the report: variant, then experiment/variant, then with the hash. */
export function runLabels(runs: readonly RunInfo[]): string[] {
  const unique = (labels: string[]) => new Set(labels).size === labels.length;
  const candidates = [
    runs.map((r) => r.variant),
    runs.map((r) => `${r.experiment}/${r.variant}`),
    runs.map((r) => `${r.experiment}/${r.variant}@${shortHash(r.hash)}`),
  ];
  const sameExperiment = new Set(runs.map((r) => r.experiment)).size === 1;
  for (const labels of sameExperiment ? candidates : candidates.slice(1)) if (unique(labels)) return labels;
  return runs.map((r, i) => `${r.experiment}/${r.variant}#${i + 1}`);
}

export function shortHash(hash: string): string {
  return hash.startsWith("sha256:") ? hash.slice(7, 19) : hash.slice(0, 12);
}
