// `arl env-check SPEC.arl[#experiment[/variant]] | PLAN.json [--env NAME] [--tasks N] [--steps N]
// [--data-root DIR]`: the plans selected as `arl run` selects them, and each of their envs probed
// before a run spends compute on it (src/env-check/), with no trainer.
import path from "node:path";
import { envKindsWithDataRoot } from "../../envs/registry.js";
import { checkEnvs, envNamesOf, type CheckedEnv } from "../../env-check/index.js";
import { PlanFileError } from "../../plan/files.js";
import type { Plan } from "../../plan/schema.js";
import { at } from "../../contracts/checked.js";
import { defineCommand } from "../command.js";
import { ExitCode, UsageError, type CliIO } from "../io.js";
import { dataFilesReadable, selectPlans } from "./run.js";

const usage = `Usage: arl env-check SPEC.arl[#experiment[/variant]] | PLAN.json [options]

Lowers the spec to its plans as 'arl run' does and probes each env of them through its env kind,
with no trainer and no model, before a run spends compute on it:
  determinism  the same task and seed, reset twice and given the same actions (the env's
               walkthrough, else a valid call of each tool built from its JSON Schema), must
               answer the same observations and signals at every step and at the outcome
  isolation    two sessions of the same task stepped interleaved must each answer what one
               session alone answers
  signals      each declared signal is listed with its type and range and the values seen; a
               value of the wrong type or outside its range, a declared signal never reported
               and a signal the env reports without a declaration are findings
  faults       a create, reset, step, outcome or close that raises, answers malformed or hangs
               past the env's time limit (its timeout_s, else 30 s, plus 6 s)
and prints the latency of resets (creating the instance included) and steps (median, p95).
Each finding is one line naming its env, its check and its cause. An env shared by several
variants is probed once. Env kinds whose episodes are whole programs (agent) cannot be probed;
they are named, never passed.

Options:
  --env NAME        probe only the env of this name
  --tasks N         tasks probed per env, spread over its task ids (default 2)
  --steps N         actions per probe episode (default 4)
  --data-root DIR   where the data files a plan names are found, as for 'arl run' (default:
                    the spec's folder)

Exit status: 0 every env probed and clean; 1 a finding, or an env that could not be probed;
2 a usage error or an unreadable spec or plan.`;

const STOP_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

function count(value: string | undefined, flag: string, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 1000)
    throw new UsageError(`${flag} must be a whole number from 1 to 1000, not '${value}'`);
  return n;
}

function render(checked: CheckedEnv, io: CliIO): void {
  const { report, plans } = checked;
  const shared =
    plans.length === 1
      ? plans[0]
      : `${plans[0]} and ${plans.length - 1} more variant${plans.length === 2 ? "" : "s"} with the same env`;
  io.stdout(`env '${report.name}' (${report.kind}), of ${shared}:\n`);
  for (const line of report.lines) io.stdout(`  ${line}\n`);
  for (const f of report.findings) io.stdout(`  FINDING env '${report.name}': ${f.check}: ${f.message}\n`);
  const verdict =
    report.findings.length === 0
      ? "clean"
      : report.findings.some((f) => f.check === "not probed")
        ? "not probed"
        : `${report.findings.length} finding${report.findings.length === 1 ? "" : "s"}`;
  io.stdout(`  ${verdict} (${checked.wallS.toFixed(1)} s)\n`);
}

export const envCheckCommand = defineCommand({
  name: "env-check",
  summary: "probe a spec's envs: determinism per seed, session isolation, declared signals, faults, latency",
  usage,
  options: {
    env: { type: "string" },
    tasks: { type: "string" },
    steps: { type: "string" },
    "data-root": { type: "string" },
  },
  async run(parsed, io) {
    const v = parsed.values;
    if (parsed.positionals.length !== 1)
      throw new UsageError("give one spec (SPEC.arl[#experiment[/variant]]) or plan file");
    const tasks = count(v.tasks, "--tasks", 2);
    const steps = count(v.steps, "--steps", 4);
    const target = at(parsed.positionals, 0);
    let plans: Plan[];
    try {
      const selected = selectPlans(target, io);
      if (selected.errors) return ExitCode.errors;
      plans = selected.plans;
    } catch (error) {
      if (!(error instanceof PlanFileError)) throw error;
      io.stderr(`arl env-check: ${error.message}\n`);
      return ExitCode.usage;
    }
    if (v.env !== undefined && !envNamesOf(plans).includes(v.env))
      throw new UsageError(
        `--env '${v.env}': the selected plans have no env of that name (they have ${envNamesOf(plans).join(", ") || "none"})`,
      );
    const dataRoot = v["data-root"]
      ? path.resolve(io.cwd, v["data-root"])
      : path.dirname(path.resolve(io.cwd, target.split("#")[0] ?? target));
    if (!dataFilesReadable(plans, dataRoot, io, "env-check")) return ExitCode.errors;
    const started = Date.now();
    // Env hosts and env processes lead process groups of their own; exiting runs the hook that
    // ends them (contracts/process-group.ts), which a signal's default action would skip.
    const stop = () => {
      io.stderr("\narl env-check: stopped; the env processes it started are ended\n");
      process.exit(130);
    };
    for (const signal of STOP_SIGNALS) process.on(signal, stop);
    let checked: CheckedEnv[];
    try {
      checked = await checkEnvs(plans, envKindsWithDataRoot(dataRoot), {
        tasks,
        steps,
        ...(v.env !== undefined ? { env: v.env } : {}),
        log: (line) => io.stderr(`arl env-check: ${line}\n`),
      });
    } finally {
      for (const signal of STOP_SIGNALS) process.off(signal, stop);
    }
    for (const c of checked) render(c, io);
    const findings = checked.reduce((n, c) => n + c.report.findings.length, 0);
    const wall = ((Date.now() - started) / 1000).toFixed(1);
    io.stdout(
      `${checked.length} env${checked.length === 1 ? "" : "s"} of ${plans.length} plan${plans.length === 1 ? "" : "s"} checked in ${wall} s: ${findings === 0 ? "clean" : `${findings} finding${findings === 1 ? "" : "s"}`}\n`,
    );
    return findings === 0 ? ExitCode.ok : ExitCode.errors;
  },
});
