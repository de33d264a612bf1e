// `arl submit`'s work: which variants of a sweep to submit (never run, or stopped and resumable;
// not the finished ones nor those whose job waits or runs), one SLURM array job per experiment
// and set of resources, each recorded as soon as the scheduler accepted it, so that a refused
// array leaves an exact account and nothing is ever submitted twice (docs/distributed.md,
// "Sweeps on a cluster").
import path from "node:path";
import { writeFileAtomic } from "../plan/files.js";
import type { Plan } from "../plan/schema.js";
import { recordDataRoot } from "../runtime/data-root.js";
import { makeFolders, RunDirectory } from "../runtime/run-dir.js";
import { SchedulerRefused } from "./jobs.js";
import { appendSubmission, jobsFolder, newScriptPath, type Submission } from "./records.js";
import { requireSlurmCommands, resourceKey, sbatch, slurmJobs, slurmScript, type SlurmOptions } from "./slurm.js";
import { sweepState, type VariantState } from "./state.js";

export interface SubmitRequest {
  readonly plans: readonly Plan[];
  /** Where run directories go (`arl run --out`): on a file system every node sees. */
  readonly runsRoot: string;
  /** Recorded in each new run directory, as `arl run` does. */
  readonly dataRoot?: string;
  readonly slurm: SlurmOptions;
  /** The program and arguments that are `arl` on the cluster's nodes. */
  readonly arl: readonly string[];
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly now?: Date;
}

/** An array job submitted, and the experiment whose jobs folder records it. */
export interface SubmittedArray {
  readonly experiment: string;
  readonly submission: Submission;
}

export interface SubmitOutcome {
  /** The array jobs submitted, in order. */
  readonly submitted: readonly SubmittedArray[];
  /** Every variant as it stood before submitting (finished, waiting, running ones are not submitted). */
  readonly before: readonly VariantState[];
}

/** An array job the scheduler refused: what was submitted before it stands, nothing after it was. */
export class PartialSubmission extends Error {
  constructor(
    message: string,
    readonly submitted: readonly SubmittedArray[],
    /** The variants not submitted (`experiment/variant`): the refused array's and those after it. */
    readonly notSubmitted: readonly string[],
  ) {
    super(message);
  }
}

export async function submitSweep(request: SubmitRequest): Promise<SubmitOutcome> {
  const now = request.now ?? new Date();
  // The scheduler is asked before anything is written: one that is missing or does not answer leaves nothing behind.
  requireSlurmCommands(["squeue", "sbatch"], request.env);
  const before = await sweepState(request.plans, request.runsRoot, (ids) => slurmJobs(ids, request.env));
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
    const log = path.join(folder, "slurm-%A_%a.out");
    const script = newScriptPath(folder, now);
    const time = now.toISOString();
    writeFileAtomic(
      script,
      slurmScript(
        {
          experiment,
          resources: first.plan.resources,
          tasks: tasks.map((t) => ({ variant: t.variant, runDir: t.run_dir })),
          log,
          arl: request.arl,
          submittedAt: time,
        },
        request.slurm,
      ),
    );
    let jobId: string;
    try {
      jobId = await sbatch(script, request.env);
    } catch (error) {
      if (!(error instanceof SchedulerRefused)) throw error;
      const notSubmitted = arrays.slice(index).flatMap((g) => g.map((m) => `${m.plan.experiment}/${m.plan.variant}`));
      const variants = members.map((m) => m.plan.variant).join(", ");
      throw new PartialSubmission(
        `SLURM refused the array job of ${experiment} (${variants}; script ${script}): ${error.message}`,
        submitted,
        notSubmitted,
      );
    }
    const submission: Submission = {
      time,
      scheduler: "slurm",
      job_id: jobId,
      script: path.basename(script),
      log: path.basename(log),
      tasks,
    };
    appendSubmission(folder, submission);
    submitted.push({ experiment, submission });
  }
  return { submitted, before };
}
