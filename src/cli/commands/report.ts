// `arl report RUN_DIR... [--out DIR]`: an HTML page and a markdown summary of one run, or of
// several runs side by side (variants of one ablation, compared task by task).
import path from "node:path";
import { arlVersion } from "../../plan/version.js";
import { displayPath } from "../../diagnostics/render.js";
import { defineCommand } from "../command.js";
import { ExitCode, UsageError } from "../io.js";
import { at } from "../../contracts/checked.js";

const usage = `Usage: arl report RUN_DIR... [--out DIR]

Writes report.html (self-contained: inline SVG charts and CSS, works offline) and report.md
for one run directory, or for several runs compared side by side: final pass@k per run and
paired per-task differences against the first run given.

Options:
  --out DIR   where to write the files (default: the run directory for one run,
              ./report for several)

Exit status: 0 written, 1 a run has no metrics yet (or unreadable metrics),
2 usage error or a path that is not a run directory.`;

export const reportCommand = defineCommand({
  name: "report",
  summary: "write an HTML page and a markdown summary of runs",
  usage,
  options: { out: { type: "string" } },
  async run(parsed, io) {
    const dirs = parsed.positionals;
    if (dirs.length === 0) throw new UsageError("give at least one run directory");
    if (parsed.values.out === "") throw new UsageError("--out needs a directory");
    // vega is large: load the report code only when this command runs.
    const { buildReport, writeReport, ReportInputError } = await import("../../report/index.js");
    let report;
    try {
      report = await buildReport(dirs, { cwd: io.cwd, arlVersion: arlVersion() });
    } catch (error) {
      if (error instanceof ReportInputError) {
        io.stderr(`arl report: ${error.message}\n`);
        return error.exitCode === 2 ? ExitCode.usage : ExitCode.errors;
      }
      throw error;
    }
    const out = path.resolve(io.cwd, parsed.values.out ?? (dirs.length === 1 ? at(dirs, 0) : "report"));
    let files: string[];
    try {
      files = writeReport(report, out);
    } catch (error) {
      io.stderr(`arl report: cannot write to '${displayPath(out, io.cwd)}': ${(error as Error).message}\n`);
      return ExitCode.errors;
    }
    for (const r of report.model.runs) if (r.run.partial) io.stderr(`arl report: note: ${r.label} is a partial run (${r.run.iterations} of ${r.run.plannedIterations} iterations)\n`);
    for (const f of files) io.stdout(`${displayPath(f, io.cwd)}\n`);
    return ExitCode.ok;
  },
});
