// `arl plan FILE [--out DIR] [--json]`: every variant of every experiment lowered to its plan.
import path from "node:path";
import { Compiler, lineIndexes, type CheckResult } from "../../compiler.js";
import { compareDiagnostics, hasErrors, summarize, type Diagnostic } from "../../diagnostics/diagnostic.js";
import { displayPath, renderSummary, renderText } from "../../diagnostics/render.js";
import { prettyJson } from "../../plan/canonical.js";
import { variantFileName, writeFileAtomic } from "../../plan/files.js";
import { lowerModel, type LoweredPlan } from "../../plan/lower.js";
import { planSchema } from "../../plan/schema.js";
import { defineCommand } from "../command.js";
import { ExitCode, UsageError, type CliIO } from "../io.js";

const usage = `Usage: arl plan FILE [--out DIR] [--json]

Lowers every variant of every experiment in FILE to its plan: the fully explicit, hashed JSON
the runtime reads (its JSON Schema is published as arl/plan.schema.json).
Writes DIR/<experiment>/<variant>.plan.json, pretty-printed with a stable key order; DIR
defaults to 'plans' in FILE's directory. In file names, characters of a variant name other
than letters, digits and ._=,+@- are percent-encoded (model=hf:a/b -> model=hf%3Aa%2Fb).
  --out DIR   write the plans under DIR (relative to the working directory)
  --json      print [{"experiment","variant","hash","plan"}] to stdout instead of writing files
Diagnostics are printed as by 'arl check' (to stderr with --json); when there are errors no
plan is written. The lock file is not consulted: 'arl check' compares it, 'arl lock' writes it.
Exit status: 0 plans lowered, 1 errors, 2 usage error or unreadable file.`;

export const planCommand = defineCommand({
  name: "plan",
  summary: "lower each experiment variant to a hashed JSON plan",
  usage,
  options: { out: { type: "string" }, json: { type: "boolean", default: false } },
  async run(parsed, io) {
    const [target, ...extra] = parsed.positionals;
    if (target === undefined || extra.length > 0) throw new UsageError("give exactly one .arl file");
    const json = parsed.values.json === true;
    const compiled = compileAndLower(target, io, "plan", json ? io.stderr : io.stdout);
    if (typeof compiled === "number") return compiled;
    const { file, plans } = compiled;
    for (const p of plans) {
      const check = planSchema.safeParse(p.plan);
      if (!check.success)
        throw new Error(
          `the plan of ${p.experiment}/${p.variant} does not match the plan schema: ${check.error.message}`,
        );
    }
    if (plans.length === 0) io.stderr(`arl plan: '${target}' declares no experiment; nothing to lower\n`);
    if (json) {
      io.stdout(
        `${JSON.stringify(plans.map((p) => ({ experiment: p.experiment, variant: p.variant, hash: p.plan.hash, plan: p.plan })))}\n`,
      );
      return ExitCode.ok;
    }
    const outDir =
      parsed.values.out !== undefined
        ? path.resolve(io.cwd, parsed.values.out)
        : path.join(path.dirname(file), "plans");
    for (const p of plans) {
      const destination = path.join(outDir, variantFileName(p.experiment), `${variantFileName(p.variant)}.plan.json`);
      writeFileAtomic(destination, prettyJson(p.plan));
      io.stdout(`wrote ${displayPath(destination, io.cwd)}  ${p.plan.hash}\n`);
    }
    return ExitCode.ok;
  },
});

/**
 * Compiles one spec (without the lock comparison) and lowers it, printing the diagnostics the
 * way 'arl check' does (`onlyErrors`: only when there are errors). Returns an exit code when
 * there is nothing to go on with.
 */
export function compileAndLower(
  target: string,
  io: CliIO,
  command: string,
  print: (text: string) => void,
  options: { onlyErrors?: boolean } = {},
): number | { file: string; result: CheckResult; plans: LoweredPlan[] } {
  const file = path.resolve(io.cwd, target);
  const compiler = new Compiler();
  if (!compiler.canRead(file)) {
    io.stderr(`arl ${command}: cannot read '${target}'\n`);
    return ExitCode.usage;
  }
  const result = compiler.check(file, { plan: false });
  let diagnostics: Diagnostic[] = [...result.diagnostics];
  let plans: LoweredPlan[] = [];
  if (result.model && !hasErrors(diagnostics)) {
    const lowered = lowerModel(result.model);
    diagnostics = [...diagnostics, ...lowered.diagnostics].sort(compareDiagnostics);
    plans = lowered.plans;
  }
  if (!options.onlyErrors || hasErrors(diagnostics)) printDiagnostics([result], diagnostics, io, print);
  if (hasErrors(diagnostics)) {
    io.stderr(`arl ${command}: '${target}' has errors${command === "diff" ? "" : "; nothing written"}\n`);
    return ExitCode.errors;
  }
  return { file, result, plans };
}

/** Diagnostics as 'arl check' prints them, with the summary line when there are any. */
function printDiagnostics(
  results: readonly CheckResult[],
  diagnostics: readonly Diagnostic[],
  io: CliIO,
  print: (text: string) => void,
): void {
  if (diagnostics.length === 0) return;
  const style = { color: io.isTTY && !io.env.NO_COLOR && print === io.stdout };
  const lines = lineIndexes(results);
  for (const d of diagnostics) print(`${renderText(d, lines.get(d.file), io.cwd, style)}\n`);
  print(renderSummary(summarize(diagnostics), results.length));
}
