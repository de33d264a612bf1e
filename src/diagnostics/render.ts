// Printing diagnostics for people (text with code frames) and for tools (the JSON shape of
// `arl check --format json`). The language server converts the same values to LSP.
import path from "node:path";
import type { LineIndex } from "../contracts/source-range.js";
import { summarize, type Diagnostic, type DiagnosticSummary } from "./diagnostic.js";

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
      message: d.message,
      range: jsonRange(d.range),
      ...(d.hint ? { hint: d.hint } : {}),
      ...(d.related && d.related.length > 0
        ? { related: d.related.map((r) => ({ file: displayPath(r.file, cwd), range: jsonRange(r.range), message: r.message })) }
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
  const head = `${paint(style, ansi.bold, where)}: ${paint(style, ansi.bold + severityColor[d.severity], `${d.severity}[${d.code}]`)}: ${paint(style, ansi.bold, d.message)}`;
  const out = [head];
  if (lines) out.push(...codeFrame(d.range, lines, style, severityColor[d.severity]));
  if (d.hint) out.push(`${paint(style, ansi.blue, "  = hint:")} ${d.hint}`);
  for (const r of d.related ?? []) {
    out.push(`${paint(style, ansi.blue, "  = note:")} ${r.message} at ${displayPath(r.file, cwd)}:${r.range.start.line}:${r.range.start.column}`);
  }
  return `${out.join("\n")}\n`;
}

const MAX_FRAME_LINES = 4;

function codeFrame(range: Diagnostic["range"], lines: LineIndex, style: TextStyle, color: string): string[] {
  const first = range.start.line;
  const last = Math.min(range.end.line, first + MAX_FRAME_LINES - 1);
  const gutter = String(last).length;
  const bar = paint(style, ansi.blue, `${" ".repeat(gutter + 1)}|`);
  const out = [bar];
  for (let line = first; line <= last; line++) {
    const text = lines.lineText(line).replace(/\t/g, " ");
    out.push(`${paint(style, ansi.blue, `${String(line).padStart(gutter)} |`)} ${text}`);
    const from = line === first ? range.start.column : 1;
    const to = line === range.end.line ? range.end.column : text.length + 1;
    const width = Math.max(1, to - from);
    if (from <= text.length + 1) out.push(`${bar} ${" ".repeat(from - 1)}${paint(style, color, "^".repeat(width))}`);
  }
  if (range.end.line > last) out.push(`${bar} ...`);
  return out;
}

export function renderSummary(summary: DiagnosticSummary, files: number): string {
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;
  return `${plural(summary.errors, "error")}, ${plural(summary.warnings, "warning")}, ${plural(summary.infos, "info")} in ${plural(files, "file")}\n`;
}
