// The rows of a dataset task file (env kind `dataset`): one JSON object per non-blank line (read
// line by line, under the env's max_data_bytes and max_row_bytes), or one Parquet row (decoded by
// hyparquet, parquet-rows.ts), task N being the N-th row. The prompt is a string or chat messages, the ground truth any JSON value
// (a string or number for the built-in scorers), the split (when a column names it) train, valid
// or test. Lowering reports a bad row as `file:line` and the runtime reads rows by the same rule,
// so a file that checked cleanly runs.
import { createHash } from "node:crypto";
import { readFileSync, statSync } from "node:fs";
import type { PromptMessage } from "./env.js";
import { fileLines, lineText, type FileLine } from "./line-reader.js";
import { parquetObjects } from "./parquet-rows.js";

export type DatasetSplit = "train" | "valid" | "test";

/** The tools a dataset env serves itself (envs/dataset/tools.ts), each with the string argument it reads. */
export const DATASET_TOOLS = { calculator: "expression", lookup: "key" } as const;

export function isDatasetTool(name: string): name is keyof typeof DATASET_TOOLS {
  return Object.hasOwn(DATASET_TOOLS, name);
}

/** One row: its 1-based line in the file and its object as written. */
export interface DatasetRow {
  readonly line: number;
  readonly prompt: string | readonly PromptMessage[];
  readonly answer: unknown;
  readonly split: DatasetSplit | undefined;
  readonly columns: Readonly<Record<string, unknown>>;
}

export interface DatasetColumns {
  readonly prompt: string;
  readonly answer: string;
  readonly split: string | null;
  /** The built-in scorers compare text: their ground truth must be a string or a number. */
  readonly answerIsText: boolean;
  /** The column the lookup tool reads (an object of entries), when the env offers it. */
  readonly lookup?: string | null;
}

export interface RowProblem {
  readonly line: number;
  readonly problem: string;
}

