// The report pages 'arl run' writes when its runs end: one per run, and one for a sweep's runs together.
import path from "node:path";
import { arlVersion } from "../../plan/version.js";
import type { CliIO } from "../io.js";

/** The run's report (HTML and markdown) in its directory; a failure here never fails the run. */
export async function writeRunReport(dir: string, io: CliIO): Promise<void> {
  try {
    const { buildReport, writeReport } = await import("../../report/index.js");
    const [html] = writeReport(await buildReport([dir], { cwd: io.cwd, arlVersion: arlVersion() }), dir);
    io.stdout(`report: ${html}\n`);
  } catch (error) {
    io.stderr(`arl run: the report could not be written (${(error as Error).message}); try 'arl report ${dir}'\n`);
  }
}

/** After every variant of a spec ran: one report of them all, in the folder that holds their run directories. */
export async function writeSweepReport(dirs: readonly string[], io: CliIO): Promise<void> {
  try {
    const { buildReport, reportInputs, writeReport } = await import("../../report/index.js");
    const inputs = reportInputs(dirs, io.cwd);
    const [html] = writeReport(
      await buildReport(inputs.dirs, { cwd: io.cwd, arlVersion: arlVersion(), notes: inputs.notes }),
      inputs.outDir,
    );
    io.stdout(`sweep report (${dirs.length} runs): ${html}\n`);
  } catch (error) {
    io.stderr(
      `arl run: the sweep report could not be written (${(error as Error).message}); try 'arl report ${path.dirname(path.dirname(dirs[0] ?? "."))}'\n`,
    );
  }
}
