// Printing diagnostics for people (text with code frames) and for tools (the JSON shape of
// `arl check --format json`). The language server converts the same values to LSP.
import path from "node:path";
import type { LineIndex } from "../contracts/source-range.js";
import { shownText, summarize, type Diagnostic, type DiagnosticSummary } from "./diagnostic.js";

type JsonRange = { start: { line: number; column: number }; end: { line: number; column: number } };

/** A related location (e.g. where a duplicate was first declared), paths as for `file`. */
export interface JsonRelated {
  file: string;
  range: JsonRange;
  message: string;
}

/**
 * Exactly the documented shape of `arl check --format json`. `hint` and `related` are present
 * only when the diagnostic has them, so the older fields keep their meaning for every reader.
 */
export interface JsonDiagnostic {
  file: string;
  code: string;
  severity: string;
  message: string;
  range: JsonRange;
  hint?: string;
  related?: JsonRelated[];
}

export interface JsonReport {
  diagnostics: JsonDiagnostic[];
  summary: DiagnosticSummary;
}

function jsonRange(r: Diagnostic["range"]): JsonRange {
  return { start: { line: r.start.line, column: r.start.column }, end: { line: r.end.line, column: r.end.column } };
}

/** Paths are shown relative to the working directory when they are below it. */
export function displayPath(file: string, cwd: string): string {
  const rel = path.relative(cwd, file);
  return rel && !rel.startsWith("..") && !path.isAbsolute(rel) ? rel : file;
}

export function toJsonReport(diagnostics: readonly Diagnostic[], cwd: string): JsonReport {
  return {
    diagnostics: diagnostics.map((d) => ({
      file: displayPath(d.file, cwd),
      code: d.code,
      severity: d.severity,
      message: shownText(d.message),
      range: jsonRange(d.range),
      ...(d.hint ? { hint: shownText(d.hint) } : {}),
      ...(d.related && d.related.length > 0
        ? {
            related: d.related.map((r) => ({
              file: displayPath(r.file, cwd),
              range: jsonRange(r.range),
              message: shownText(r.message),
            })),
          }
        : {}),
    })),
    summary: summarize(diagnostics),
  };
}

export interface TextStyle {
  readonly color: boolean;
}

const ansi = {
  bold: "\x1b[1m",
  red: "\x1b[31m",
  yellow: "\x1b[33m",
  cyan: "\x1b[36m",
  blue: "\x1b[34m",
  reset: "\x1b[0m",
};

function paint(style: TextStyle, codes: string, text: string): string {
  return style.color ? `${codes}${text}${ansi.reset}` : text;
}

const severityColor = { error: ansi.red, warning: ansi.yellow, info: ansi.cyan } as const;

/**
 * `file:line:col: severity[code]: message`, then the source line(s) with carets under the
 * range (rustc / graphql-js style), the hint and related locations.
 */
export function renderText(d: Diagnostic, lines: LineIndex | undefined, cwd: string, style: TextStyle): string {
  const where = `${displayPath(d.file, cwd)}:${d.range.start.line}:${d.range.start.column}`;
  const head = `${paint(style, ansi.bold, where)}: ${paint(style, ansi.bold + severityColor[d.severity], `${d.severity}[${d.code}]`)}: ${paint(style, ansi.bold, shownText(d.message))}`;
  const out = [head];
  if (lines) out.push(...codeFrame(d.range, lines, style, severityColor[d.severity]));
  if (d.hint) out.push(`${paint(style, ansi.blue, "  = hint:")} ${shownText(d.hint)}`);
  for (const r of d.related ?? []) {
    out.push(
      `${paint(style, ansi.blue, "  = note:")} ${shownText(r.message)} at ${displayPath(r.file, cwd)}:${r.range.start.line}:${r.range.start.column}`,
    );
  }
  return `${out.join("\n")}\n`;
}

const MAX_FRAME_LINES = 4;
/** A longer source line is shown as a window of this many columns around the range's start. */
const MAX_FRAME_COLUMNS = 160;
/** Columns shown before the range's start when a line is windowed. */
const FRAME_LEAD_COLUMNS = 40;

function codeFrame(range: Diagnostic["range"], lines: LineIndex, style: TextStyle, color: string): string[] {
  const first = range.start.line;
  const last = Math.min(range.end.line, first + MAX_FRAME_LINES - 1);
  const gutter = String(last).length;
  const bar = paint(style, ansi.blue, `${" ".repeat(gutter + 1)}|`);
  const out = [bar];
  for (let line = first; line <= last; line++) {
    const full = lines.lineText(line);
    const from = line === first ? range.start.column : 1;
    const to = line === range.end.line ? range.end.column : full.length + 1;
    // A line of megabytes (a huge literal) is shown as a window that starts shortly before the range.
    const start =
      full.length > MAX_FRAME_COLUMNS
        ? Math.min(Math.max(0, from - 1 - FRAME_LEAD_COLUMNS), full.length - MAX_FRAME_COLUMNS)
        : 0;
    const end = Math.min(full.length, start + MAX_FRAME_COLUMNS);
    const lead = start > 0 ? "..." : "";
    const text = `${lead}${full.slice(start, end).replace(/\t/g, " ")}${end < full.length ? "..." : ""}`;
    out.push(`${paint(style, ansi.blue, `${String(line).padStart(gutter)} |`)} ${text}`);
    const shownFrom = from - start + lead.length;
    const width = Math.max(1, Math.min(to, end + 1) - Math.max(from, start + 1));
    if (from <= full.length + 1)
      out.push(`${bar} ${" ".repeat(shownFrom - 1)}${paint(style, color, "^".repeat(width))}`);
  }
  if (range.end.line > last) out.push(`${bar} ...`);
  return out;
}

export function renderSummary(summary: DiagnosticSummary, files: number): string {
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;
  return `${plural(summary.errors, "error")}, ${plural(summary.warnings, "warning")}, ${plural(summary.infos, "info")} in ${plural(files, "file")}\n`;
}
