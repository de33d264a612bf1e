// SLURM through its own commands, as a user would type them (docs/distributed.md, "Sweeps on a
// cluster"): the batch script of one array job, `sbatch` to submit it, `squeue` (and `sacct`
// where the cluster keeps accounting) to read where its tasks are, `scancel` to end them.
import { execa } from "execa";
import { accessSync, constants, statSync } from "node:fs";
import path from "node:path";
import { writeFileAtomic } from "../plan/files.js";
import type { Plan } from "../plan/schema.js";
import { SchedulerRefused, SchedulerUnavailable, type JobPhase, type JobStatus } from "./jobs.js";
import { newScriptPath } from "./records.js";
import type { Scheduler } from "./scheduler.js";

/** The scheduler's options `arl submit` takes (none is part of a plan). */
export interface SlurmOptions {
  readonly partition?: string;
  readonly account?: string;
  /** The time limit of each task, in sbatch's form (`MINUTES`, `HH:MM:SS`, `D-HH`, ...). */
  readonly time?: string;
  /** CPUs of each task; default 1 for the embedded CPU trainer, the cluster's default otherwise. */
  readonly cpusPerTask?: number;
  /** More `#SBATCH` lines, written last (sbatch takes the last of a repeated option). */
  readonly extra: readonly string[];
}

/** One array job: variants of one experiment with the same resources; task i resumes runs[i]. */
interface ArrayJob {
  readonly experiment: string;
  /** Resources of every task (the variants of one array job ask the same). */
  readonly resources: Plan["resources"];
  readonly tasks: readonly { readonly variant: string; readonly runDir: string }[];
  /** The log file of each task (SLURM's `%A_%a` pattern). */
  readonly log: string;
  /** The program and arguments that are `arl` on the cluster's nodes. */
  readonly arl: readonly string[];
  readonly submittedAt: string;
}

/** Seconds before the time limit at which a task is told to stop after its current iteration. */
export const STOP_BEFORE_TIME_LIMIT_S = 120;

type Env = Readonly<Record<string, string | undefined>>;

/** What the tasks of one array job share: plans whose resources are equal go into one array. */
export function resourceKey(plan: Plan): string {
  return JSON.stringify(plan.resources);
}

/** GPUs a task uses on each node: the trainer's, and the inference servers the run launches. */
export function gpusPerNode(resources: Plan["resources"]): number {
  const servers =
    resources.rollout.engine !== "trainer" && resources.rollout.launch
      ? resources.rollout.servers * resources.rollout.gpus_per_server
      : 0;
  return Math.ceil((resources.gpus + servers) / resources.nodes);
}

/** A word the shell reads back as itself. */
export function shellWord(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}

/**
 * The batch script of one array job. Every task resumes its run directory (a new one starts at
 * iteration 1), so the script can be submitted again by hand, and a requeued task continues from
 * its last committed iteration.
 */
function slurmScript(job: ArrayJob, options: SlurmOptions): string {
  const { resources } = job;
  const multiNode = resources.nodes > 1;
  const gpus = gpusPerNode(resources);
  const cpus = options.cpusPerTask ?? (resources.backend === "local" ? 1 : undefined);
  const sbatch = [
    `--job-name=arl-${job.experiment}`,
    `--array=0-${job.tasks.length - 1}`,
    `--output=${job.log}`,
    "--open-mode=append",
    `--nodes=${resources.nodes}`,
    "--ntasks-per-node=1",
    ...(cpus !== undefined ? [`--cpus-per-task=${cpus}`] : []),
    ...(gpus > 0 ? [`--gpus-per-node=${gpus}`] : []),
    "--requeue",
    ...(options.partition !== undefined ? [`--partition=${options.partition}`] : []),
    ...(options.account !== undefined ? [`--account=${options.account}`] : []),
    ...(options.time !== undefined
      ? [`--time=${options.time}`, `--signal=${multiNode ? "" : "B:"}INT@${STOP_BEFORE_TIME_LIMIT_S}`]
      : []),
    ...options.extra,
  ];
  const arl = job.arl.map(shellWord).join(" ");
  const width = Math.max(...job.tasks.map((t) => shellWord(t.runDir).length));
  const launch = multiNode
    ? [
        "# node 0's address and a port free on it; srun starts one arl run per node, SLURM_NODEID its rank",
        'export MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)',
        "export MASTER_PORT=${MASTER_PORT:-29500}",
        "# node 0 runs the runtime and resumes the run directory; the others start trainer workers from its plan",
        "export ARL_RUN=$run",
        `exec srun --kill-on-bad-exit=1 bash -c 'if [ "$SLURM_NODEID" = 0 ]; then exec "$@" --resume "$ARL_RUN"; else exec "$@" "$ARL_RUN/plan.json"; fi' arl ${arl} run`,
      ]
    : ["exec " + `${arl} run --resume "$run"`];
  return [
    "#!/bin/bash",
    `# Written by arl submit at ${job.submittedAt}: experiment ${job.experiment}, ${job.tasks.length} variant${job.tasks.length === 1 ? "" : "s"}, one array task per variant.`,
    "# Each task resumes its run directory (a new one starts at iteration 1): submit this file again",
    "# with sbatch to rerun it by hand; a requeued task continues from its last committed iteration.",
    ...sbatch.map((o) => `#SBATCH ${o}`),
    "set -euo pipefail",
    "runs=(",
    ...job.tasks.map((t, i) => `  ${shellWord(t.runDir).padEnd(width)}  # ${i}: ${job.experiment}/${t.variant}`),
    ")",
    "run=${runs[$SLURM_ARRAY_TASK_ID]}",
    'echo "arl submit: task $SLURM_ARRAY_TASK_ID of job $SLURM_ARRAY_JOB_ID on $(hostname) at $(date -u +%Y-%m-%dT%H:%M:%SZ), run directory $run"',
    ...launch,
    "",
  ].join("\n");
}

