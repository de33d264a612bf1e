// A guard against runaway statements. better-sqlite3 runs SQL synchronously in this process and
// cannot interrupt it, so a cross join of a few tables would freeze every episode for minutes.
// Before running a statement, its query plan (EXPLAIN QUERY PLAN) gives the nested loops: full
// scans under one parent multiply (a join), a correlated subquery multiplies with the loops it
// sits in, other subqueries add. With the tables' row counts that estimates how many row
// combinations the statement visits; above a limit it is refused, as an observation.
import type Database from "better-sqlite3";
import { scanSql } from "./text.js";
import { at } from "../../../contracts/checked.js";

/** Estimated row combinations above which a statement is refused (about a second or two of SQLite). */
export const MAX_COMBINATIONS = 30_000_000;

const NOT_ALIASES = new Set([
  "as",
  "where",
  "join",
  "on",
  "inner",
  "left",
  "right",
  "full",
  "outer",
  "cross",
  "natural",
  "group",
  "order",
  "limit",
  "union",
  "using",
  "having",
  "window",
  "except",
  "intersect",
  "set",
  "values",
  "select",
  "indexed",
  "not",
  "from",
  "and",
  "or",
  "returning",
  "default",
]);

/** Alias (or name) to table, as the query names them (`transactions t`, `accounts AS a`). */
function aliases(sql: string, isTable: (name: string) => boolean): Map<string, string> {
  const ids = scanSql(sql).identifiers;
  const out = new Map<string, string>();
  ids.forEach((id, i) => {
    if (!isTable(id)) return;
    out.set(id, id);
    const next = ids[i + 1];
    const alias = ids[i + 2];
    if (next === "as" && alias !== undefined) out.set(alias, id);
    else if (next !== undefined && !NOT_ALIASES.has(next) && !isTable(next)) out.set(next, id);
  });
  return out;
}

interface PlanRow {
  readonly id: number;
  readonly parent: number;
  readonly detail: string;
}

/**
 * Estimated row combinations the statement visits, and the scans behind the estimate; undefined
 * when the plan cannot be read (the statement then runs unguarded).
 */
export function estimateCombinations(
  db: Database.Database,
  sql: string,
  rows: (table: string) => number | undefined,
  largest: number,
): { combinations: number; scans: string[] } | undefined {
  let plan: PlanRow[];
  try {
    plan = db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as PlanRow[];
  } catch {
    return undefined;
  }
  const names = aliases(sql, (n) => rows(n) !== undefined);
  const children = new Map<number, PlanRow[]>();
  for (const r of plan) {
    const list = children.get(r.parent) ?? [];
    list.push(r);
    children.set(r.parent, list);
  }
  const scans: string[] = [];
  // Cost of the loops under `parent`: full scans multiply; subqueries add (correlated ones run once per outer combination).
  const cost = (parent: number, depth: number): number => {
    if (depth > 64) return 0;
    let loops = 1;
    let independent = 0;
    let correlated = 0;
    for (const r of children.get(parent) ?? []) {
      const scan = /^SCAN (\S+)/.exec(r.detail);
      if (scan && scan[1] !== "CONSTANT") {
        const name = at(scan, 1)
          .replace(/^["`[]|["`\]]$/g, "")
          .toLowerCase();
        const table = names.get(name) ?? name;
        // A scan of a subquery or CTE (not a table): count its rows as the largest table's.
        loops *= Math.max(1, rows(table) ?? largest);
        scans.push(table);
      } else if (r.detail.startsWith("CORRELATED ")) {
        correlated += cost(r.id, depth + 1);
      } else {
        independent += cost(r.id, depth + 1);
      }
    }
    return loops + independent + loops * correlated;
  };
  return { combinations: cost(0, 0), scans };
}
