// The `dataset` env kind (docs/datasets.md): a file of prompts with their ground truth, one row a
// task, an episode the model's one answer scored against its row. The built-in text scorers run
// here (scorers.ts); math-verify and the user's own Python functions run in the env host
// (../env-host.ts), started at provision, where a verifier file that cannot be loaded refuses the
// run naming the file. A verifier that raises, returns something that is not a score or runs out
// of time is an env error for that episode (its traceback appended to env-host.log in the run
// directory), never a silent zero.
import { appendFileSync } from "node:fs";
import path from "node:path";
import {
  columnValue,
  DatasetFileError,
  describeRowProblems,
  readDatasetFile,
  rowLocation,
  type DatasetRow,
  type DatasetRowsRead,
} from "../../../contracts/dataset-rows.js";
import {
  EnvError,
  type EnvInstance,
  type EnvKind,
  type EnvProvisionContext,
  type Signals,
} from "../../../contracts/env.js";
import { EMBEDDED_VOCABULARY_LIMIT } from "../../../contracts/trainer-protocol.js";
import type { PlanEnv } from "../../../plan/schema.js";
import { dataFileChanged, locateDataFile, verifyDataFile } from "../../data-files.js";
import { EnvHost, EnvHostError } from "../env-host/client.js";
import { scoreText } from "./scorers.js";
import { runDatasetTool } from "./tools.js";

export type DatasetEnv = Extract<PlanEnv, { kind: "dataset" }>;

const PYTHON_SCORERS = new Set<DatasetEnv["scorer"]>(["verl", "trl"]);
const HOST_SCORERS = new Set<DatasetEnv["scorer"]>(["verl", "trl", "math_verify"]);
/** The signals of an episode that ended without an answer (cut before its turn ended, or none given). */
const UNANSWERED: Signals = { correct: false, score: 0, answered: false, success: false };
const WORDS = /[A-Za-z0-9_]+|[^\sA-Za-z0-9_]/g;

/** What one run's dataset envs share: the rows read once per file, one env host for every Python scorer. */
interface DatasetRuntime {
  readonly rows: Map<string, readonly DatasetRow[]>;
  host: EnvHost | undefined;
  readonly handles: Map<string, string>;
  logFile: string | undefined;
}

function promptText(row: DatasetRow): string {
  return typeof row.prompt === "string" ? row.prompt : row.prompt.map((m) => m.content).join("\n");
}

