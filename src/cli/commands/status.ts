// `arl status SPEC.arl[#experiment[/variant]] [--runs DIR] [--json]`: where each variant of a
// sweep submitted with `arl submit` stands, from its run directories and the scheduler's own
// answer (docs/distributed.md, "Sweeps on a cluster").
import path from "node:path";
import { SchedulerUnavailable } from "../../cluster/jobs.js";
import { rayAddress } from "../../cluster/ray.js";
import { recordedJobs } from "../../cluster/schedulers.js";
import { sweepState, type VariantState } from "../../cluster/state.js";
import { displayPath } from "../../diagnostics/render.js";
import { defineCommand } from "../command.js";
import { ExitCode, UsageError, type CliIO } from "../io.js";
import { selectPlans } from "./run.js";

const usage = `Usage: arl status SPEC.arl[#experiment[/variant]] [--runs DIR] [--address ADDR] [--json]

Shows each variant of the spec: not submitted, pending, running (with its committed iterations),
finished, failed (with the last lines of its job's log), preempted (the scheduler ended it:
preemption, time limit, node failure) or cancelled. It reads the variant's newest run directory
under --runs, the jobs 'arl submit' recorded in RUNS/<experiment>/jobs/, and what their scheduler
says of them: SLURM (squeue; sacct where the cluster keeps accounting), or Ray's Jobs API at the
address each job was submitted to.

Options:
  --runs DIR   where the runs are ('arl submit --out'; default: runs)
  --address ADDR  Ray's dashboard, instead of the address recorded with each Ray job
  --json       one JSON object per variant and line: experiment, variant, hash, phase, run_dir,
               iteration, iterations, job, job_state, detail, log_tail, submittable

Exit status: 0 shown, 1 the spec has errors or the scheduler is missing or does not answer,
2 usage.`;

/**
 * Asks each recorded job's scheduler (SLURM, or Ray at its recorded address or `address`) about the
 * latest job of each variant; a missing or silent scheduler is printed in one line (an exit status).
 */
export async function sweepStates(
  target: string,
  runs: string,
  io: CliIO,
  command: string,
  address?: string,
): Promise<VariantState[] | number> {
  const { plans, errors } = selectPlans(target, io);
  if (errors) return ExitCode.errors;
  try {
    const rayAt = address !== undefined ? rayAddress(address, io.env) : undefined;
    return await sweepState(plans, path.resolve(io.cwd, runs), (tasks) =>
      recordedJobs(tasks, io.env, rayAt !== undefined ? { rayAddress: rayAt } : {}),
    );
  } catch (error) {
    if (!(error instanceof SchedulerUnavailable)) throw error;
    io.stderr(`arl ${command}: ${error.message}\n`);
    return ExitCode.errors;
  }
}

function jsonLine(s: VariantState): string {
  return JSON.stringify({
    experiment: s.experiment,
    variant: s.variant,
    hash: s.hash,
    phase: s.phase,
    run_dir: s.runDir ?? null,
    iteration: s.iteration,
    iterations: s.iterations,
    job: s.job?.id ?? null,
    job_state: s.job?.status?.state ?? null,
    detail: s.detail ?? null,
    log_tail: s.logTail ?? [],
    submittable: s.submittable,
  });
}

function textLines(states: readonly VariantState[], io: CliIO): string {
  const names = states.map((s) => `${s.experiment}/${s.variant}`);
  const width = Math.max(...names.map((n) => n.length));
  return states
    .map((s, i) => {
      const job = s.job ? `  job ${s.job.id}${s.job.status ? ` ${s.job.status.state}` : ""}` : "";
      const head = `${(names[i] ?? "").padEnd(width)}  ${s.phase.padEnd(13)}  ${s.iteration}/${s.iterations} iterations${job}`;
      const lines = [head];
      if (s.detail) lines.push(`    ${s.detail}`);
      if (s.runDir) lines.push(`    run ${displayPath(s.runDir, io.cwd)}`);
      if (s.logTail && s.logTail.length > 0 && s.phase !== "finished")
        lines.push(
          `    last lines of ${displayPath(s.job?.log ?? "", io.cwd)}:`,
          ...s.logTail.map((l) => `    | ${l}`),
        );
      return `${lines.join("\n")}\n`;
    })
    .join("");
}

export const statusCommand = defineCommand({
  name: "status",
  summary: "show each variant of a sweep on a cluster: pending, running, finished, failed, ...",
  usage,
  options: {
    runs: { type: "string", default: "runs" },
    address: { type: "string" },
    json: { type: "boolean", default: false },
  },
  async run(parsed, io) {
    const [target, ...extra] = parsed.positionals;
    if (target === undefined || extra.length > 0)
      throw new UsageError("give one spec (SPEC.arl[#experiment[/variant]])");
    const states = await sweepStates(target, parsed.values.runs, io, "status", parsed.values.address);
    if (typeof states === "number") return states;
    io.stdout(parsed.values.json ? states.map((s) => `${jsonLine(s)}\n`).join("") : textLines(states, io));
    return ExitCode.ok;
  },
});
