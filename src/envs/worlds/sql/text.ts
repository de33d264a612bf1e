// Small text utilities of the sql env: scanning SQL for its first keyword and identifiers
// (strings and comments skipped), rendering a result as a text table, and comparing result
// tables (multisets of rows, numbers with a tolerance, columns in any order).
import { at } from "../../../contracts/checked.js";

export type Cell = number | string | bigint | Buffer | null;
export type Row = readonly Cell[];

export interface Scan {
  /** The first keyword, upper-cased ("" when there is none). */
  readonly first: string;
  /** Identifiers (bare, "quoted", `quoted`, [quoted]), lower-cased, in order of appearance. */
  readonly identifiers: readonly string[];
}

/** Tokenizes just enough SQL to find identifiers; never throws, whatever the input. */
export function scanSql(sql: string): Scan {
  const identifiers: string[] = [];
  let first = "";
  let i = 0;
  const n = sql.length;
  const closeQuoted = (close: string, from: number): [string, number] => {
    let out = "";
    let j = from;
    while (j < n) {
      const c = sql.charAt(j);
      if (c === close) {
        if (close !== "]" && sql[j + 1] === close) {
          out += c;
          j += 2;
          continue;
        }
        return [out, j + 1];
      }
      out += c;
      j++;
    }
    return [out, n];
  };
  while (i < n) {
    const c = sql.charAt(i);
    if (c === "-" && sql[i + 1] === "-") {
      const end = sql.indexOf("\n", i);
      i = end < 0 ? n : end + 1;
    } else if (c === "/" && sql[i + 1] === "*") {
      const end = sql.indexOf("*/", i + 2);
      i = end < 0 ? n : end + 2;
    } else if (c === "'") {
      i = closeQuoted("'", i + 1)[1];
    } else if (c === '"' || c === "`" || c === "[") {
      const [name, next] = closeQuoted(c === "[" ? "]" : c, i + 1);
      identifiers.push(name.toLowerCase());
      i = next;
    } else if (/[A-Za-z_\u0080-\uffff]/.test(c)) {
      let j = i + 1;
      while (j < n && /[A-Za-z0-9_$\u0080-\uffff]/.test(sql.charAt(j))) j++;
      const word = sql.slice(i, j);
      if (first === "") first = word.toUpperCase();
      identifiers.push(word.toLowerCase());
      i = j;
    } else if (/[0-9]/.test(c)) {
      let j = i + 1;
      while (j < n && /[0-9A-Za-z_.]/.test(sql.charAt(j))) j++;
      i = j;
    } else {
      if (first === "" && !/[\s;(]/.test(c)) first = c;
      i++;
    }
  }
  return { first, identifiers };
}

// --- rendering -------------------------------------------------------------------------------

/** Numbers as SQLite would show them, rounded to 12 significant digits (float noise hidden). */
function formatCell(v: Cell): string {
  if (v === null) return "NULL";
  if (typeof v === "number") {
    if (Number.isInteger(v)) return String(v);
    return String(Number(v.toPrecision(12)));
  }
  if (typeof v === "bigint") return v.toString();
  if (Buffer.isBuffer(v)) return `x'${v.subarray(0, 16).toString("hex")}${v.length > 16 ? "..." : ""}'`;
  const flat = v.replace(/\r?\n/g, "\\n").replace(/\t/g, " ");
  return flat.length > 60 ? `${flat.slice(0, 57)}...` : flat;
}

/** A small text table: header, rule, at most `maxRows` rows, and a count line. */
export function textTable(
  columns: readonly string[],
  rows: readonly Row[],
  maxRows: number,
  total: number | "more",
): string {
  const shown = rows.slice(0, maxRows).map((r) => r.map(formatCell));
  const header = columns.map((c) => formatCell(c));
  const widths = header.map((h, k) => Math.max(h.length, ...shown.map((r) => at(r, k).length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, k) => c.padEnd(at(widths, k)))
      .join(" | ")
      .trimEnd();
  const out = [line(header), widths.map((w) => "-".repeat(Math.max(1, w))).join("-+-"), ...shown.map(line)];
  const count = total === "more" ? `more than ${rows.length}` : String(total);
  if (total === "more" || total > shown.length) out.push(`(showing ${shown.length} of ${count} rows)`);
  else out.push(`(${total} ${total === 1 ? "row" : "rows"})`);
  return out.join("\n");
}

// --- comparison ------------------------------------------------------------------------------

const TOLERANCE = 1e-9;

function typeRank(v: Cell): number {
  if (v === null) return 0;
  if (typeof v === "number" || typeof v === "bigint") return 1;
  if (typeof v === "string") return 2;
  return 3;
}

function compareCells(a: Cell, b: Cell): number {
  const ra = typeRank(a);
  const rb = typeRank(b);
  if (ra !== rb) return ra - rb;
  if (ra === 0) return 0;
  if (ra === 1) {
    const x = Number(a);
    const y = Number(b);
    return x < y ? -1 : x > y ? 1 : 0;
  }
  if (ra === 2) return (a as string) < (b as string) ? -1 : (a as string) > (b as string) ? 1 : 0;
  return Buffer.compare(a as Buffer, b as Buffer);
}

function cellsEqual(a: Cell, b: Cell): boolean {
  const ra = typeRank(a);
  if (ra !== typeRank(b)) return false;
  if (ra === 0) return true;
  if (ra === 1) {
    if (typeof a === "bigint" && typeof b === "bigint") return a === b;
    const x = Number(a);
    const y = Number(b);
    if (x === y) return true;
    if (!Number.isFinite(x) || !Number.isFinite(y)) return false;
    return Math.abs(x - y) <= TOLERANCE * Math.max(1, Math.abs(x), Math.abs(y));
  }
  if (ra === 2) return a === b;
  return Buffer.compare(a as Buffer, b as Buffer) === 0;
}

const compareRows = (a: Row, b: Row): number => {
  for (let k = 0; k < a.length; k++) {
    const c = compareCells(at(a, k), at(b, k));
    if (c !== 0) return c;
  }
  return 0;
};

function rowsEqual(actual: readonly Row[], expected: readonly Row[], ordered: boolean): boolean {
  const a = ordered ? actual : [...actual].sort(compareRows);
  const e = ordered ? expected : [...expected].sort(compareRows);
  for (let i = 0; i < a.length; i++) {
    const x = at(a, i);
    const y = at(e, i);
    for (let k = 0; k < x.length; k++) if (!cellsEqual(at(x, k), at(y, k))) return false;
  }
  return true;
}

function* permutations(n: number): Generator<number[]> {
  const p = Array.from({ length: n }, (_, i) => i);
  yield [...p];
  // Heap's algorithm.
  const c = new Array<number>(n).fill(0);
  let i = 0;
  while (i < n) {
    const ci = at(c, i);
    if (ci < i) {
      const j = i % 2 === 0 ? 0 : ci;
      [p[j], p[i]] = [at(p, i), at(p, j)];
      yield [...p];
      c[i] = ci + 1;
      i = 0;
    } else {
      c[i] = 0;
      i++;
    }
  }
}

/** Most columns whose orders are all tried (5! = 120); wider results must match column for column. */
const MAX_PERMUTED_COLUMNS = 5;

/**
 * Whether a query's result equals the expected table: the same number of rows and columns, the
 * rows equal as a multiset (or as a sequence when `ordered`), numbers within a relative 1e-9.
 * Column names do not matter, nor (up to 5 columns) their order.
 */
export function tablesMatch(actual: readonly Row[], expected: readonly Row[], ordered: boolean): boolean {
  if (actual.length !== expected.length) return false;
  if (expected.length === 0) return true;
  const width = at(expected, 0).length;
  if (
    at(actual, 0).length !== width ||
    actual.some((r) => r.length !== width) ||
    expected.some((r) => r.length !== width)
  )
    return false;
  if (rowsEqual(actual, expected, ordered)) return true;
  if (width < 2 || width > MAX_PERMUTED_COLUMNS) return false;
  let first = true;
  for (const p of permutations(width)) {
    if (first) {
      first = false;
      continue;
    }
    if (
      rowsEqual(
        actual.map((r) => p.map((k) => at(r, k))),
        expected,
        ordered,
      )
    )
      return true;
  }
  return false;
}
