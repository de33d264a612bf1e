// The preflight's verdict in the report: preflight.json (runtime/run/preflight.ts) read back as
// one row per check, for a small table in report.html and report.md. A run directory written
// before the preflight existed, or whose preflight never ran, has none.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";

export interface PreflightRow {
  readonly check: string;
  /** passed, failed or off. */
  readonly status: string;
  readonly summary: string;
  readonly failures: readonly string[];
}

const text = (x: unknown) => (typeof x === "string" ? x : "");

/** preflight.json's checks, or null when the run has none; an unreadable file is a note. */
export function loadPreflight(dir: string, notes: string[]): PreflightRow[] | null {
  const file = path.join(dir, "preflight.json");
  if (!existsSync(file)) return null;
  try {
    const json = JSON.parse(readFileSync(file, "utf8")) as { checks?: unknown };
    if (!Array.isArray(json.checks)) throw new Error("it has no list of checks");
    return json.checks.map((c: Record<string, unknown>) => ({
      check: text(c.check),
      status: text(c.status),
      summary: text(c.summary),
      failures: Array.isArray(c.failures) ? c.failures.map(text) : [],
    }));
  } catch (error) {
    notes.push(`preflight.json is not readable (${(error as Error).message}); its checks are not shown`);
    return null;
  }
}

/** The table's rows: check, status, what it measured (and, when it failed, what failed). */
export function preflightCells(rows: readonly PreflightRow[]): [string, string, string][] {
  return rows.map((r) => [r.check, r.status, [r.summary, ...r.failures].join("; ")]);
}
