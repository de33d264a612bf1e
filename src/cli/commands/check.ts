// `arl check [FILES|DIRS...] [--format text|json]`: every diagnostic of every stage.
import { Compiler, lineIndexes, uniqueDiagnostics, type CheckResult } from "../../compiler.js";
import { hasErrors, summarize } from "../../diagnostics/diagnostic.js";
import { renderSummary, renderText, toJsonReport } from "../../diagnostics/render.js";
import { expandArlPaths } from "../files.js";
import { defineCommand } from "../command.js";
import { ExitCode, UsageError } from "../io.js";

const usage = `Usage: arl check [FILES|DIRS...] [--format text|json]

Checks .arl specs (syntax, imports, types, RL lint rules) and prints every diagnostic.
Directories are searched for .arl files; with no paths, the current directory is checked.
Exit status: 0 no errors (warnings allowed), 1 errors, 2 usage error or unreadable file.`;

export const checkCommand = defineCommand({
  name: "check",
  summary: "check .arl specs and print diagnostics",
  usage,
  options: { format: { type: "string", default: "text" } },
  async run(parsed, io) {
    const format = parsed.values.format;
    if (format !== "text" && format !== "json")
      throw new UsageError(`--format must be 'text' or 'json', not '${format}'`);
    const targets = parsed.positionals.length > 0 ? parsed.positionals : ["."];
    const { files, missing } = expandArlPaths(targets, io.cwd);

    const compiler = new Compiler();
    const results: CheckResult[] = [];
    const unreadable = [...missing];
    for (const file of files) {
      if (!compiler.canRead(file)) unreadable.push(file);
      else results.push(compiler.check(file));
    }
    const diagnostics = uniqueDiagnostics(results);

    if (format === "json") {
      io.stdout(`${JSON.stringify(toJsonReport(diagnostics, io.cwd))}\n`);
    } else {
      const style = { color: io.isTTY && !io.env.NO_COLOR };
      const lines = lineIndexes(results);
      for (const d of diagnostics) io.stdout(`${renderText(d, lines.get(d.file), io.cwd, style)}\n`);
      io.stdout(renderSummary(summarize(diagnostics), results.length));
    }
    for (const u of unreadable) io.stderr(`arl check: cannot read '${u}'\n`);
    if (unreadable.length > 0) return ExitCode.usage;
    if (files.length === 0) {
      io.stderr(`arl check: no .arl files found in ${targets.join(", ")}\n`);
      return ExitCode.usage;
    }
    return hasErrors(diagnostics) ? ExitCode.errors : ExitCode.ok;
  },
});
