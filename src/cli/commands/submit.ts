// `arl submit SPEC.arl[#experiment[/variant]] [--scheduler slurm|ray] [--address ADDR] [--out DIR]
// [--partition P] [--account A] [--time T] [--cpus-per-task N] [--sbatch OPTION]... [--data-root
// DIR]`: a sweep's variants as jobs of a cluster's scheduler (docs/distributed.md, "Sweeps on a
// cluster", "Sweeps on a Ray cluster").
import path from "node:path";
import { fileURLToPath } from "node:url";
import { SchedulerRefused, SchedulerUnavailable } from "../../cluster/jobs.js";
import { rayAddress, rayScheduler } from "../../cluster/ray.js";
import { jobsFolder } from "../../cluster/records.js";
import type { Scheduler } from "../../cluster/scheduler.js";
import { slurmScheduler, STOP_BEFORE_TIME_LIMIT_S } from "../../cluster/slurm.js";
import { PartialSubmission, submitSweep, type SubmittedArray } from "../../cluster/submit.js";
import { planRefusals, refusalText } from "../../plan/runnable.js";
import { RunDirectoryError } from "../../runtime/run-dir.js";
import { displayPath } from "../../diagnostics/render.js";
import { defineCommand } from "../command.js";
import { ExitCode, UsageError, type CliIO } from "../io.js";
import { dataFilesReadable, selectPlans } from "./run.js";

const usage = `Usage: arl submit SPEC.arl[#experiment[/variant]] [options]

Submits the spec's variants to the cluster's scheduler: one SLURM array job per experiment (and
per set of resources), or one Ray job per variant, each task running 'arl run --resume' on its
variant's run directory under --out (a new directory starts at iteration 1). The experiment's state is its run directories:
a variant whose plan has a finished run is not submitted, nor one whose job waits or runs; an
unfinished one (cancelled, preempted, failed, a requeued task) is submitted again and resumes from
its last committed iteration. The script, the job ids, the submission time and the tasks' logs
are kept in OUT/<experiment>/jobs/. 'arl status SPEC' shows each variant, 'arl cancel SPEC'
cancels its jobs, 'arl report SPEC --runs OUT' reports the runs.

Options:
  --scheduler S         the cluster's scheduler: slurm (default) or ray
  --address ADDR        ray: the dashboard's address (http://HEAD:8265; default: RAY_ADDRESS)
  --out DIR             where run directories go, as for 'arl run' (default: runs); on a file
                        system every node of the cluster sees
  --partition P         #SBATCH --partition
  --account A           #SBATCH --account
  --time T              each task's time limit (#SBATCH --time, e.g. 04:00:00); a task is sent
                        SIGINT ${STOP_BEFORE_TIME_LIMIT_S} s before it and stops after its current iteration (resumable)
  --cpus-per-task N     #SBATCH --cpus-per-task, or the Ray job's entrypoint CPUs (default: 1 for
                        backend local, else the cluster's default)
  --sbatch OPTION       one more #SBATCH line, e.g. --sbatch "--qos=high" (repeatable; written last)
  --data-root DIR       where the plans' data files are found, as for 'arl run'

--partition, --account, --time and --sbatch are SLURM's. Nodes and GPUs come from each plan's
resources (#SBATCH --nodes, --gpus-per-node; Ray: the entrypoint's GPUs); a plan on several nodes
takes its rendezvous from SLURM's variables, or from the Ray launcher's (docs/distributed.md).

Exit status: 0 submitted (or nothing to submit), 1 the spec has errors, a plan cannot run, the
scheduler is missing or refused a job (what was submitted before it is listed), 2 usage.`;

/** `arl` as the cluster's nodes start it: this Node.js and this checkout's bin/arl.js (a shared file system). */
const arlCommand = [process.execPath, fileURLToPath(new URL("../../../bin/arl.js", import.meta.url))];

function positiveInteger(text: string | undefined, flag: string): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`${flag} must be a whole number, 1 or more, not '${text}'`);
  return n;
}