/** A program's file on the PATH of `env`, or undefined. */
function onPath(program: string, env: Env): string | undefined {
  for (const dir of (env.PATH ?? "").split(path.delimiter).filter(Boolean)) {
    const file = path.join(dir, program);
    try {
      accessSync(file, constants.X_OK);
      if (statSync(file).isFile()) return file;
    } catch {
      // not in this folder
    }
  }
  return undefined;
}

/** Refuses, before anything is written, a machine that lacks one of the SLURM commands `programs`. */
function requireSlurmCommands(programs: readonly string[], env: Env): void {
  const missing = programs.find((p) => onPath(p, env) === undefined);
  if (missing !== undefined) {
    throw new SchedulerUnavailable(
      `SLURM is not installed here ('${missing}' is not on PATH); submit from a machine of the cluster (its login node), or run the sweep on this machine with 'arl run SPEC --jobs N'`,
    );
  }
}

/** Runs one of SLURM's commands; a missing command or a controller that does not answer is SchedulerUnavailable. */
async function slurm(
  program: string,
  args: readonly string[],
  env: Env,
): Promise<{ ok: boolean; stdout: string; stderr: string }> {
  const result = await execa(program, args, { env: { ...env }, extendEnv: false, reject: false, stdin: "ignore" });
  if ((result.cause as { code?: string } | undefined)?.code === "ENOENT") {
    throw new SchedulerUnavailable(
      `SLURM is not installed here ('${program}' is not on PATH); submit from a machine of the cluster (its login node), or run the sweep on this machine with 'arl run SPEC --jobs N'`,
    );
  }
  const stderr = result.stderr.trim();
  if (result.exitCode === undefined)
    throw new SchedulerUnavailable(`'${program}' could not be run: ${result.shortMessage}`);
  if (
    result.exitCode !== 0 &&
    /Unable to contact slurm controller|Unable to process configuration file|Socket timed out|Connection refused/i.test(
      stderr,
    )
  ) {
    throw new SchedulerUnavailable(
      `the SLURM controller does not answer (${program}: ${stderr.split("\n").pop() ?? ""}); check that slurmctld is up ('scontrol ping')`,
    );
  }
  return { ok: result.exitCode === 0, stdout: result.stdout, stderr };
}

/** Submits a batch script; its job id. A refusal carries sbatch's own message. */
async function sbatch(script: string, env: Env): Promise<string> {
  const result = await slurm("sbatch", ["--parsable", script], env);
  // --parsable prints `JOBID` or `JOBID;CLUSTER`.
  const id = /^(\d+)/.exec(result.stdout.trim())?.[1];
  if (!result.ok || id === undefined)
    throw new SchedulerRefused(
      result.stderr.replace(/^sbatch: error: /gm, "") || `sbatch printed no job id (${result.stdout.trim()})`,
    );
  return id;
}

