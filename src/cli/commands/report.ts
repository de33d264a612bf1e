// `arl report RUN_DIR... | DIR | SPEC.arl [--runs DIR] [--baseline NAME] [--smooth A] [--out DIR]`:
// an HTML page and a markdown summary of one run, or of a sweep's runs side by side (variants
// compared task by task against a baseline, seeds of one variant aggregated).
import path from "node:path";
import { arlVersion } from "../../plan/version.js";
import { displayPath } from "../../diagnostics/render.js";
import { defineCommand } from "../command.js";
import { ExitCode, UsageError } from "../io.js";
import { selectPlans } from "./run.js";

const usage = `Usage: arl report RUN_DIR... | DIR | SPEC.arl[#experiment[/variant]] [options]

Writes report.html (self-contained: inline SVG charts and CSS, works offline) and report.md
for one run directory, or for several runs side by side: learning curves overlaid, final
pass@k per variant, and paired per-task differences against a baseline variant. Runs that
differ only in their seed are one variant: its curves and pass@k are the mean over the seeds,
with their spread.

  RUN_DIR...   run directories (OUT/<experiment>/<variant>/<hash>-<time>)
  DIR          a directory above run directories: every run below it (a sweep's runs/<experiment>)
  SPEC.arl     the spec's variants: the newest run of each of its plans under --runs

Options:
  --runs DIR        where 'arl run' wrote the spec's runs (its --out; default: runs)
  --baseline NAME   the variant the others are compared with (default: the first)
  --smooth A        smooth the learning curves with an exponential moving average of weight
                    A in [0, 1) on the past (0.6 is a usual choice; the raw line stays, faint)
  --out DIR         where to write the files (default: the run directory for one run, else
                    the directory that holds the runs: runs/<experiment> for a spec)

Exit status: 0 written, 1 a run has no metrics yet (or unreadable metrics), or a spec has no
runs, 2 usage error or a path that is not a run directory.`;

export const reportCommand = defineCommand({
  name: "report",
  summary: "write an HTML page and a markdown summary of runs or a sweep",
  usage,
  options: {
    out: { type: "string" },
    runs: { type: "string" },
    baseline: { type: "string" },
    smooth: { type: "string" },
  },
  async run(parsed, io) {
    const given = parsed.positionals;
    const v = parsed.values;
    if (given.length === 0) throw new UsageError("give at least one run directory, a directory of runs, or a spec");
    if (v.out === "") throw new UsageError("--out needs a directory");
    const smooth = v.smooth === undefined ? 0 : Number(v.smooth);
    if (!(Number.isFinite(smooth) && smooth >= 0 && smooth < 1))
      throw new UsageError(`--smooth must be a number in [0, 1), not '${v.smooth}'`);
    // A spec, or a plan file `arl plan` wrote (a run directory's own plan.json stands for its run).
    const spec = given.find((g) => /\.arl(#.*)?$/.test(g) || (g.endsWith(".json") && path.basename(g) !== "plan.json"));
    if (spec !== undefined && given.length > 1) throw new UsageError("give one spec, or run directories, not both");
    if (v.runs !== undefined && spec === undefined)
      throw new UsageError("--runs goes with a spec (SPEC.arl): it says where that spec's runs are");
    // vega is large: load the report code only when this command runs.
    const { buildReport, reportInputs, specRuns, writeReport, ReportInputError } =
      await import("../../report/index.js");
    let report;
    let inputs;
    try {
      if (spec !== undefined) {
        const { plans, errors } = selectPlans(spec, io);
        if (errors) return ExitCode.errors;
        inputs = specRuns(plans, v.runs ?? "runs", spec, io.cwd);
      } else {
        inputs = reportInputs(given, io.cwd);
      }
      report = await buildReport(inputs.dirs, {
        cwd: io.cwd,
        arlVersion: arlVersion(),
        smooth,
        notes: inputs.notes,
        ...(v.baseline !== undefined ? { baseline: v.baseline } : {}),
      });
    } catch (error) {
      if (error instanceof ReportInputError) {
        io.stderr(`arl report: ${error.message}\n`);
        return error.exitCode === 2 ? ExitCode.usage : ExitCode.errors;
      }
      throw error;
    }
    const out = v.out === undefined ? inputs.outDir : path.resolve(io.cwd, v.out);
    let files: string[];
    try {
      files = writeReport(report, out);
    } catch (error) {
      io.stderr(`arl report: cannot write to '${displayPath(out, io.cwd)}': ${(error as Error).message}\n`);
      return ExitCode.errors;
    }
    for (const r of report.model.runs)
      if (r.run.partial)
        io.stderr(
          `arl report: note: ${r.label} is a partial run (${r.run.iterations} of ${r.run.plannedIterations} iterations)\n`,
        );
    for (const f of files) io.stdout(`${displayPath(f, io.cwd)}\n`);
    return ExitCode.ok;
  },
});