export const submitCommand = defineCommand({
  name: "submit",
  summary: "submit a sweep's variants to a cluster (SLURM, Ray), resuming unfinished ones",
  usage,
  options: {
    scheduler: { type: "string", default: "slurm" },
    address: { type: "string" },
    out: { type: "string", default: "runs" },
    partition: { type: "string" },
    account: { type: "string" },
    time: { type: "string" },
    "cpus-per-task": { type: "string" },
    sbatch: { type: "string", multiple: true },
    "data-root": { type: "string" },
  },
  async run(parsed, io) {
    const v = parsed.values;
    if (v.scheduler !== "slurm" && v.scheduler !== "ray")
      throw new UsageError(`--scheduler must be 'slurm' or 'ray', not '${v.scheduler}'`);
    if (v.scheduler === "ray") {
      const slurmOnly = (["partition", "account", "time", "sbatch"] as const).filter((o) => v[o] !== undefined);
      if (slurmOnly.length > 0)
        throw new UsageError(`--${slurmOnly[0]} is SLURM's; a Ray job takes --address and --cpus-per-task`);
    } else if (v.address !== undefined) throw new UsageError("--address is Ray's (--scheduler ray)");
    const [target, ...extra] = parsed.positionals;
    if (target === undefined || extra.length > 0)
      throw new UsageError("give one spec (SPEC.arl[#experiment[/variant]])");
    if (target.split("#")[0]?.endsWith(".json"))
      throw new UsageError("give the spec (SPEC.arl), not a plan file: the spec says which variants make the sweep");
    const cpusPerTask = positiveInteger(v["cpus-per-task"], "--cpus-per-task");
    const { plans, errors } = selectPlans(target, io);
    if (errors) return ExitCode.errors;
    // Refused now, not in a job minutes later; the rendezvous of a multi-node plan comes from SLURM.
    for (const plan of plans) {
      const refusals = planRefusals(plan, { rendezvous: true });
      if (refusals.length > 0) {
        io.stderr(
          `arl submit: ${plan.experiment}/${plan.variant} cannot run:\n  ${refusals.map(refusalText).join("\n  ")}\n`,
        );
        return ExitCode.errors;
      }
    }
    const dataRoot = v["data-root"]
      ? path.resolve(io.cwd, v["data-root"])
      : path.dirname(path.resolve(io.cwd, target.split("#")[0] ?? target));
    if (!dataFilesReadable(plans, dataRoot, io, "submit")) return ExitCode.errors;
    const runsRoot = path.resolve(io.cwd, v.out);
    try {
      const scheduler: Scheduler =
        v.scheduler === "ray"
          ? rayScheduler({
              address: rayAddress(v.address, io.env),
              ...(cpusPerTask !== undefined ? { cpusPerTask } : {}),
            })
          : slurmScheduler(
              {
                ...(v.partition !== undefined ? { partition: v.partition } : {}),
                ...(v.account !== undefined ? { account: v.account } : {}),
                ...(v.time !== undefined ? { time: v.time } : {}),
                ...(cpusPerTask !== undefined ? { cpusPerTask } : {}),
                extra: v.sbatch ?? [],
              },
              io.env,
            );
      const outcome = await submitSweep({ plans, runsRoot, dataRoot, scheduler, arl: arlCommand, env: io.env });
      for (const s of outcome.before.filter((s) => !s.submittable)) {
        io.stdout(
          `${s.experiment}/${s.variant}: ${s.phase}${s.job ? ` (job ${s.job.id})` : ""}${s.detail ? `: ${s.detail}` : ""}; not submitted\n`,
        );
      }
      printSubmitted(outcome.submitted, runsRoot, io);
      if (outcome.submitted.length === 0)
        io.stdout("nothing to submit: every variant is finished, waiting or running\n");
      return ExitCode.ok;
    } catch (error) {
      if (error instanceof SchedulerUnavailable || error instanceof SchedulerRefused) {
        io.stderr(`arl submit: ${error.message}\n`);
        return ExitCode.errors;
      }
      if (error instanceof RunDirectoryError) {
        io.stderr(`arl submit: --out ${v.out}: ${error.message}\n`);
        return ExitCode.usage;
      }
      if (!(error instanceof PartialSubmission)) throw error;
      printSubmitted(error.submitted, runsRoot, io);
      io.stderr(`arl submit: ${error.message}\n`);
      io.stderr(
        `not submitted: ${error.notSubmitted.join(", ")}; what was submitted above stands (run 'arl submit' again once the cause is fixed: nothing is submitted twice)\n`,
      );
      return ExitCode.errors;
    }
  },
});

function printSubmitted(submitted: readonly SubmittedArray[], runsRoot: string, io: CliIO): void {
  for (const { experiment, submission: s } of submitted) {
    const script = displayPath(path.join(jobsFolder(runsRoot, experiment), s.script), io.cwd);
    if (s.scheduler === "ray") {
      for (const t of s.tasks)
        io.stdout(
          `submitted Ray job ${s.job_id}  ${experiment}/${t.variant}  ${t.resume ? "resumes" : "starts"} ${displayPath(t.run_dir, io.cwd)}, script ${script} ${t.task}\n`,
        );
      continue;
    }
    io.stdout(
      `submitted job ${s.job_id} (${s.tasks.length} task${s.tasks.length === 1 ? "" : "s"}), script ${script}\n`,
    );
    for (const t of s.tasks)
      io.stdout(
        `  ${s.job_id}_${t.task}  ${experiment}/${t.variant}  ${t.resume ? "resumes" : "starts"} ${displayPath(t.run_dir, io.cwd)}\n`,
      );
  }
}
