// An sql env's questions file: JSON lines, each a question with its gold SQL or its expected
// answer table.
import { EnvError } from "../../../contracts/env.js";
import type { Cell, Row } from "./text.js";

export interface Question {
  readonly text: string;
  readonly sql?: string;
  /** Given directly in the questions file (no gold SQL). */
  readonly expected?: readonly Row[];
  readonly ordered: boolean;
}

const ORDER_WORDS = /\b(order(ed)?|sort(ed)?|rank(ed)?|ascending|descending)\b/i;

function cell(v: unknown, where: string): Cell {
  if (v === null || typeof v === "number" || typeof v === "string") return v;
  if (typeof v === "boolean") return v ? 1 : 0;
  throw new EnvError(`${where}: an expected value must be a number, string, boolean or null`, "protocol");
}

/** `expected` as a table: rows of cells; a flat array is one column, a scalar one cell, objects their values. */
function expectedTable(v: unknown, where: string): Row[] {
  if (!Array.isArray(v)) return [[cell(v, where)]];
  return (v as unknown[]).map((r) => {
    if (Array.isArray(r)) return r.map((x) => cell(x, where));
    if (r !== null && typeof r === "object") return Object.values(r).map((x) => cell(x, where));
    return [cell(r, where)];
  });
}

/** JSON lines: {question, sql} or {question, expected}, optionally `ordered` (else guessed from the wording). */
export function parseQuestions(text: string, file: string): Question[] {
  const out: Question[] = [];
  const lines = text.split(/\r?\n/);
  lines.forEach((line, i) => {
    if (line.trim() === "") return;
    const where = `${file}:${i + 1}`;
    let v: unknown;
    try {
      v = JSON.parse(line);
    } catch (error) {
      // JSON.parse's message quotes the line: keep only where it failed, never the file's text.
      const at = /at position (\d+)/.exec((error as Error).message)?.[1];
      throw new EnvError(
        `${where}: not a JSON object (the line is not valid JSON${at === undefined ? "" : ` at column ${Number(at) + 1}`})`,
        "protocol",
      );
    }
    if (!v || typeof v !== "object" || Array.isArray(v))
      throw new EnvError(
        `${where}: each line must be a JSON object {question, sql} or {question, expected}`,
        "protocol",
      );
    const o = v as Record<string, unknown>;
    if (typeof o.question !== "string" || o.question.trim() === "")
      throw new EnvError(`${where}: "question" must be a non-empty string`, "protocol");
    const hasSql = typeof o.sql === "string" && o.sql.trim() !== "";
    if (!hasSql && !("expected" in o))
      throw new EnvError(
        `${where}: a question needs "sql" (its gold query) or "expected" (its answer table)`,
        "protocol",
      );
    if ("ordered" in o && typeof o.ordered !== "boolean")
      throw new EnvError(`${where}: "ordered" must be true or false`, "protocol");
    const ordered = typeof o.ordered === "boolean" ? o.ordered : ORDER_WORDS.test(o.question);
    out.push({
      text: o.question,
      ordered,
      ...(hasSql ? { sql: o.sql as string } : {}),
      ...("expected" in o ? { expected: expectedTable(o.expected, where) } : {}),
    });
  });
  return out;
}
