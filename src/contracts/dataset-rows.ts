// The rows of a dataset task file (env kind `dataset`): one JSON object per non-blank line, task
// N being the N-th row. The prompt is a string or chat messages, the ground truth any JSON value
// (a string or number for the built-in scorers), the split (when a column names it) train, valid
// or test. Lowering reports a bad row as `file:line` and the runtime reads rows by the same rule,
// so a file that checked cleanly runs.
import type { PromptMessage } from "./env.js";

export type DatasetSplit = "train" | "valid" | "test";

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
    if (typeof value !== "object" || value === null || Array.isArray(value) || !Object.hasOwn(value, part)) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

const ROLES = new Set(["system", "user", "assistant"]);

function promptOf(value: unknown): { readonly prompt: DatasetRow["prompt"] } | { readonly problem: string } {
  if (typeof value === "string") return value.trim() === "" ? { problem: "is an empty prompt" } : { prompt: value };
  if (!Array.isArray(value)) return { problem: `is ${value === undefined ? "missing" : `a ${value === null ? "null" : typeof value}`}, not a prompt (a string or chat messages)` };
  const messages: PromptMessage[] = [];
  for (const [i, m] of value.entries()) {
    const ok = typeof m === "object" && m !== null && ROLES.has((m as { role?: unknown }).role as string) && typeof (m as { content?: unknown }).content === "string";
    if (!ok) return { problem: `has a message ${i} that is not {"role": "system" | "user" | "assistant", "content": string}` };
    messages.push({ role: (m as PromptMessage).role, content: (m as PromptMessage).content });
  }
  return messages.some((m) => m.role === "user") ? { prompt: messages } : { problem: "has no user message" };
}

const SPLITS = new Set<string>(["train", "valid", "test"]);

/** Reads one row, or says what is wrong with it. */
function readRow(object: Readonly<Record<string, unknown>>, line: number, columns: DatasetColumns): DatasetRow | RowProblem {
  const prompt = promptOf(columnValue(object, columns.prompt));
  if ("problem" in prompt) return { line, problem: `column '${columns.prompt}' ${prompt.problem}` };
  const answer = columnValue(object, columns.answer);
  if (answer === undefined) return { line, problem: `column '${columns.answer}' is missing (the ground truth the scorer needs)` };
  if (columns.answerIsText && typeof answer !== "string" && typeof answer !== "number") return { line, problem: `column '${columns.answer}' is a ${answer === null ? "null" : Array.isArray(answer) ? "list" : typeof answer}, not a string or number (the built-in scorers compare text)` };
  let split: DatasetSplit | undefined;
  if (columns.split !== null) {
    const value = columnValue(object, columns.split);
    if (typeof value !== "string" || !SPLITS.has(value)) return { line, problem: `column '${columns.split}' is ${value === undefined ? "missing" : JSON.stringify(value)}, not "train", "valid" or "test"` };
    split = value as DatasetSplit;
  }
  return { line, prompt: prompt.prompt, answer, split, columns: object };
}

/** At most this many bad rows are listed: enough to see a pattern, not a flood. */
const MAX_PROBLEMS = 5;

/** The rows of `text`, or the first bad lines (1-based) and what is wrong with each. */
export function datasetRows(text: string, columns: DatasetColumns): { readonly rows: readonly DatasetRow[] } | { readonly problems: readonly RowProblem[] } {
  const rows: DatasetRow[] = [];
  const problems: RowProblem[] = [];
  for (const [i, raw] of text.split("\n").entries()) {
    if (raw.trim() === "") continue;
    const line = i + 1;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch {
      problems.push({ line, problem: "the line is not JSON" });
      if (problems.length >= MAX_PROBLEMS) break;
      continue;
    }
    const row = typeof value === "object" && value !== null && !Array.isArray(value) ? readRow(value as Record<string, unknown>, line, columns) : { line, problem: "the line is not a JSON object" };
    if ("problem" in row) {
      problems.push(row);
      if (problems.length >= MAX_PROBLEMS) break;
    } else rows.push(row);
  }
  if (problems.length > 0) return { problems };
  return rows.length === 0 ? { problems: [{ line: 1, problem: "the file has no row (no non-blank line)" }] } : { rows };
}

/** `file:line: problem` for each problem, one a line. */
export function describeRowProblems(file: string, problems: readonly RowProblem[]): string {
  return problems.map((p) => `${file}:${p.line}: ${p.problem}`).join("\n");
}
