// `arl cancel SPEC.arl[#experiment[/variant]] [--runs DIR]`: cancels the jobs `arl submit`
// submitted for the spec's variants that still wait or run (docs/distributed.md, "Sweeps on a
// cluster"). What their runs committed is kept; `arl submit` resumes them.
import { isActive, SchedulerRefused, SchedulerUnavailable } from "../../cluster/jobs.js";
import { rayAddress } from "../../cluster/ray.js";
import { schedulerOf } from "../../cluster/schedulers.js";
import { defineCommand } from "../command.js";
import { ExitCode, UsageError } from "../io.js";
import { sweepStates } from "./status.js";

const usage = `Usage: arl cancel SPEC.arl[#experiment[/variant]] [--runs DIR] [--address ADDR]

Cancels the SLURM or Ray jobs of the spec's variants (those 'arl submit' recorded under --runs)
that are pending or running. The scheduler sends SIGTERM: a run stops at once, keeping every
iteration it committed (the one in progress is abandoned), and 'arl submit' resumes it from there.

Options:
  --runs DIR   where the runs are ('arl submit --out'; default: runs)
  --address ADDR  Ray's dashboard, instead of the address recorded with each Ray job

Exit status: 0 cancelled (or nothing to cancel), 1 the spec has errors, the scheduler is
missing or refused, 2 usage.`;

export const cancelCommand = defineCommand({
  name: "cancel",
  summary: "cancel the cluster jobs of a sweep's variants (their runs stay resumable)",
  usage,
  options: { runs: { type: "string", default: "runs" }, address: { type: "string" } },
  async run(parsed, io) {
    const [target, ...extra] = parsed.positionals;
    if (target === undefined || extra.length > 0)
      throw new UsageError("give one spec (SPEC.arl[#experiment[/variant]])");
    const states = await sweepStates(target, parsed.values.runs, io, "cancel", parsed.values.address);
    if (typeof states === "number") return states;
    const active = states.filter((s) => s.job && isActive(s.job.status));
    if (active.length === 0) {
      io.stdout("nothing to cancel: no job of these variants is pending or running\n");
      return ExitCode.ok;
    }
    try {
      // Each scheduler ends its own jobs (SLURM's in one scancel).
      const rayAt = parsed.values.address !== undefined ? rayAddress(parsed.values.address, io.env) : undefined;
      const byScheduler = new Map<string, { name: "slurm" | "ray"; address?: string; ids: string[] }>();
      for (const s of active) {
        if (!s.job) continue;
        const address = s.job.scheduler === "ray" ? (rayAt ?? s.job.address) : undefined;
        const key = `${s.job.scheduler}\n${address ?? ""}`;
        const group = byScheduler.get(key) ?? {
          name: s.job.scheduler,
          ...(address !== undefined ? { address } : {}),
          ids: [],
        };
        group.ids.push(s.job.id);
        byScheduler.set(key, group);
      }
      for (const group of byScheduler.values()) await schedulerOf(group.name, group.address, io.env).cancel(group.ids);
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
