// Where each variant of a sweep on a cluster stands, read from its newest run directory, the
// submission records and the scheduler's own answer about the job: nothing else is kept
// (docs/distributed.md, "Sweeps on a cluster").
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import type { Plan } from "../plan/schema.js";
import { runsByPlanHash } from "../report/inputs.js";
import { RunDirectory, RunDirectoryError } from "../runtime/run-dir.js";
import { isActive, type JobStatus } from "./jobs.js";
import { jobsFolder, latestTasks, type LatestTask } from "./records.js";
import type { SchedulerName } from "./scheduler.js";

export type VariantPhase = "not submitted" | "pending" | "running" | "finished" | "failed" | "preempted" | "cancelled";

export interface VariantState {
  readonly experiment: string;
  readonly variant: string;
  readonly hash: string;
  readonly phase: VariantPhase;
  /** The newest run directory of the variant's plan, if any. */
  readonly runDir?: string;
  /** Iterations committed in it, and the plan's. */
  readonly iteration: number;
  readonly iterations: number;
  /** The latest job submitted for the variant, and what the scheduler says of it (absent when it no longer knows it). */
  readonly job?: {
    readonly id: string;
    readonly log: string;
    readonly scheduler: SchedulerName;
    readonly address?: string;
    readonly status?: JobStatus;
  };
  /** Why the variant is in its phase, when that is more than the phase says. */
  readonly detail?: string;
  /** The last lines of the job's log (failed, preempted and cancelled variants). */
  readonly logTail?: readonly string[];
  /** Whether `arl submit` submits it: never run, or stopped and resumable. */
  readonly submittable: boolean;
}

/** How many of a log's last lines `arl status` shows. */
const LOG_TAIL_LINES = 8;

/** The lines of the latest attempt in a task's log (an appended log holds every attempt), the last ones. */
function logTail(file: string): string[] {
  if (!existsSync(file)) return [];
  const lines = readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "");
  const start = lines.findLastIndex((l) => l.startsWith("arl submit: task "));
  return lines.slice(Math.max(start, 0)).slice(-LOG_TAIL_LINES);
}

/** What the run directory says: committed iterations, and whether the run is complete or cannot go on. */
function runProgress(dir: string, plan: Plan): { iteration: number; complete: boolean; refused?: string } {
  const run = RunDirectory.open(dir);
  const { iteration } = run.readState();
  if (run.readPreflight()?.passed === false)
    return {
      iteration,
      complete: false,
      refused: `its preflight failed (${path.join(dir, "preflight.json")}): the same plan fails the same way`,
    };
  if (iteration >= plan.rollout.iterations) return { iteration, complete: true };
  // The watchdog's stop (on_no_signal: stop) ends a run complete: its last line says so.
  const last = run.readMetrics().at(-1) as { warnings?: { code?: string }[] } | undefined;
  const watchdogStop =
    plan.rollout.watchdog.on_no_signal === "stop" && (last?.warnings ?? []).some((w) => w.code === "no-signal");
  return { iteration, complete: watchdogStop };
}

/**
 * A job the scheduler no longer knows: how it ended. SLURM: from the lines slurmstepd writes into
 * its log. Ray forgets its jobs when its head restarts: the cluster's doing, resumable.
 */
function endedFromLog(latest: LatestTask, tail: readonly string[]): VariantPhase {
  if (latest.submission.scheduler === "ray") return "preempted";
  const text = tail.join("\n");
  if (/CANCELLED AT \S+ DUE TO (TIME LIMIT|PREEMPTION)/.test(text)) return "preempted";
  if (/CANCELLED AT/.test(text)) return "cancelled";
  return "failed";
}

function jobPhase(
  latest: LatestTask,
  status: JobStatus | undefined,
  tail: readonly string[],
): { phase: VariantPhase; detail?: string } {
  if (status === undefined)
    return {
      phase: endedFromLog(latest, tail),
      detail: `${latest.submission.scheduler === "ray" ? `Ray at ${latest.submission.address ?? "?"}` : "SLURM"} no longer knows job ${latest.jobId}`,
    };
  switch (status.phase) {
    case "pending":
    case "running":
    case "cancelled":
    case "preempted":
    case "failed":
      return { phase: status.phase };
    case "completed":
      // The job ended well before its run did: arl stopped at the time limit's warning (SIGINT).
      return {
        phase: "preempted",
        detail: `job ${latest.jobId} ${status.state} before its run did${latest.submission.scheduler === "slurm" ? " (stopped before its time limit)" : ""}`,
      };
  }
}

/**
 * Each plan's state, in the order of `plans`. `jobs` asks the schedulers about the latest job of
 * each plan (ids they no longer know are absent from the answer).
 */
export async function sweepState(
  plans: readonly Plan[],
  runsRoot: string,
  jobs: (tasks: readonly LatestTask[]) => Promise<Map<string, JobStatus>>,
): Promise<VariantState[]> {
  const experiments = [...new Set(plans.map((p) => p.experiment))];
  const runs = runsByPlanHash(experiments, runsRoot);
  const latest = new Map<string, LatestTask>();
  for (const experiment of experiments)
    for (const [hash, task] of latestTasks(jobsFolder(runsRoot, experiment))) latest.set(hash, task);
  const submitted = plans.flatMap((p) => latest.get(p.hash) ?? []);
  const answers = await jobs(submitted);
  return plans.map((plan): VariantState => {
    const base = {
      experiment: plan.experiment,
      variant: plan.variant,
      hash: plan.hash,
      iterations: plan.rollout.iterations,
    };
    const runDir = runs.get(plan.hash)?.at(-1);
    const task = latest.get(plan.hash);
    const status = task ? answers.get(task.jobId) : undefined;
    const where = task
      ? {
          scheduler: task.submission.scheduler,
          ...(task.submission.address !== undefined ? { address: task.submission.address } : {}),
        }
      : undefined;
    const job =
      task && where ? { job: { id: task.jobId, log: task.log, ...where, ...(status ? { status } : {}) } } : {};
    let progress: ReturnType<typeof runProgress> = { iteration: 0, complete: false };
    if (runDir !== undefined) {
      try {
        progress = runProgress(runDir, plan);
      } catch (error) {
        if (!(error instanceof RunDirectoryError)) throw error;
        return { ...base, ...job, runDir, iteration: 0, phase: "failed", detail: error.message, submittable: false };
      }
    }
    const common = { ...base, ...job, ...(runDir !== undefined ? { runDir } : {}), iteration: progress.iteration };
    if (progress.complete) return { ...common, phase: "finished", submittable: false };
    if (isActive(status))
      return {
        ...common,
        phase: status?.phase === "running" ? "running" : "pending",
        ...(status?.reason ? { detail: status.reason } : {}),
        submittable: false,
      };
    if (progress.refused !== undefined)
      return { ...common, phase: "failed", detail: progress.refused, submittable: false };
    if (task === undefined) {
      const detail =
        runDir !== undefined
          ? `an unfinished run (iteration ${progress.iteration} of ${plan.rollout.iterations}); arl submit resumes it`
          : undefined;
      return { ...common, phase: "not submitted", ...(detail ? { detail } : {}), submittable: true };
    }
    const tail = logTail(task.log);
    const ended = jobPhase(task, status, tail);
    // arl run printed why its run cannot go on: submitting it again would fail the same way.
    const refused = tail.find((l) => l.startsWith("not resumable:"));
    return {
      ...common,
      phase: refused ? "failed" : ended.phase,
      ...(ended.detail ? { detail: ended.detail } : {}),
      logTail: tail,
      submittable: refused === undefined,
    };
  });
}
