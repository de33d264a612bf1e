// The numbers of a report: eval summaries per iteration (pass@k with its 95% bootstrap interval
// over tasks), wall-time splits, and paired per-task comparisons of runs against a baseline.
import { deriveSeed } from "../contracts/random.js";
import { bootstrapMeanInterval, pairedDifferences, type Interval, type PairedComparison } from "../rl/eval.js";
import { finiteNumber, type EvalFile, type JsonObject, type MetricsRow, type RunInfo } from "./load.js";
import { defined } from "../contracts/checked.js";
import { taskDifferences } from "./task-identity.js";

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
      if (typeof ev === "object" && ev !== null && !Array.isArray(ev))
        for (const key of Object.keys(ev)) {
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
  return bootstrapMeanInterval(perTask, {
    seed: deriveSeed(run.seed ?? 0, "bootstrap", iteration, k),
    resamples: 2000,
  });
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
    if (typeof ev === "object" && ev !== null && !Array.isArray(ev))
      byIteration.set(m.iteration, { ...byIteration.get(m.iteration), recorded: ev });
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
  /** The phases before iteration 1 (base eval, cold start, eval before training), which its total_s counts. */
  readonly before: number;
  /** Eval, checkpointing and bookkeeping: total minus the phases above. */
  readonly other: number;
  readonly total: number;
}

/** The phases before iteration 1 that its metrics line carries and counts in its total_s (runtime/run/metrics.ts). */
export const beforeTrainingPhases = [
  ["base_eval_s", "base eval"],
  ["sft_s", "cold start (SFT)"],
  ["eval_before_s", "eval before training"],
] as const;

function timeOf(m: MetricsRow): JsonObject | undefined {
  const t = m.raw.time;
  return typeof t === "object" && t !== null && !Array.isArray(t) ? t : undefined;
}

/** Seconds of an iteration's line spent before training began (non-zero for iteration 1 only). */
export function secondsBeforeTraining(m: MetricsRow): number {
  const t = timeOf(m);
  return beforeTrainingPhases.reduce((s, [key]) => s + (finiteNumber(t?.[key]) ?? 0), 0);
}

/** The iteration's own wall time: total_s less the phases before training it carries. */
export function iterationSeconds(m: MetricsRow): number | undefined {
  const total = finiteNumber(timeOf(m)?.total_s);
  return total === undefined ? undefined : Math.max(0, total - secondsBeforeTraining(m));
}

