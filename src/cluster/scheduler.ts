// What `arl submit`, `arl status` and `arl cancel` need of a cluster's scheduler, whichever it is:
// SLURM (slurm.ts) and Ray (ray.ts) are the two peers behind it (docs/distributed.md, "Sweeps on
// a cluster" and "Sweeps on a Ray cluster"). The rest (which variants to submit, the records, the
// state of a sweep) is the same for both.
import type { Plan } from "../plan/schema.js";
import type { JobStatus } from "./jobs.js";
import type { Submission } from "./records.js";

export type SchedulerName = Submission["scheduler"];

/** Variants of one experiment with the same resources, each with the run directory its job resumes. */
export interface JobGroup {
  readonly experiment: string;
  readonly resources: Plan["resources"];
  readonly tasks: readonly {
    readonly task: number;
    readonly variant: string;
    readonly hash: string;
    readonly run_dir: string;
    readonly resume: boolean;
  }[];
  /** The experiment's jobs folder, where the script and logs go. */
  readonly folder: string;
  /** The program and arguments that are `arl` on the cluster's nodes. */
  readonly arl: readonly string[];
  readonly now: Date;
}

export interface Scheduler {
  readonly name: SchedulerName;
  /** The scheduler's name in messages: SLURM, Ray. */
  readonly label: string;
  /** Where it is asked, when that is an address (Ray's dashboard). */
  readonly address?: string;
  /**
   * Refuses, before anything is written, a scheduler that is missing or does not answer
   * (SchedulerUnavailable) or that could never run one of `plans` (SchedulerRefused).
   */
  check(plans: readonly Plan[]): Promise<void>;
  /** The state of each job of `ids` the scheduler still knows; asking for none checks that it answers. */
  jobs(ids: readonly string[]): Promise<Map<string, JobStatus>>;
  /** Ends the jobs of `ids` (SIGTERM to `arl run`, which keeps what it committed). */
  cancel(ids: readonly string[]): Promise<void>;
  /**
   * Writes the group's script into its jobs folder and submits its tasks, calling `accepted` with
   * each submission the scheduler took, at once; a refusal is SchedulerRefused, with the
   * scheduler's own message, after the submissions it took before it.
   */
  submit(group: JobGroup, accepted: (submission: Submission) => void): Promise<void>;
}
