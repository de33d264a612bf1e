// `arl submit`'s work: which variants of a sweep to submit (never run, or stopped and resumable;
// not the finished ones nor those whose job waits or runs), one group per experiment and set of
// resources (a SLURM array job, or a Ray job per variant), each job recorded as soon as the
// scheduler accepted it, so that a refused job leaves an exact account and nothing is ever
// submitted twice (docs/distributed.md, "Sweeps on a cluster", "Sweeps on a Ray cluster").
import path from "node:path";
import type { Plan } from "../plan/schema.js";
import { recordDataRoot } from "../runtime/data-root.js";
import { makeFolders, RunDirectory } from "../runtime/run-dir.js";
import { SchedulerRefused } from "./jobs.js";
import { appendSubmission, jobsFolder, type Submission } from "./records.js";
import type { Scheduler } from "./scheduler.js";
import { recordedJobs } from "./schedulers.js";
import { resourceKey } from "./slurm.js";
import { sweepState, type VariantState } from "./state.js";

export interface SubmitRequest {
  readonly plans: readonly Plan[];
  /** Where run directories go (`arl run --out`): on a file system every node sees. */
  readonly runsRoot: string;
  /** Recorded in each new run directory, as `arl run` does. */
  readonly dataRoot?: string;
  /** Where the jobs go: SLURM (slurm.ts) or Ray (ray.ts). */
  readonly scheduler: Scheduler;
  /** The program and arguments that are `arl` on the cluster's nodes. */
  readonly arl: readonly string[];
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly now?: Date;
}

/** A job (SLURM: an array job) submitted, and the experiment whose jobs folder records it. */
export interface SubmittedArray {
  readonly experiment: string;
  readonly submission: Submission;
}

export interface SubmitOutcome {
  /** The jobs submitted, in order. */
  readonly submitted: readonly SubmittedArray[];
  /** Every variant as it stood before submitting (finished, waiting, running ones are not submitted). */
  readonly before: readonly VariantState[];
}

/** A job the scheduler refused: what was submitted before it stands, nothing after it was. */
export class PartialSubmission extends Error {
  constructor(
    message: string,
    readonly submitted: readonly SubmittedArray[],
    /** The variants not submitted (`experiment/variant`): the refused job's and those after it. */
    readonly notSubmitted: readonly string[],
  ) {
    super(message);
  }
}

export async function submitSweep(request: SubmitRequest): Promise<SubmitOutcome> {
  const now = request.now ?? new Date();
  const { scheduler } = request;
  // The scheduler is asked before anything is written: one that is missing, does not answer or
  // could never run a plan leaves nothing behind.
  await scheduler.check(request.plans);
  const before = await sweepState(request.plans, request.runsRoot, (tasks) =>
    recordedJobs(tasks, request.env, { current: scheduler }),
  );
  const byHash = new Map(request.plans.map((p) => [p.hash, p]));
  const groups = new Map<string, { plan: Plan; state: VariantState }[]>();
  for (const state of before.filter((s) => s.submittable)) {
    const plan = byHash.get(state.hash);
    if (plan === undefined) continue;
    const key = `${plan.experiment}\n${resourceKey(plan)}`;
    groups.set(key, [...(groups.get(key) ?? []), { plan, state }]);
  }
  const submitted: SubmittedArray[] = [];
  const arrays = [...groups.values()];
  for (const [index, members] of arrays.entries()) {
    const first = members[0];
    if (first === undefined) continue;
    const experiment = first.plan.experiment;
    const folder = jobsFolder(request.runsRoot, experiment);
    // The runs' folder first, so that a problem with it names it rather than a folder below.
    makeFolders(request.runsRoot);
    makeFolders(folder);
    const tasks = members.map(({ plan, state }, task) => {
      let runDir = state.runDir;
      if (runDir === undefined) {
        const created = RunDirectory.create(request.runsRoot, plan, now);
        if (request.dataRoot !== undefined) recordDataRoot(created, request.dataRoot);
        runDir = created.dir;
      }
      return {
        task,
        variant: plan.variant,
        hash: plan.hash,
        run_dir: path.resolve(runDir),
        resume: state.iteration > 0,
      };
    });
    const taken = new Set<string>();
    try {
      await scheduler.submit(
        { experiment, resources: first.plan.resources, tasks, folder, arl: request.arl, now },
        (submission) => {
          appendSubmission(folder, submission);
          submitted.push({ experiment, submission });
          for (const t of submission.tasks) taken.add(t.hash);
        },
      );
    } catch (error) {
      if (!(error instanceof SchedulerRefused)) throw error;
      const notSubmitted = [...members.filter((m) => !taken.has(m.plan.hash)), ...arrays.slice(index + 1).flat()].map(
        (m) => `${m.plan.experiment}/${m.plan.variant}`,
      );
      throw new PartialSubmission(error.message, submitted, notSubmitted);
    }
  }
  return { submitted, before };
}
