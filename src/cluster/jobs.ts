// What ARL reads of a cluster scheduler's jobs, in the scheduler's own words and in the few
// phases `arl status` and `arl submit` decide by (docs/distributed.md, "Sweeps on a cluster").

/** Where a job is: waiting or running, or how it ended. */
export type JobPhase = "pending" | "running" | "completed" | "failed" | "cancelled" | "preempted";

export interface JobStatus {
  /** The scheduler's id of the job (SLURM: `ARRAYJOB_TASK`). */
  readonly id: string;
  /** The scheduler's own word for its state (SLURM: PENDING, RUNNING, CANCELLED, ...). */
  readonly state: string;
  readonly phase: JobPhase;
  /** Why it waits or ended, when the scheduler says (SLURM: Resources, Priority, ...). */
  readonly reason?: string;
}

/** A job that may still run: nothing is submitted again for its variant while it is. */
export function isActive(job: JobStatus | undefined): boolean {
  return job?.phase === "pending" || job?.phase === "running";
}

/** The scheduler is not installed on this machine, or does not answer: one line for the user. */
export class SchedulerUnavailable extends Error {}

/** The scheduler refused a submission (a resource it does not have, a bad option): its own message. */
export class SchedulerRefused extends Error {}
