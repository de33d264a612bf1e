// The numbers of a report: eval summaries per iteration (pass@k with its 95% bootstrap interval
// over tasks), wall-time splits, and paired per-task comparisons of runs against a baseline.
import { deriveSeed } from "../contracts/random.js";
import { bootstrapMeanInterval, pairedDifferences, type Interval, type PairedComparison } from "../rl/eval.js";
import { finiteNumber, type EvalFile, type JsonObject, type RunInfo } from "./load.js";
import { defined } from "../contracts/checked.js";

export interface EvalSummary {
  readonly iteration: number;
  /** Tasks in the eval file (undefined when only metrics.jsonl recorded this eval). */
  readonly tasks?: number;
  readonly envErrors?: number;
  /** metrics: as the run recorded it; recomputed: from eval/iteration-NNNNN.jsonl. */
  readonly source: "metrics" | "recomputed";
  readonly pass: ReadonlyMap<number, Interval | null>;
}

/** The k values of a run: the plan's, else those found in its eval records. */
export function runKs(run: RunInfo): number[] {
  const ks = new Set(run.evalK);
  if (ks.size === 0) {
    for (const e of run.evals) for (const r of e.rows) for (const k of r.pass.keys()) ks.add(k);
    for (const m of run.metrics) {
      const ev = m.raw.eval;
      if (typeof ev === "object" && ev !== null && !Array.isArray(ev)) for (const key of Object.keys(ev)) {
        const km = /^pass@(\d+)$/.exec(key);
        if (km) ks.add(Number(km[1]));
      }
    }
  }
  return [...ks].sort((a, b) => a - b);
}

/** The seed and resamples the orchestrator uses, so that a recomputed interval equals the recorded one. */
function evalInterval(run: RunInfo, iteration: number, k: number, perTask: readonly number[]): Interval | null {
  if (perTask.length === 0) return null;
  return bootstrapMeanInterval(perTask, { seed: deriveSeed(run.seed ?? 0, "bootstrap", iteration, k), resamples: 2000 });
}

function perTaskScores(file: EvalFile, k: number): number[] {
  return file.rows.map((r) => r.pass.get(k)).filter((x): x is number => typeof x === "number");
}

/** Every eval of a run, in iteration order: metrics.eval where recorded, else recomputed from the eval file. */
export function evalSummaries(run: RunInfo): EvalSummary[] {
  const ks = runKs(run);
  const byIteration = new Map<number, { file?: EvalFile; recorded?: JsonObject }>();
  for (const file of run.evals) byIteration.set(file.iteration, { file });
  for (const m of run.metrics) {
    const ev = m.raw.eval;
    if (typeof ev === "object" && ev !== null && !Array.isArray(ev)) byIteration.set(m.iteration, { ...byIteration.get(m.iteration), recorded: ev });
  }
  const out: EvalSummary[] = [];
  for (const [iteration, { file, recorded }] of [...byIteration].sort(([a], [b]) => a - b)) {
    const pass = new Map<number, Interval | null>();
    let usedRecorded = false;
    for (const k of ks) {
      const estimate = finiteNumber(recorded?.[`pass@${k}`]);
      const low = finiteNumber(recorded?.[`pass@${k}_low`]);
      const high = finiteNumber(recorded?.[`pass@${k}_high`]);
      if (estimate !== undefined && low !== undefined && high !== undefined) {
        pass.set(k, { estimate, low, high });
        usedRecorded = true;
      } else if (file) {
        pass.set(k, evalInterval(run, iteration, k, perTaskScores(file, k)));
      } else {
        pass.set(k, null);
      }
    }
    out.push({
      iteration,
      ...(file ? { tasks: file.rows.length, envErrors: file.rows.reduce((s, r) => s + r.envErrors, 0) } : {}),
      source: usedRecorded ? "metrics" : "recomputed",
      pass,
    });
  }
  return out;
}

export interface WallTime {
  readonly rollout: number;
  readonly reward: number;
  readonly update: number;
  /** Eval, checkpointing and bookkeeping: total minus the three phases. */
  readonly other: number;
  readonly total: number;
}

export function wallTime(run: RunInfo): WallTime | null {
  let rollout = 0;
  let reward = 0;
  let update = 0;
  let total = 0;
  let any = false;
  for (const m of run.metrics) {
    const t = m.raw.time;
    if (typeof t !== "object" || t === null || Array.isArray(t)) continue;
    any = true;
    const r = finiteNumber(t.rollout_s) ?? 0;
    const w = finiteNumber(t.reward_s) ?? 0;
    const u = finiteNumber(t.update_s) ?? 0;
    rollout += r;
    reward += w;
    update += u;
    total += finiteNumber(t.total_s) ?? r + w + u;
  }
  if (!any) return null;
  return { rollout, reward, update, other: Math.max(0, total - rollout - reward - update), total };
}

