// `arl replay RUN_DIR [--iteration N] [--episode E] [--data-root DIR]`: plays a run's recorded
// episodes again in their envs and says, per episode, whether every answer was the same
// (src/replay/).
import { existsSync } from "node:fs";
import path from "node:path";
import { PlanFileError } from "../../plan/files.js";
import { displayPath } from "../../diagnostics/render.js";
import { readBuffer, type BufferContents } from "../../episode/buffer.js";
import { envKinds, envKindsWithDataRoot } from "../../envs/registry.js";
import { verifyPlanDataFiles } from "../../envs/data-files.js";
import { changedCodeFiles } from "../../envs/code-files.js";
import { EnvError } from "../../contracts/env.js";
import type { Plan } from "../../plan/schema.js";
import { SelectionError, type Selection } from "../../report/trajectories.js";
import { DataRootError, recordedDataRoot } from "../../runtime/data-root.js";
import { RunDirectory, RunDirectoryError } from "../../runtime/run-dir.js";
import { replayRun, type ReplayedEpisode } from "../../replay/run.js";
import { defineCommand } from "../command.js";
import { ExitCode, UsageError, type CliIO } from "../io.js";

const usage = `Usage: arl replay RUN_DIR [--iteration N] [--episode E] [--data-root DIR]

Plays the episodes a run recorded in its token buffer again, each in a fresh instance of its
env (the plan's env, the episode's task and the seed its instance was created with), asking
what the episode asked in the same order: the reset, every tool call the env executed, a final
answer, the outcome. Every answer is compared with the recorded one (the observation, the
task's messages, each signal, whether the task ended, an env error); when all are the same, the
rewards are computed again from the recorded signals and compared with those the run trained
on. The first divergence of each episode is printed with both texts.

An agent env's episode (kind: agent) is replayed by running its program again on the same task
and seed, its model calls answered with what the run's gateway served it: every request must be
one the recorded episode made, every recorded call must be made, and the program must end with
the same fault or outcome signals. An episode recorded by an arl older than replay cannot be
replayed: it is named with the reason, never passed.

Options:
  --iteration N     one training iteration (default: every iteration in the buffer; with
                    --episode, the last one)
  --episode E       one episode: its number N within the iteration, or GROUP/SAMPLE (as
                    'arl show' numbers them)
  --data-root DIR   the folder the plan's data files lie in (default: the one the run recorded)

Exit status: 0 every episode replayed identically, 1 an episode diverged or could not be
replayed (or nothing to replay), 2 usage error or a path that is not a run directory.`;

function integer(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw new UsageError(`--${flag} must be a whole number, not '${value}'`);
  return Number(value);
}

function episodeOf(value: string | undefined): Selection["episode"] {
  if (value === undefined) return undefined;
  const pair = /^(\d+)\/(\d+)$/.exec(value);
  if (pair) return { group: Number(pair[1]), sample: Number(pair[2]) };
  if (/^\d+$/.test(value)) return Number(value);
  throw new UsageError(`--episode must be an episode number (0, 1, ...) or GROUP/SAMPLE (e.g. 1/0), not '${value}'`);
}

const indent = (text: string) => text.split("\n").join("\n      ");

/** Where two texts first differ, for a long observation. */
function firstDifference(a: string, b: string): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

function episodeText(e: ReplayedEpisode): string {
  const r = e.record;
  const recordedSeed = r.transcript?.seed ?? r.program?.seed;
  const seed = recordedSeed !== undefined ? `, seed ${recordedSeed}` : "";
  const head = `iteration ${e.iteration}, episode ${e.episode} (group ${r.group}, sample ${r.sample}): env ${r.env}, task ${r.task}${seed}`;
  const result = e.result;
  switch (result.status) {
    case "identical":
      return result.of === "program"
        ? `${head}: identical (its program run again, ${result.exchanges} model calls answered from the record, rewards ${r.reward})\n`
        : `${head}: identical (${result.exchanges} exchanges with the env, rewards ${r.reward})\n`;
    case "cannot":
      return `${head}: cannot be replayed: ${result.reason}\n`;
    case "diverged": {
      const d = result.divergence;
      const at =
        d.recorded.length > 80 || d.replayed.length > 80
          ? ` (they differ from character ${firstDifference(d.recorded, d.replayed)})`
          : "";
      return `${head}: DIVERGED at ${d.where}: ${d.what} differs${at}\n    recorded: ${indent(d.recorded)}\n    replayed: ${indent(d.replayed)}\n`;
    }
  }
}