export function createDatasetEnv(
  options: { readonly root?: string; readonly python?: string } = {},
): EnvKind<DatasetEnv> {
  const runtime: DatasetRuntime = { rows: new Map(), host: undefined, handles: new Map(), logFile: undefined };

  /**
   * The env's rows, read under its max_data_bytes and max_row_bytes and hashed in the same pass
   * against the plan's sha256; a bad row is an EnvError naming file:line.
   */
  function rowsOf(env: DatasetEnv): readonly DatasetRow[] {
    const { absolute } = locateDataFile(env.data, options.root, "data", "dataset");
    const key = `${absolute}@${env.data.sha256}:${env.prompt_column}:${env.answer_column}:${env.split_column?.column ?? ""}:${env.scorer}:${env.max_data_bytes}:${env.max_row_bytes}:${env.lookup_column ?? ""}`;
    const known = runtime.rows.get(key);
    if (known) return known;
    const columns = {
      prompt: env.prompt_column,
      answer: env.answer_column,
      split: env.split_column?.column ?? null,
      answerIsText: !PYTHON_SCORERS.has(env.scorer),
      lookup: env.lookup_column,
    };
    let read: DatasetRowsRead;
    let sha256: string;
    try {
      ({ read, sha256 } = readDatasetFile(absolute, columns, {
        maxDataBytes: env.max_data_bytes,
        maxRowBytes: env.max_row_bytes,
      }));
    } catch (error) {
      if (error instanceof DatasetFileError)
        throw new EnvError(
          `dataset env: the data file '${env.data.path}' ${error.message} (raise the env's max_data_bytes, or cut the file)`,
          "unavailable",
        );
      if (typeof (error as NodeJS.ErrnoException).code === "string")
        throw new EnvError(
          `dataset env: the data file '${env.data.path}' cannot be read: ${(error as Error).message}`,
          "unavailable",
        );
      throw new EnvError(`dataset env: the data file '${env.data.path}' ${(error as Error).message}`, "protocol");
    }
    // Bad rows first: a file cut short by them was not hashed to its end.
    if ("problems" in read)
      throw new EnvError(
        `dataset env: bad rows in the data file:\n${describeRowProblems(env.data.path, read.problems)}`,
        "protocol",
      );
    if (sha256 !== env.data.sha256) throw dataFileChanged(env.data, absolute, sha256, "dataset", "data");
    if (read.rows.length < env.tasks)
      throw new EnvError(
        `dataset env: the data file '${env.data.path}' has ${read.rows.length} rows, but the plan declares tasks: ${env.tasks}`,
        "protocol",
      );
    runtime.rows.set(key, read.rows);
    return read.rows;
  }

  function host(): EnvHost {
    runtime.host ??= new EnvHost({
      ...(options.root ? { cwd: options.root } : {}),
      ...(options.python ? { python: options.python } : {}),
    });
    return runtime.host;
  }

  function handleKey(env: DatasetEnv): string {
    return `${env.verifier?.path ?? ""}::${env.function}`;
  }

  /** Calls the env's Python scorer on the host; its failures become the episode's env error. */
  async function scoreOnHost(env: DatasetEnv, task: number, row: DatasetRow, text: string): Promise<Signals> {
    const where = `row ${task} (${rowLocation(env.data.path, row.line)})`;
    const truth = row.answer;
    let params: Record<string, unknown>;
    if (env.scorer === "math_verify")
      params = { style: "math_verify", solution_str: text, ground_truth: String(truth) };
    else {
      const handle = runtime.handles.get(handleKey(env));
      if (!handle)
        throw new EnvError(
          `dataset env: the verifier '${env.verifier?.path}' was not loaded (the env was not provisioned)`,
          "unavailable",
        );
      params =
        env.scorer === "verl"
          ? {
              style: "verl",
              handle,
              data_source: columnValue(row.columns, "data_source") ?? null,
              solution_str: text,
              ground_truth: truth,
              extra_info: columnValue(row.columns, "extra_info") ?? null,
            }
          : {
              style: "trl",
              handle,
              prompt: row.prompt,
              completion: text,
              columns: Object.fromEntries(Object.entries(row.columns).filter(([k]) => k !== env.prompt_column)),
            };
    }
    try {
      const signals = (await host().request(
        "verifier.score",
        { ...params, timeout_s: env.timeout_s },
        env.timeout_s,
      )) as Signals;
      return signals;
    } catch (error) {
      if (!(error instanceof EnvError)) throw error;
      const what =
        env.scorer === "math_verify" ? "math-verify" : `the verifier '${env.function}' (${env.verifier?.path})`;
      const failure = error instanceof EnvHostError ? error.failure : undefined;
      if (failure?.traceback && runtime.logFile)
        appendFileSync(runtime.logFile, `--- ${what}, ${where}\n${failure.traceback}\n`);
      const verb = failure?.kind === "raised" ? "raised" : failure?.kind === "timeout" ? "timed out" : "failed";
      const logged = failure?.traceback && runtime.logFile ? ` (traceback in ${path.basename(runtime.logFile)})` : "";
      throw new EnvError(`${what} ${verb} on ${where}: ${error.message}${logged}`, error.kind);
    }
  }

  return {
    kind: "dataset",
    async create(env, task) {
      const rows = rowsOf(env);
      const row = rows[task];
      if (!row)
        throw new EnvError(`dataset env: task ${task} is beyond the data file's ${rows.length} rows`, "protocol");
      let outcome: Signals | undefined;
      const pattern = env.pattern === null ? null : new RegExp(env.pattern, "g");
      const instance: EnvInstance = {
        reset: () =>
          Promise.resolve({
            text: promptText(row),
            ...(typeof row.prompt === "string" ? {} : { messages: row.prompt }),
            signals: {},
          }),
        // The built-in tools (tools.ts); the episode goes on until a turn without a call, the answer.
        step: (call) =>
          Promise.resolve({ text: runDatasetTool(call, row, env.lookup_column), signals: {}, terminated: false }),
        async finalAnswer(text) {
          const scored = HOST_SCORERS.has(env.scorer)
            ? await scoreOnHost(env, task, row, text)
            : scoreText(env.scorer as "exact" | "number" | "boxed", text, row.answer as string | number, pattern);
          // `success`, the name eval.success reads by default, is the answer's correctness.
          outcome = { ...scored, success: scored.correct === true };
          return outcome;
        },
        outcome: () => Promise.resolve(outcome ?? UNANSWERED),
        close: () => Promise.resolve(),
      };
      return instance;
    },
    vocabulary(env) {
      // The rows' most frequent words (ties in code-unit order), up to what builtin:tiny takes: a
      // large data file's rare words are spelled as bytes rather than grow the model.
      const counts = new Map<string, number>();
      for (const row of rowsOf(env))
        for (const text of [promptText(row), String(row.answer)])
          for (const w of text.match(WORDS) ?? []) counts.set(w, (counts.get(w) ?? 0) + 1);
      const digits = "0123456789".split("");
      if (counts.size + digits.length <= EMBEDDED_VOCABULARY_LIMIT)
        return [...new Set([...digits, ...counts.keys()])].sort();
      const frequent = [...counts]
        .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
        .map(([w]) => w);
      return [...new Set([...digits, ...frequent])].slice(0, EMBEDDED_VOCABULARY_LIMIT).sort();
    },
    async provision(env, context: EnvProvisionContext) {
      rowsOf(env);
      if (!HOST_SCORERS.has(env.scorer)) return;
      runtime.logFile = path.join(context.runDir, "env-host.log");
      if (!PYTHON_SCORERS.has(env.scorer) || !env.verifier) {
        await host().request("ping", {}, 60);
        return;
      }
      const file = verifyDataFile(env.verifier, options.root, "verifier", "dataset");
      try {
        runtime.handles.set(handleKey(env), await host().load(file, env.function, Math.max(env.timeout_s, 60)));
      } catch (error) {
        if (!(error instanceof EnvError)) throw error;
        const failure = error instanceof EnvHostError ? error.failure : undefined;
        if (failure?.traceback)
          appendFileSync(runtime.logFile, `--- loading ${env.verifier.path}\n${failure.traceback}\n`);
        throw new EnvError(
          `dataset env '${context.name}': cannot load the verifier '${env.function}' from '${env.verifier.path}': ${error.message}`,
          "unavailable",
        );
      }
      context.log(`env '${context.name}': verifier ${env.function} loaded from ${env.verifier.path} in the env host`);
    },
    async shutdown() {
      await runtime.host?.close().catch(() => undefined);
      runtime.host = undefined;
      runtime.handles.clear();
    },
  };
}

/** The registered `dataset` env: no data root, so its data file cannot be found (see `envKindsWithDataRoot`). */
export const datasetEnv = createDatasetEnv();