export interface PairedRow {
  /** The variant compared with the baseline. */
  readonly label: string;
  readonly k: number;
  /** The last eval iteration of the baseline's runs and of this variant's (the latest over its seeds). */
  readonly baselineIteration: number | null;
  readonly iteration: number | null;
  /** Tasks both variants evaluated with a pass@k score at their last eval. */
  readonly tasks: number;
  readonly result: PairedComparison | null;
  /** Why there is no result. */
  readonly reason?: string;
}

function taskKey(env: string, task: string): string {
  return `${env}\u0000${task}`;
}

function compareTaskKeys(a: string, b: string): number {
  const [ea, ta] = a.split("\u0000") as [string, string];
  const [eb, tb] = b.split("\u0000") as [string, string];
  if (ea !== eb) return ea < eb ? -1 : 1;
  const na = Number(ta);
  const nb = Number(tb);
  if (Number.isFinite(na) && Number.isFinite(nb) && na !== nb) return na - nb;
  return ta < tb ? -1 : ta > tb ? 1 : 0;
}

/** Each task's pass@k at the runs' last evals, averaged over the runs (the seeds) that scored it. */
function taskScores(runs: readonly RunInfo[], k: number): Map<string, number> {
  const sums = new Map<string, { sum: number; n: number }>();
  for (const run of runs) {
    const file = run.evals[run.evals.length - 1];
    for (const r of file?.rows ?? []) {
      const v = r.pass.get(k);
      if (typeof v !== "number") continue;
      const key = taskKey(r.env, r.task);
      const s = sums.get(key) ?? { sum: 0, n: 0 };
      sums.set(key, { sum: s.sum + v, n: s.n + 1 });
    }
  }
  return new Map([...sums].map(([key, { sum, n }]) => [key, sum / n]));
}

const lastEvalIteration = (runs: readonly RunInfo[]): number | null => {
  const its = runs.flatMap((r) => (r.evals.length > 0 ? [r.evals[r.evals.length - 1]?.iteration ?? 0] : []));
  return its.length > 0 ? Math.max(...its) : null;
};

/**
 * Paired per-task differences (variant - baseline) at the runs' last evals, per k both have; a
 * variant of several seeds scores each task by its mean over the seeds.
 */
export function pairedAgainst(baseline: readonly RunInfo[], variant: readonly RunInfo[], label: string): PairedRow[] {
  const ks = [baseline, variant].map((runs) => [...new Set(runs.flatMap(runKs))]);
  const shared = (ks[0] ?? []).filter((k) => (ks[1] ?? []).includes(k)).sort((a, b) => a - b);
  const common = { label, baselineIteration: lastEvalIteration(baseline), iteration: lastEvalIteration(variant) };
  const rows: PairedRow[] = [];
  for (const k of shared) {
    if (common.baselineIteration === null || common.iteration === null) {
      rows.push({ ...common, k, tasks: 0, result: null, reason: `${common.baselineIteration === null ? "the baseline" : "this run"} has no per-task eval results (eval/*.jsonl)` });
      continue;
    }
    const scoresA = taskScores(baseline, k);
    const scoresB = taskScores(variant, k);
    const keys = [...scoresA.keys()].filter((key) => scoresB.has(key)).sort(compareTaskKeys);
    if (keys.length === 0) {
      rows.push({ ...common, k, tasks: 0, result: null, reason: "no task was evaluated by both runs" });
      continue;
    }
    const result = pairedDifferences(
      keys.map((key) => defined(scoresA.get(key), `the baseline's score of task ${key}`)),
      keys.map((key) => defined(scoresB.get(key), `${label}'s score of task ${key}`)),
      { seed: deriveSeed(baseline[0]?.seed ?? 0, "report-paired", k), resamples: 10_000 },
    );
    rows.push({ ...common, k, tasks: keys.length, result });
  }
  if (shared.length === 0) rows.push({ ...common, k: 0, tasks: 0, result: null, reason: "the runs share no k of pass@k" });
  return rows;
}

/** The last eval summary of a run that has pass@k numbers. */
export function finalEval(summaries: readonly EvalSummary[]): EvalSummary | undefined {
  return summaries.findLast((s) => [...s.pass.values()].some((v) => v !== null));
}