export function wallTime(run: RunInfo): WallTime | null {
  let rollout = 0;
  let reward = 0;
  let update = 0;
  let before = 0;
  let total = 0;
  let any = false;
  for (const m of run.metrics) {
    const t = timeOf(m);
    if (!t) continue;
    any = true;
    const r = finiteNumber(t.rollout_s) ?? 0;
    const w = finiteNumber(t.reward_s) ?? 0;
    const u = finiteNumber(t.update_s) ?? 0;
    const b = secondsBeforeTraining(m);
    rollout += r;
    reward += w;
    update += u;
    before += b;
    total += finiteNumber(t.total_s) ?? r + w + u + b;
  }
  if (!any) return null;
  return { rollout, reward, update, before, other: Math.max(0, total - rollout - reward - update - before), total };
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
  /** The runs' envs name other tasks by the same ids, so nothing was paired. */
  readonly otherTasks?: true;
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

/** Which of a run's eval files a comparison reads. */
type EvalPick = (run: RunInfo) => EvalFile | undefined;
const lastEval: EvalPick = (run) => run.evals[run.evals.length - 1];
/** The eval before training: iteration 0, the policy RL starts from (after the cold start, if any). */
const startEval: EvalPick = (run) => run.evals.find((e) => e.iteration === 0);

/** Each task's pass@k in the picked eval of each run, averaged over the runs (the seeds) that scored it. */
function taskScores(runs: readonly RunInfo[], k: number, pick: EvalPick): Map<string, number> {
  const sums = new Map<string, { sum: number; n: number }>();
  for (const run of runs) {
    for (const r of pick(run)?.rows ?? []) {
      const v = r.pass.get(k);
      if (typeof v !== "number") continue;
      const key = taskKey(r.env, r.task);
      const s = sums.get(key) ?? { sum: 0, n: 0 };
      sums.set(key, { sum: s.sum + v, n: s.n + 1 });
    }
  }
  return new Map([...sums].map(([key, { sum, n }]) => [key, sum / n]));
}

/**
 * The paired per-task comparison every difference on the page is: after - before over the tasks
 * both scored, with its 95% paired bootstrap interval over tasks (10,000 resamples). Null when
 * no task was scored by both.
 */
function pairedOverTasks(
  before: ReadonlyMap<string, number>,
  after: ReadonlyMap<string, number>,
  seed: number,
  what: string,
): { tasks: number; result: PairedComparison | null } {
  const keys = [...before.keys()].filter((key) => after.has(key)).sort(compareTaskKeys);
  if (keys.length === 0) return { tasks: 0, result: null };
  const result = pairedDifferences(
    keys.map((key) => defined(before.get(key), `${what}: the first score of task ${key}`)),
    keys.map((key) => defined(after.get(key), `${what}: the second score of task ${key}`)),
    { seed, resamples: 10_000 },
  );
  return { tasks: keys.length, result };
}

const lastEvalIteration = (runs: readonly RunInfo[]): number | null => {
  const its = runs.flatMap((r) => (r.evals.length > 0 ? [r.evals[r.evals.length - 1]?.iteration ?? 0] : []));
  return its.length > 0 ? Math.max(...its) : null;
};

/**
 * Paired per-task differences (variant - baseline) at the runs' last evals, per k both have; a
 * variant of several seeds scores each task by its mean over the seeds. Runs whose envs name
 * other tasks by the same ids (report/task-identity.ts) get a row saying so instead.
 */
export function pairedAgainst(baseline: readonly RunInfo[], variant: readonly RunInfo[], label: string): PairedRow[] {
  const ks = [baseline, variant].map((runs) => [...new Set(runs.flatMap(runKs))]);
  const shared = (ks[0] ?? []).filter((k) => (ks[1] ?? []).includes(k)).sort((a, b) => a - b);
  const common = { label, baselineIteration: lastEvalIteration(baseline), iteration: lastEvalIteration(variant) };
  const rows: PairedRow[] = [];
  // Ids of an env configured otherwise name other tasks (other generated games): nothing pairs.
  const first = baseline[0];
  const differences = first ? [...new Set(variant.flatMap((run) => taskDifferences(first.plan, run.plan)))] : [];
  for (const k of shared) {
    if (differences.length > 0) {
      rows.push({
        ...common,
        k,
        tasks: 0,
        result: null,
        otherTasks: true,
        reason: `not paired: a task id names another task here (${differences.join("; ")}); compare the variants' pass@k over tasks instead`,
      });
      continue;
    }
    if (common.baselineIteration === null || common.iteration === null) {
      rows.push({
        ...common,
        k,
        tasks: 0,
        result: null,
        reason: `${common.baselineIteration === null ? "the baseline" : "this run"} has no per-task eval results (eval/*.jsonl)`,
      });
      continue;
    }
    const paired = pairedOverTasks(
      taskScores(baseline, k, lastEval),
      taskScores(variant, k, lastEval),
      deriveSeed(baseline[0]?.seed ?? 0, "report-paired", k),
      label,
    );
    rows.push({ ...common, k, ...paired, ...(paired.result ? {} : { reason: "no task was evaluated by both runs" }) });
  }
  if (shared.length === 0)
    rows.push({ ...common, k: 0, tasks: 0, result: null, reason: "the runs share no k of pass@k" });
  return rows;
}

/**
 * A variant's pass@k at its runs' last evals as one estimate over tasks, each task its mean over
 * the seeds, with the 95% bootstrap interval over tasks: what compares variants whose tasks are
 * not the same (other generated games: nothing to pair), where pairedAgainst cannot.
 */
export function variantOverTasks(runs: readonly RunInfo[], k: number): Interval | null {
  const scores = [...taskScores(runs, k, lastEval).values()];
  if (scores.length === 0) return null;
  return bootstrapMeanInterval(scores, {
    seed: deriveSeed(runs[0]?.seed ?? 0, "report-variant", k),
    resamples: 10_000,
  });
}

/** RL's own gain: pass@k at the last eval less pass@k before training (iteration 0), paired per task. */
export interface RlGain {
  readonly k: number;
  /** The last eval iteration (the latest over the seeds); null without eval files. */
  readonly iteration: number | null;
  /** Tasks scored both before training and at the last eval. */
  readonly tasks: number;
  /** Mean pass@k over the paired tasks before training and at the last eval (each task its mean over the seeds). */
  readonly before: number | null;
  readonly after: number | null;
  readonly result: PairedComparison | null;
  /** Why there is no result. */
  readonly reason?: string;
}

/**
 * What RL itself added to a variant: each task's pass@k at the runs' last evals against the same
 * task before training (after the cold start: the policy RL started from), over the seeds' mean
 * per task, with the paired bootstrap interval of pairedAgainst. The README's headline gain and
 * the quick-start benchmark's are this number.
 */
export function rlGain(runs: readonly RunInfo[], k: number): RlGain {
  const iteration = lastEvalIteration(runs);
  const none = (reason: string): RlGain => ({
    k,
    iteration,
    tasks: 0,
    before: null,
    after: null,
    result: null,
    reason,
  });
  if (!runs.some((r) => startEval(r)))
    return none("no eval before training (eval.before_training), so RL's own gain cannot be told apart");
  if (iteration === null || iteration <= 0) return none("no eval after training yet");
  const before = taskScores(runs, k, startEval);
  const after = taskScores(runs, k, lastEval);
  const paired = pairedOverTasks(before, after, deriveSeed(runs[0]?.seed ?? 0, "report-rl-gain", k), "RL's gain");
  if (!paired.result) return none(`no task has a pass@${k} both before training and at the last eval`);
  const keys = [...before.keys()].filter((key) => after.has(key));
  const beforeMean = keys.reduce((s, key) => s + (before.get(key) ?? 0), 0) / keys.length;
  return {
    k,
    iteration,
    tasks: paired.tasks,
    before: beforeMean,
    after: beforeMean + paired.result.meanDifference,
    result: paired.result,
  };
}

/** The last eval summary of a run that has pass@k numbers. */
export function finalEval(summaries: readonly EvalSummary[]): EvalSummary | undefined {
  return summaries.findLast((s) => [...s.pass.values()].some((v) => v !== null));
}
