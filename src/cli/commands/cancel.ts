// `arl cancel SPEC.arl[#experiment[/variant]] [--runs DIR]`: cancels the jobs `arl submit`
// submitted for the spec's variants that still wait or run (docs/distributed.md, "Sweeps on a
// cluster"). What their runs committed is kept; `arl submit` resumes them.
import { isActive, SchedulerRefused, SchedulerUnavailable } from "../../cluster/jobs.js";
import { scancel } from "../../cluster/slurm.js";
import { defineCommand } from "../command.js";
import { ExitCode, UsageError } from "../io.js";
import { sweepStates } from "./status.js";

const usage = `Usage: arl cancel SPEC.arl[#experiment[/variant]] [--runs DIR]

Cancels the SLURM jobs of the spec's variants (those 'arl submit' recorded under --runs) that
are pending or running. SLURM sends SIGTERM: a run stops at once, keeping every iteration it
committed (the one in progress is abandoned), and 'arl submit' resumes it from there.

Options:
  --runs DIR   where the runs are ('arl submit --out'; default: runs)

Exit status: 0 cancelled (or nothing to cancel), 1 the spec has errors, the scheduler is
missing or refused, 2 usage.`;

export const cancelCommand = defineCommand({
  name: "cancel",
  summary: "cancel the cluster jobs of a sweep's variants (their runs stay resumable)",
  usage,
  options: { runs: { type: "string", default: "runs" } },
  async run(parsed, io) {
    const [target, ...extra] = parsed.positionals;
    if (target === undefined || extra.length > 0)
      throw new UsageError("give one spec (SPEC.arl[#experiment[/variant]])");
    const states = await sweepStates(target, parsed.values.runs, io, "cancel");
    if (typeof states === "number") return states;
    const active = states.filter((s) => s.job && isActive(s.job.status));
    if (active.length === 0) {
      io.stdout("nothing to cancel: no job of these variants is pending or running\n");
      return ExitCode.ok;
    }
    try {
      await scancel(
        active.flatMap((s) => s.job?.id ?? []),
        io.env,
      );
    } catch (error) {
      if (!(error instanceof SchedulerRefused) && !(error instanceof SchedulerUnavailable)) throw error;
      io.stderr(`arl cancel: ${error.message}\n`);
      return ExitCode.errors;
    }
    for (const s of active)
      io.stdout(
        `cancelled ${s.experiment}/${s.variant}: job ${s.job?.id} (was ${s.job?.status?.state}, ${s.iteration}/${s.iterations} iterations committed)\n`,
      );
    return ExitCode.ok;
  },
});
