// `arl show RUN_DIR [--iteration N] [--task T] [--episode E] [--limit N] [--format text|json]
// [--tokens]`: the trajectories of a run, read back from its token buffer, as text or JSON lines.
import { existsSync } from "node:fs";
import path from "node:path";
import { displayPath } from "../../diagnostics/render.js";
import { selectTrajectories, SelectionError, trajectoryJson, type Selection } from "../../report/trajectories.js";
import { tokenTextOf } from "../../report/token-text.js";
import { tokensNote, trajectoryText } from "../../report/trajectory-text.js";
import { readBuffer, type BufferContents } from "../../episode/buffer.js";
import { RunDirectory, RunDirectoryError } from "../../runtime/run-dir.js";
import { defineCommand } from "../command.js";
import { ExitCode, UsageError } from "../io.js";

const DEFAULT_LIMIT = 3;

const usage = `Usage: arl show RUN_DIR [--iteration N] [--task T] [--episode E] [--limit N]
                [--format text|json] [--tokens]

Prints the trajectories a run trained on, read from its token buffer: per episode where it came
from (iteration, env, task, group, sample), how it ended, its reward and each term, its turns
and the policy versions that generated it; then each span of tokens by role (system, prompt,
generated, observation, pool, rendered) with its text and the tool calls parsed from it
(valid, blocked or error) and their results. The text is the episode's recorded conversation,
not decoded from the ids.

Episodes of an iteration are numbered from 0 in buffer order (by group, then sample); a group
is one task of the batch, a sample one of its group_size attempts. A step-wise episode
(harness.context { history: rerender }) prints one record per model call.

Options:
  --iteration N      the training iteration (default: the last one in the buffer)
  --task T           only the episodes of task T
  --episode E        one episode: its number N within the iteration, or GROUP/SAMPLE
  --limit N          without --task or --episode, at most N episodes (default ${DEFAULT_LIMIT}; 0: all)
  --format text|json text (default; coloured by role on a terminal, unless NO_COLOR is set),
                     or one JSON object per record and line, with fixed keys
  --tokens           also every token's id, policy version, log-probability and, on
                     trained records, the advantage it was trained with (ids, not
                     token text: decoding needs the run's tokenizer)

Exit status: 0 shown, 1 nothing to show (an empty buffer, or an iteration, task or episode
the buffer does not hold), 2 usage error or a path that is not a run directory.`;

function integer(flag: string, value: string | undefined, min: number): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) < min)
    throw new UsageError(`--${flag} must be an integer of at least ${min}, not '${value}'`);
  return Number(value);
}

function episodeOf(value: string | undefined): Selection["episode"] {
  if (value === undefined) return undefined;
  const pair = /^(\d+)\/(\d+)$/.exec(value);
  if (pair) return { group: Number(pair[1]), sample: Number(pair[2]) };
  if (/^\d+$/.test(value)) return Number(value);
  throw new UsageError(`--episode must be an episode number (0, 1, ...) or GROUP/SAMPLE (e.g. 1/0), not '${value}'`);
}

export const showCommand = defineCommand({
  name: "show",
  summary: "print a run's trajectories from its token buffer",
  usage,
  options: {
    iteration: { type: "string" },
    task: { type: "string" },
    episode: { type: "string" },
    limit: { type: "string" },
    format: { type: "string", default: "text" },
    tokens: { type: "boolean", default: false },
  },
  async run(parsed, io) {
    const v = parsed.values;
    const [dir, ...extra] = parsed.positionals;
    if (dir === undefined) throw new UsageError("give the run directory that 'arl run' printed");
    if (extra.length > 0) throw new UsageError(`give one run directory, not ${parsed.positionals.length}`);
    if (v.format !== "text" && v.format !== "json")
      throw new UsageError(`--format must be text or json, not '${v.format}'`);
    const selection: Selection = {
      ...optional("iteration", integer("iteration", v.iteration, 0)),
      ...optional("task", integer("task", v.task, 0)),
      ...optional("episode", episodeOf(v.episode)),
      limit: integer("limit", v.limit, 0) ?? DEFAULT_LIMIT,
    };
    let run: RunDirectory;
    try {
      run = RunDirectory.open(path.resolve(io.cwd, dir));
    } catch (error) {
      if (error instanceof RunDirectoryError) {
        // Name the directory as it was given, not resolved against the working directory.
        io.stderr(`arl show: ${error.message.replace(/^'[^']*'/, `'${dir}'`)}\n`);
        return ExitCode.usage;
      }
      throw error;
    }
    const where = displayPath(run.bufferPath, io.cwd);
    if (!existsSync(run.bufferPath)) {
      io.stderr(`arl show: ${where} does not exist: the run has written no trajectories yet\n`);
      return ExitCode.errors;
    }
    let contents: BufferContents;
    try {
      contents = readBuffer(run.bufferPath);
    } catch (error) {
      io.stderr(`arl show: ${where} is damaged: ${(error as Error).message}\n`);
      return ExitCode.errors;
    }
    if (contents.partialBytes > 0)
      io.stderr(
        `arl show: note: ${where} ends in a partial record of ${contents.partialBytes} bytes (a crash while writing it); showing the ${contents.records.length} complete records before it\n`,
      );
    if (contents.records.length === 0) {
      io.stderr(`arl show: ${where} holds no complete trajectory yet\n`);
      return ExitCode.errors;
    }
    let selected;
    try {
      selected = selectTrajectories(contents.records, selection);
    } catch (error) {
      if (error instanceof SelectionError) {
        io.stderr(`arl show: ${error.message}\n`);
        return ExitCode.errors;
      }
      throw error;
    }
    const tokens = v.tokens === true;
    // The tokenizer is looked for only where text is needed and not recorded.
    const needsTokenizer = tokens || selected.trajectories.some((t) => !t.hasText);
    const found = needsTokenizer ? tokenTextOf(run.dir) : undefined;
    const tokenText = found && "source" in found ? found : undefined;
    if (v.format === "json") {
      for (const t of selected.trajectories) io.stdout(`${JSON.stringify(trajectoryJson(t, { tokens, tokenText }))}\n`);
    } else {
      const color = io.isTTY && !io.env.NO_COLOR;
      if (tokens && found) io.stdout(tokensNote(found));
      for (const t of selected.trajectories) io.stdout(trajectoryText(t, { color, tokens, tokenText }));
    }
    const shownEpisodes = new Set(selected.trajectories.map((t) => t.episode)).size;
    if (shownEpisodes < selected.matched) {
      io.stderr(
        `arl show: note: showing ${shownEpisodes} of the ${selected.matched} episodes of iteration ${selected.iteration} (iterations ${selected.iterations[0]}-${selected.iterations[selected.iterations.length - 1]} in the buffer); --limit 0 shows all, --episode N or --task T one, --iteration N another iteration\n`,
      );
    }
    return ExitCode.ok;
  },
});

function optional<K extends string, T>(key: K, value: T | undefined): { [P in K]?: T } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: T };
}
