// Lowering a dataset env (kind `dataset`): its rows file and verifier file recorded by their
// content hash, `tasks` the row count, the rows checked (a bad row is `file:line`), the rows' own
// splits read from their column into task-id ranges, the pattern compiled and the verifier's
// function looked for, all before anything runs (docs/datasets.md).
import type { Diagnostic } from "../diagnostics/diagnostic.js";
import {
  DATASET_TOOLS,
  DatasetFileError,
  describeRowProblems,
  isDatasetTool,
  readDatasetFile,
  type DatasetRow,
  type DatasetRowsRead,
  type DatasetSplit,
} from "../contracts/dataset-rows.js";
import { boundOf } from "./bounds.js";
import type { VariantModel } from "../semantics/analyze.js";
import type { Env } from "../semantics/schema/env.js";
import { dataFile, dataFilePath, originOf, readDataText } from "./lower-data-files.js";
import type { LoweringContext } from "./lower-context.js";
import type { PlanEnv } from "./schema.js";
import type { CompilerCode } from "../diagnostics/codes/index.js";

type DatasetEnv = Extract<Env, { kind: "dataset" }>;

/** Scorers that read a Python file; the others compare text in the runtime (or through math-verify). */
const PYTHON_SCORERS = new Set(["verl", "trl"]);
/** Scorers whose answer extraction a `pattern` replaces. */
const PATTERN_SCORERS = new Set(["exact", "number"]);

/** [from, to) ranges of the ascending ids. */
function idRanges(ids: readonly number[]): [number, number][] {
  const ranges: [number, number][] = [];
  for (const id of ids) {
    const last = ranges[ranges.length - 1];
    if (last && last[1] === id) last[1] = id + 1;
    else ranges.push([id, id + 1]);
  }
  return ranges;
}

/** The task ids of each split, from the rows' own split column. */
function rowSplits(column: string, rows: readonly DatasetRow[]) {
  const ids: Record<DatasetSplit, number[]> = { train: [], valid: [], test: [] };
  for (const [id, row] of rows.entries()) if (row.split) ids[row.split].push(id);
  return { column, train: idRanges(ids.train), valid: idRanges(ids.valid), test: idRanges(ids.test) };
}

/**
 * Whether `source` binds `name` at its top level: a def, a class, an assignment or an import.
 * Read as text (no Python at check time); the env host confirms it when the run provisions.
 */
function definesFunction(source: string, name: string): boolean {
  const n = name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const patterns = [
    new RegExp(`^(?:async\\s+)?def\\s+${n}\\s*\\(`, "m"),
    new RegExp(`^class\\s+${n}\\b`, "m"),
    new RegExp(`^${n}\\s*(?::[^=\\n]*)?=`, "m"),
    new RegExp(`^(?:from\\s+\\S+\\s+)?import\\s+[^\\n]*\\b${n}\\b`, "m"),
  ];
  return patterns.some((p) => p.test(source));
}

/** The rows of the env's file, read under its bounds; undefined when dataFile has reported why it cannot be (missing, refused, too large). */
function readRows(env: DatasetEnv, python: boolean, file: string | undefined): DatasetRowsRead | undefined {
  if (file === undefined) return undefined;
  try {
    return readDatasetFile(
      file,
      {
        prompt: env.prompt_column,
        answer: env.answer_column,
        split: env.split_column,
        answerIsText: !python,
        lookup: Object.hasOwn(env.tool, "lookup") ? env.lookup_column : null,
      },
      { maxDataBytes: env.max_data_bytes, maxRowBytes: env.max_row_bytes },
    ).read;
  } catch (error) {
    if (error instanceof DatasetFileError || typeof (error as NodeJS.ErrnoException).code === "string")
      return undefined;
    // hyparquet could not decode it: a bad file, said as one.
    return { problems: [{ line: 0, problem: (error as Error).message }] };
  }
}

type Report = (code: CompilerCode, at: string[], message: string, hint: string) => void;

/** The env's tools are its built-in ones, each declaring the argument it reads; lookup needs its column. */
function checkTools(name: string, env: DatasetEnv, report: Report): void {
  const at = (...field: string[]) => ["env", name, ...field];
  for (const [tool, declared] of Object.entries(env.tool)) {
    if (!isDatasetTool(tool)) {
      report(
        "dataset-tool-unknown",
        at("tool", tool),
        `env '${name}': a dataset env serves the tools calculator and lookup, not '${tool}'`,
        "rename the tool to calculator or lookup (std/envs/dataset declares both), or serve it from an env of its own (kind http or subprocess)",
      );
      continue;
    }
    const argument = DATASET_TOOLS[tool];
    if (declared.parameters[argument]?.type !== "string") {
      report(
        "dataset-tool-parameters",
        at("tool", tool),
        `env '${name}': the ${tool} tool reads a string argument '${argument}', which its declaration does not give`,
        `declare parameters { ${argument} { type: string } } (or extend dataset.${tool === "calculator" ? "calculator_task" : "lookup_task"})`,
      );
    }
  }
  const lookup = Object.hasOwn(env.tool, "lookup");
  if (lookup && env.lookup_column === null)
    report(
      "dataset-lookup-column-missing",
      at("tool", "lookup"),
      `env '${name}': the lookup tool reads a column of entries, and the env names none`,
      'name it: lookup_column: "facts" (each row\'s {"key": "text"} object)',
    );
  if (!lookup && env.lookup_column !== null)
    report(
      "dataset-lookup-column-unused",
      at("lookup_column"),
      `env '${name}': lookup_column is set, but the env offers no lookup tool to read it`,
      "declare tool lookup (or extend dataset.lookup_task), or remove lookup_column",
    );
}