/** SLURM's job states in the phases ARL decides by (squeue(1), "JOB STATE CODES"). */
function phaseOf(state: string): JobPhase {
  const word = state.split(/\s/)[0] ?? state;
  if (/^(PENDING|REQUEUED|REQUEUE_FED|REQUEUE_HOLD|CONFIGURING|RESV_DEL_HOLD|SPECIAL_EXIT|RESIZING)$/.test(word))
    return "pending";
  if (/^(RUNNING|COMPLETING|SUSPENDED|STOPPED|SIGNALING|STAGE_OUT|UPDATE_DB)$/.test(word)) return "running";
  if (word === "COMPLETED") return "completed";
  if (word === "CANCELLED") return "cancelled";
  if (/^(PREEMPTED|TIMEOUT|NODE_FAIL|BOOT_FAIL|DEADLINE)$/.test(word)) return "preempted";
  return "failed";
}

/**
 * The state of each job of `ids` (`ARRAYJOB_TASK`) the scheduler still knows: squeue for jobs
 * waiting, running and recently ended (MinJobAge), sacct for older ones where the cluster keeps
 * accounting. A job in neither is absent. Queries SLURM even for no ids: that checks it answers.
 */
async function slurmJobs(ids: readonly string[], env: Env): Promise<Map<string, JobStatus>> {
  const jobs = new Map<string, JobStatus>();
  // One line per array task (-r), every state, this user's jobs only.
  const queue = await slurm("squeue", ["--noheader", "--array", "--me", "--states=all", "--format=%i|%T|%r"], env);
  if (!queue.ok) throw new SchedulerUnavailable(`squeue failed: ${queue.stderr.split("\n").pop() ?? ""}`);
  const wanted = new Set(ids);
  for (const line of queue.stdout.split("\n")) {
    const [id, state, reason] = line.trim().split("|");
    if (id === undefined || state === undefined || !wanted.has(id)) continue;
    jobs.set(id, { id, state, phase: phaseOf(state), ...(reason && reason !== "None" ? { reason } : {}) });
  }
  const older = ids.filter((id) => !jobs.has(id));
  if (older.length > 0) {
    // Without accounting (AccountingStorageType=none) sacct fails: those jobs stay unknown.
    const accounting = await slurm(
      "sacct",
      ["--noheader", "--parsable2", "--allocations", `--jobs=${older.join(",")}`, "--format=JobID,State"],
      env,
    );
    for (const line of accounting.ok ? accounting.stdout.split("\n") : []) {
      const [id, state] = line.trim().split("|");
      if (id !== undefined && state !== undefined && wanted.has(id)) jobs.set(id, { id, state, phase: phaseOf(state) });
    }
  }
  return jobs;
}

/** Cancels jobs (`ARRAYJOB_TASK`); SLURM sends SIGTERM, then SIGKILL after its KillWait. */
async function scancel(ids: readonly string[], env: Env): Promise<void> {
  if (ids.length === 0) return;
  const result = await slurm("scancel", [...ids], env);
  if (!result.ok) throw new SchedulerRefused(result.stderr.replace(/^scancel: error: /gm, ""));
}

/** SLURM behind the scheduler interface: one array job per group, a task per variant. */
export function slurmScheduler(options: SlurmOptions, env: Env): Scheduler {
  return {
    name: "slurm",
    label: "SLURM",
    // Whether the controller answers is asked with the sweep's jobs, next, before anything is written.
    check() {
      requireSlurmCommands(["squeue", "sbatch"], env);
      return Promise.resolve();
    },
    jobs: (ids) => slurmJobs(ids, env),
    cancel: (ids) => scancel(ids, env),
    async submit(group, accepted) {
      const log = path.join(group.folder, "slurm-%A_%a.out");
      const script = newScriptPath(group.folder, group.now);
      const time = group.now.toISOString();
      const tasks = group.tasks.map((t) => ({ variant: t.variant, runDir: t.run_dir }));
      writeFileAtomic(
        script,
        slurmScript(
          { experiment: group.experiment, resources: group.resources, tasks, log, arl: group.arl, submittedAt: time },
          options,
        ),
      );
      let jobId: string;
      try {
        jobId = await sbatch(script, env);
      } catch (error) {
        if (!(error instanceof SchedulerRefused)) throw error;
        const variants = group.tasks.map((t) => t.variant).join(", ");
        throw new SchedulerRefused(
          `SLURM refused the array job of ${group.experiment} (${variants}; script ${script}): ${error.message}`,
        );
      }
      accepted({
        time,
        scheduler: "slurm",
        job_id: jobId,
        script: path.basename(script),
        log: path.basename(log),
        tasks: [...group.tasks],
      });
    },
  };
}
