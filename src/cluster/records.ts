// What `arl submit` records in the experiment's folder, beside the run directories
// (RUNS/<experiment>/jobs/): each batch script exactly as submitted, the tasks' logs, and
// submissions.jsonl, one line per submitted array job (SLURM) or job (Ray) with its job id, its time and which run
// directory each task resumes. With the run directories and the scheduler's own queries this is
// the whole state of a sweep on a cluster (docs/distributed.md, "Sweeps on a cluster").
import { appendFileSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import * as z from "zod";
import { variantFileName } from "../plan/files.js";

const submittedTaskSchema = z.strictObject({
  task: z.number().int().nonnegative(),
  variant: z.string(),
  hash: z.string(),
  run_dir: z.string(),
  /** Whether the run directory had committed iterations when submitted (a resume, not a start). */
  resume: z.boolean(),
});
const submissionSchema = z.strictObject({
  time: z.string(),
  /** SLURM: one array job, a task per variant. Ray: one job of one variant, task i of the script. */
  scheduler: z.enum(["slurm", "ray"]),
  /** Ray: the dashboard's address the job was submitted to (where `arl status` asks about it). */
  address: z.string().optional(),
  job_id: z.string(),
  /** The batch script, in the jobs folder. */
  script: z.string(),
  /** The tasks' log files in the jobs folder, with SLURM's %A (job id) and %a (task). */
  log: z.string(),
  tasks: z.array(submittedTaskSchema),
});
export type SubmittedTask = z.infer<typeof submittedTaskSchema>;
export type Submission = z.infer<typeof submissionSchema>;

const SUBMISSIONS = "submissions.jsonl";

/** RUNS/<experiment>/jobs: the scripts, logs and submission records of one experiment. */
export function jobsFolder(runsRoot: string, experiment: string): string {
  return path.join(runsRoot, variantFileName(experiment), "jobs");
}

/** The submission time in file names: 20260301T101500Z. */
export function timeStamp(now: Date): string {
  return now
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d+Z$/, "Z");
}

/** A new script's path in `folder`, named by the submission time (never an existing file). */
export function newScriptPath(folder: string, now: Date, prefix = "slurm", extension = "sbatch"): string {
  const stamp = timeStamp(now);
  let file = path.join(folder, `${prefix}-${stamp}.${extension}`);
  for (let n = 2; existsSync(file); n++) file = path.join(folder, `${prefix}-${stamp}-${n}.${extension}`);
  return file;
}

/** The submissions recorded in `folder`, oldest first; a line that is not a record (a torn write) is skipped. */
function readSubmissions(folder: string): Submission[] {
  const file = path.join(folder, SUBMISSIONS);
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .split("\n")
    .flatMap((line) => {
      if (line.trim() === "") return [];
      try {
        const parsed = submissionSchema.safeParse(JSON.parse(line));
        return parsed.success ? [parsed.data] : [];
      } catch {
        return [];
      }
    });
}

/** Records a submitted array job, right after the scheduler accepted it (one line, one write). */
export function appendSubmission(folder: string, submission: Submission): void {
  mkdirSync(folder, { recursive: true });
  appendFileSync(path.join(folder, SUBMISSIONS), `${JSON.stringify(submission)}\n`);
}

/** The latest submitted task of a plan: its job's id and log. */
export interface LatestTask {
  readonly submission: Submission;
  readonly task: SubmittedTask;
  /** The scheduler's id of the task (SLURM: `ARRAYJOB_TASK`; Ray: the job's submission id). */
  readonly jobId: string;
  readonly log: string;
}

/** Each plan's (by hash) latest task submitted from `folder` (a jobs folder). */
export function latestTasks(folder: string): Map<string, LatestTask> {
  const latest = new Map<string, LatestTask>();
  for (const submission of readSubmissions(folder)) {
    for (const task of submission.tasks) {
      const log = path.resolve(
        folder,
        submission.log.replace(/%A/g, submission.job_id).replace(/%a/g, String(task.task)),
      );
      const jobId = submission.scheduler === "slurm" ? `${submission.job_id}_${task.task}` : submission.job_id;
      latest.set(task.hash, { submission, task, jobId, log });
    }
  }
  return latest;
}