export function lowerDatasetEnv(
  name: string,
  env: DatasetEnv,
  common: Record<string, unknown>,
  variant: VariantModel,
  context: LoweringContext,
  diagnostics: Diagnostic[],
): PlanEnv {
  const report: Report = (code, at, message, hint) => {
    const origin = originOf(at, variant);
    diagnostics.push({ code, severity: "error", message, file: origin.file, range: origin.range, hint });
  };
  const at = (field: string) => ["env", name, field];
  const dataLimit = {
    maxBytes: env.max_data_bytes,
    field: `env.${name}.max_data_bytes`,
    ceiling: boundOf("envs.*.max_data_bytes").max,
  };
  const data = dataFile(env.data, at("data"), variant, context, diagnostics, dataLimit);
  const python = PYTHON_SCORERS.has(env.scorer);
  const verifier = env.verifier === null ? null : dataFile(env.verifier, at("verifier"), variant, context, diagnostics);
  if (python && env.verifier === null) {
    report(
      "dataset-verifier-missing",
      at("scorer"),
      `env '${name}': scorer ${env.scorer} calls a Python function, but the env names no verifier file`,
      `add verifier: "./reward.py" (the file defining ${env.function})`,
    );
  }
  if (!python && env.verifier !== null) {
    report(
      "dataset-verifier-unused",
      at("verifier"),
      `env '${name}': scorer ${env.scorer} is built in and never calls the verifier file '${env.verifier}'`,
      "write scorer: verl (compute_score(data_source, solution_str, ground_truth, extra_info)) or scorer: trl (f(completions, **columns)), or remove verifier",
    );
  }
  if (python && env.verifier !== null) {
    const source = readDataText(env.verifier, at("verifier"), variant, context);
    if (source !== undefined && !definesFunction(source, env.function)) {
      report(
        "dataset-verifier-function-missing",
        at(variant.valuesByPath.has(at("function")) ? "function" : "verifier"),
        `env '${name}': the verifier file '${env.verifier}' does not define '${env.function}' at its top level`,
        `define def ${env.function}(...) in '${env.verifier}', or name the function it defines with function: NAME`,
      );
    }
  }
  if (env.pattern !== null) {
    if (!PATTERN_SCORERS.has(env.scorer)) {
      report(
        "dataset-pattern-unused",
        at("pattern"),
        `env '${name}': scorer ${env.scorer} extracts the answer itself and ignores pattern`,
        "remove pattern, or use scorer exact or number with it",
      );
    } else {
      try {
        new RegExp(env.pattern, "g");
      } catch (error) {
        report(
          "dataset-pattern-invalid",
          at("pattern"),
          `env '${name}': the pattern ${JSON.stringify(env.pattern)} is not a regular expression: ${(error as Error).message}`,
          'write a JavaScript regular expression; its first group (or the whole match) is the answer, e.g. "#### (-?[0-9.,]+)"',
        );
      }
    }
  }
  checkTools(name, env, report);
  let tasks = env.tasks;
  let splits = null;
  const read = readRows(env, python, dataFilePath(env.data, at("data"), variant, context));
  if (read !== undefined) {
    if ("problems" in read) {
      report(
        "dataset-row-invalid",
        at("data"),
        `env '${name}': bad rows in the data file:\n${describeRowProblems(data.path, read.problems)}`,
        `each row (a JSON line, or a Parquet row) is one object with a prompt in '${env.prompt_column}' (text or chat messages) and the ground truth in '${env.answer_column}'${env.split_column ? `, and '${env.split_column}' one of train, valid, test` : ""}`,
      );
    } else {
      const written = variant.valuesByPath.has(at("tasks"));
      if (written && env.tasks > read.rows.length) {
        report(
          "dataset-tasks-beyond-file",
          at("tasks"),
          `env '${name}': tasks is ${env.tasks}, but the data file '${env.data}' has ${read.rows.length} rows`,
          `remove tasks (it is the row count, ${read.rows.length}), or write at most ${read.rows.length}`,
        );
      } else if (!written) tasks = read.rows.length;
      if (env.split_column !== null) splits = rowSplits(env.split_column, read.rows.slice(0, tasks));
    }
  }
  return { ...common, tasks, data, split_column: splits, verifier } as PlanEnv;
}