/** The value at a column; a dotted name reads nested objects (`reward_model.ground_truth`) when no column has the dotted name itself. */
export function columnValue(row: Readonly<Record<string, unknown>>, column: string): unknown {
  if (Object.hasOwn(row, column)) return row[column];
  let value: unknown = row;
  for (const part of column.split(".")) {
    if (typeof value !== "object" || value === null || Array.isArray(value) || !Object.hasOwn(value, part))
      return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

const ROLES = new Set(["system", "user", "assistant"]);

function promptOf(value: unknown): { readonly prompt: DatasetRow["prompt"] } | { readonly problem: string } {
  if (typeof value === "string") return value.trim() === "" ? { problem: "is an empty prompt" } : { prompt: value };
  if (!Array.isArray(value))
    return {
      problem: `is ${value === undefined ? "missing" : `a ${value === null ? "null" : typeof value}`}, not a prompt (a string or chat messages)`,
    };
  const messages: PromptMessage[] = [];
  for (const [i, m] of value.entries()) {
    const ok =
      typeof m === "object" &&
      m !== null &&
      ROLES.has((m as { role?: unknown }).role as string) &&
      typeof (m as { content?: unknown }).content === "string";
    if (!ok)
      return { problem: `has a message ${i} that is not {"role": "system" | "user" | "assistant", "content": string}` };
    messages.push({ role: (m as PromptMessage).role, content: (m as PromptMessage).content });
  }
  return messages.some((m) => m.role === "user") ? { prompt: messages } : { problem: "has no user message" };
}

const SPLITS = new Set<string>(["train", "valid", "test"]);

/** Reads one row, or says what is wrong with it. */
function readRow(
  object: Readonly<Record<string, unknown>>,
  line: number,
  columns: DatasetColumns,
): DatasetRow | RowProblem {
  const prompt = promptOf(columnValue(object, columns.prompt));
  if ("problem" in prompt) return { line, problem: `column '${columns.prompt}' ${prompt.problem}` };
  const answer = columnValue(object, columns.answer);
  if (answer === undefined)
    return { line, problem: `column '${columns.answer}' is missing (the ground truth the scorer needs)` };
  if (columns.answerIsText && typeof answer !== "string" && typeof answer !== "number")
    return {
      line,
      problem: `column '${columns.answer}' is a ${answer === null ? "null" : Array.isArray(answer) ? "list" : typeof answer}, not a string or number (the built-in scorers compare text)`,
    };
  let split: DatasetSplit | undefined;
  if (columns.split !== null) {
    const value = columnValue(object, columns.split);
    if (typeof value !== "string" || !SPLITS.has(value))
      return {
        line,
        problem: `column '${columns.split}' is ${value === undefined ? "missing" : JSON.stringify(value)}, not "train", "valid" or "test"`,
      };
    split = value as DatasetSplit;
  }
  if (columns.lookup) {
    const entries = columnValue(object, columns.lookup);
    if (typeof entries !== "object" || entries === null || Array.isArray(entries))
      return {
        line,
        problem: `column '${columns.lookup}' is ${entries === undefined ? "missing" : `a ${entries === null ? "null" : Array.isArray(entries) ? "list" : typeof entries}`}, not an object of entries (the lookup tool reads it)`,
      };
  }
  return { line, prompt: prompt.prompt, answer, split, columns: object };
}

/** At most this many bad rows are listed: enough to see a pattern, not a flood. */
const MAX_PROBLEMS = 5;

/** The bounds a rows file is read under (the env's max_data_bytes and max_row_bytes). */
export interface DatasetBounds {
  readonly maxDataBytes: number;
  readonly maxRowBytes: number;
}

export type DatasetRowsRead = { readonly rows: readonly DatasetRow[] } | { readonly problems: readonly RowProblem[] };

/** Collects rows and the first problems; a row is one parsed object, or what is wrong with its line. */
class RowCollector {
  readonly rows: DatasetRow[] = [];
  readonly problems: RowProblem[] = [];
  constructor(private readonly columns: DatasetColumns) {}

  /** Adds one line's object (or its problem); false once enough problems are listed. */
  add(line: number, value: unknown): boolean {
    const row =
      typeof value === "string"
        ? { line, problem: value }
        : typeof value === "object" && value !== null && !Array.isArray(value)
          ? readRow(value as Record<string, unknown>, line, this.columns)
          : { line, problem: "the line is not a JSON object" };
    if ("problem" in row) this.problems.push(row);
    else this.rows.push(row);
    return this.problems.length < MAX_PROBLEMS;
  }

  result(): DatasetRowsRead {
    if (this.problems.length > 0) return { problems: this.problems };
    return this.rows.length === 0
      ? { problems: [{ line: 1, problem: "the file has no row (no non-blank line)" }] }
      : { rows: this.rows };
  }
}

/** One line's object, what is wrong with it (a string), or undefined for a blank line. */
function parseLine(bytes: Uint8Array): unknown {
  const raw = lineText(bytes);
  if (raw === null) return "the line is not UTF-8 text (an invalid byte sequence); save the file as UTF-8";
  if (raw.trim() === "") return undefined;
  try {
    const value: unknown = JSON.parse(raw);
    // A JSON string is not a row: keep it apart from the problems, which are strings too.
    return typeof value === "string" ? [value] : value;
  } catch {
    return "the line is not JSON";
  }
}

/** The rows of JSON-lines `lines`, or the first bad lines and what is wrong with each. */
function rowsOfLines(lines: Iterable<FileLine>, columns: DatasetColumns, maxRowBytes: number): DatasetRowsRead {
  const collector = new RowCollector(columns);
  for (const line of lines) {
    const value =
      "tooLong" in line
        ? `a row of ${line.tooLong} bytes, more than max_row_bytes (${maxRowBytes}): shorten or drop it, or raise max_row_bytes`
        : parseLine(line.bytes);
    if (value !== undefined && !collector.add(line.line, value)) break;
  }
  return collector.result();
}

/** The rows of `text` (JSON lines), or the first bad lines (1-based) and what is wrong with each. */
export function datasetRows(text: string, columns: DatasetColumns): DatasetRowsRead {
  const lines = text.split("\n").map((raw, i): FileLine => ({ line: i + 1, bytes: Buffer.from(raw, "utf8") }));
  return rowsOfLines(lines, columns, Number.MAX_SAFE_INTEGER);
}

/** A rows file that cannot be read at all: larger than its bound, or not readable. */
export class DatasetFileError extends Error {
  constructor(
    message: string,
    /** The file's size when it is larger than max_data_bytes. */
    readonly tooLarge?: number,
  ) {
    super(message);
  }
}

/** Parquet by its extension; everything else is read as JSON lines. */
function isParquet(file: string): boolean {
  return file.toLowerCase().endsWith(".parquet");
}

/**
 * Reads and checks the rows of `file`, JSON lines streamed line by line (no line longer than
 * max_row_bytes is held) or a Parquet file read whole, hashing its bytes in the same pass; a file
 * larger than max_data_bytes is refused before it is read.
 */
export function readDatasetFile(
  file: string,
  columns: DatasetColumns,
  bounds: DatasetBounds,
): { readonly read: DatasetRowsRead; readonly sha256: string } {
  const tooLarge = (bytes: number) =>
    new DatasetFileError(
      `holds ${bytes} bytes, more than max_data_bytes (${bounds.maxDataBytes}); it was not read`,
      bytes,
    );
  const size = statSync(file).size;
  if (size > bounds.maxDataBytes) throw tooLarge(size);
  const hash = createHash("sha256");
  if (isParquet(file)) {
    const bytes = readFileSync(file);
    if (bytes.length > bounds.maxDataBytes) throw tooLarge(bytes.length);
    hash.update(bytes);
    const collector = new RowCollector(columns);
    for (const [i, object] of parquetObjects(bytes).entries()) {
      const length = Buffer.byteLength(JSON.stringify(object), "utf8");
      const value =
        length > bounds.maxRowBytes
          ? `a row of ${length} bytes (as JSON), more than max_row_bytes (${bounds.maxRowBytes}): shorten or drop it, or raise max_row_bytes`
          : object;
      if (!collector.add(i + 1, value)) break;
    }
    return { read: collector.result(), sha256: hash.digest("hex") };
  }
  let read = 0;
  const lines = fileLines(file, {
    maxLineBytes: bounds.maxRowBytes,
    onChunk: (chunk) => {
      // A file that grows while it is read is not the one checked against its bound.
      read += chunk.length;
      if (read > bounds.maxDataBytes) throw tooLarge(read);
      hash.update(chunk);
    },
  });
  // With rows the file was read to its end; with problems it may not have been, and the hash is moot.
  return { read: rowsOfLines(lines, columns, bounds.maxRowBytes), sha256: hash.digest("hex") };
}

/** Where a row is, for messages: `file:line` in JSON lines, `file row N` in Parquet; line 0 is the file as a whole. */
export function rowLocation(file: string, line: number): string {
  if (line === 0) return file;
  return isParquet(file) ? `${file} row ${line}` : `${file}:${line}`;
}

/** Each problem at its row, one a line. */
export function describeRowProblems(file: string, problems: readonly RowProblem[]): string {
  return problems.map((p) => `${rowLocation(file, p.line)}: ${p.problem}`).join("\n");
}
