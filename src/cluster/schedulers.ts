// Which scheduler answers for a job: the one each submission record names (SLURM, or Ray at the
// address it was submitted to), so that `arl status`, `arl cancel` and `arl submit` ask each
// cluster about its own jobs, whichever scheduler the next submission goes to.
import type { JobStatus } from "./jobs.js";
import { rayScheduler } from "./ray.js";
import type { LatestTask } from "./records.js";
import type { Scheduler, SchedulerName } from "./scheduler.js";
import { slurmScheduler } from "./slurm.js";

type Env = Readonly<Record<string, string | undefined>>;

/** The scheduler of a recorded job: SLURM, or Ray at `address`. */
export function schedulerOf(name: SchedulerName, address: string | undefined, env: Env): Scheduler {
  return name === "ray" ? rayScheduler({ address: address ?? "" }) : slurmScheduler({ extra: [] }, env);
}

/** The scheduler a recorded job was submitted to; `rayAddress` (arl status --address) overrides the recorded one. */
function recordedScheduler(task: LatestTask, env: Env, rayAddress?: string): Scheduler {
  const { submission } = task;
  return schedulerOf(
    submission.scheduler,
    submission.scheduler === "ray" ? (rayAddress ?? submission.address) : undefined,
    env,
  );
}

/**
 * What each recorded job's scheduler says of it. `current` (the scheduler of this submission, else
 * SLURM when nothing is recorded) is asked even for no job: that checks it answers.
 */
export async function recordedJobs(
  tasks: readonly LatestTask[],
  env: Env,
  options: { current?: Scheduler; rayAddress?: string } = {},
): Promise<Map<string, JobStatus>> {
  const groups = new Map<string, { scheduler: Scheduler; ids: string[] }>();
  const key = (s: Scheduler) => `${s.name}\n${s.address ?? ""}`;
  const current = options.current ?? (tasks.length === 0 ? slurmScheduler({ extra: [] }, env) : undefined);
  if (current) groups.set(key(current), { scheduler: current, ids: [] });
  for (const task of tasks) {
    const scheduler = recordedScheduler(task, env, options.rayAddress);
    const k = key(scheduler);
    const group = groups.get(k) ?? { scheduler, ids: [] };
    group.ids.push(task.jobId);
    groups.set(k, group);
  }
  const answers = new Map<string, JobStatus>();
  for (const { scheduler, ids } of groups.values())
    for (const [id, status] of await scheduler.jobs(ids)) answers.set(id, status);
  return answers;
}