/** The data root the env kinds read files below: --data-root (checked against the plan's sha256s), else the one the run recorded. */
function dataRootOf(run: RunDirectory, plan: Plan, given: string | undefined): string | undefined {
  if (given === undefined) return recordedDataRoot(run);
  verifyPlanDataFiles(plan.envs, given);
  return given;
}

function fail(io: CliIO, message: string, code: number): number {
  io.stderr(`arl replay: ${message}\n`);
  return code;
}

export const replayCommand = defineCommand({
  name: "replay",
  summary: "play a run's recorded episodes again in their envs and compare every answer",
  usage,
  options: { iteration: { type: "string" }, episode: { type: "string" }, "data-root": { type: "string" } },
  async run(parsed, io) {
    const v = parsed.values;
    const [dir, ...extra] = parsed.positionals;
    if (dir === undefined) throw new UsageError("give the run directory that 'arl run' printed");
    if (extra.length > 0) throw new UsageError(`give one run directory, not ${parsed.positionals.length}`);
    const iteration = integer("iteration", v.iteration);
    const episode = episodeOf(v.episode);
    let run: RunDirectory;
    let plan: Plan;
    let dataRoot: string | undefined;
    try {
      run = RunDirectory.open(path.resolve(io.cwd, dir));
      plan = run.readPlan();
      dataRoot = dataRootOf(run, plan, v["data-root"] === undefined ? undefined : path.resolve(io.cwd, v["data-root"]));
    } catch (error) {
      if (error instanceof RunDirectoryError || error instanceof PlanFileError || error instanceof DataRootError)
        return fail(io, error.message.replace(/^'[^']*'/, `'${dir}'`), ExitCode.usage);
      if (error instanceof EnvError) return fail(io, error.message, ExitCode.errors);
      throw error;
    }
    const where = displayPath(run.bufferPath, io.cwd);
    if (!existsSync(run.bufferPath))
      return fail(io, `${where} does not exist: the run has written no trajectories yet`, ExitCode.errors);
    let contents: BufferContents;
    try {
      contents = readBuffer(run.bufferPath);
    } catch (error) {
      return fail(io, `${where} is damaged: ${(error as Error).message}`, ExitCode.errors);
    }
    if (contents.records.length === 0) return fail(io, `${where} holds no complete trajectory yet`, ExitCode.errors);
    // Code that changed since the run is replayed as it is now: said first, so that a divergence is read with it.
    for (const c of dataRoot ? changedCodeFiles(plan.envs, dataRoot) : [])
      io.stderr(
        `arl replay: note: env '${c.env}' (${c.kind}): the code file '${c.path}' ${c.found !== undefined ? `has sha256 ${c.found}` : `cannot be read (${c.missing})`}, but the run's plan was lowered with sha256 ${c.planned}: the replay runs the code as it is now\n`,
      );
    const kinds = dataRoot ? envKindsWithDataRoot(dataRoot) : envKinds;
    const counts = { identical: 0, diverged: 0, cannot: 0 };
    try {
      const selection = {
        ...(iteration !== undefined ? { iteration } : {}),
        ...(episode !== undefined ? { episode } : {}),
      };
      await replayRun(
        plan,
        contents.records,
        selection,
        kinds,
        { runDir: run.dir, dataRoot },
        (line) => io.stderr(`${line}\n`),
        (e) => {
          counts[e.result.status]++;
          io.stdout(episodeText(e));
        },
      );
    } catch (error) {
      if (error instanceof SelectionError) return fail(io, error.message, ExitCode.errors);
      throw error;
    }
    const total = counts.identical + counts.diverged + counts.cannot;
    const parts = [
      `${counts.identical} identical`,
      `${counts.diverged} diverged`,
      ...(counts.cannot > 0 ? [`${counts.cannot} could not be replayed`] : []),
    ];
    io.stdout(
      `replayed ${total} episode${total === 1 ? "" : "s"} of ${plan.experiment}/${plan.variant}: ${parts.join(", ")}\n`,
    );
    return counts.identical === total ? ExitCode.ok : ExitCode.errors;
  },
});
