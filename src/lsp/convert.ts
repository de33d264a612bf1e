// The language server's boundary: our 1-based positions and diagnostics <-> LSP's 0-based ones,
// and file paths <-> URIs. Columns are UTF-16 code units on both sides (JavaScript string
// indices), which is LSP's default position encoding.
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import {
  DiagnosticSeverity,
  type Diagnostic as LspDiagnostic,
  type DiagnosticRelatedInformation,
  type Position as LspPosition,
  type Range as LspRange,
} from "vscode-languageserver/node";
import type { LineIndex, Range } from "../contracts/source-range.js";
import { shownText, type Diagnostic, type Severity } from "../diagnostics/diagnostic.js";

/** The `source` of every diagnostic the server publishes. */
const DIAGNOSTIC_SOURCE = "arl";

function toLspPosition(p: { readonly line: number; readonly column: number }): LspPosition {
  return { line: Math.max(0, p.line - 1), character: Math.max(0, p.column - 1) };
}

export function toLspRange(r: Range): LspRange {
  return { start: toLspPosition(r.start), end: toLspPosition(r.end) };
}

/** An offset range of the text `lines` indexes, as an LSP range. */
export function lspRangeOf(lines: LineIndex, start: number, end: number): LspRange {
  return toLspRange(lines.range(start, end));
}

const severities: Record<Severity, DiagnosticSeverity> = {
  error: DiagnosticSeverity.Error,
  warning: DiagnosticSeverity.Warning,
  info: DiagnosticSeverity.Information,
};

/** The data the server attaches to each published diagnostic, for code actions. */
interface DiagnosticData {
  readonly hint?: string;
}

export function toLspDiagnostic(d: Diagnostic, uriOf: (file: string) => string): LspDiagnostic {
  const related: DiagnosticRelatedInformation[] = (d.related ?? []).map((r) => ({
    location: { uri: uriOf(r.file), range: toLspRange(r.range) },
    message: shownText(r.message),
  }));
  // The message is exactly arl check's; the hint (the CLI's `= hint:` line) rides along as
  // related information at the diagnostic's own place, and as data for code actions.
  if (d.hint)
    related.push({
      location: { uri: uriOf(d.file), range: toLspRange(d.range) },
      message: `hint: ${shownText(d.hint)}`,
    });
  return {
    range: toLspRange(d.range),
    severity: severities[d.severity],
    code: d.code,
    source: DIAGNOSTIC_SOURCE,
    message: shownText(d.message),
    ...(related.length > 0 ? { relatedInformation: related } : {}),
    data: (d.hint ? { hint: d.hint } : {}) satisfies DiagnosticData,
  };
}

export function uriToPath(uri: string): string | undefined {
  if (!uri.startsWith("file:")) return undefined;
  try {
    return path.normalize(fileURLToPath(uri));
  } catch {
    return undefined;
  }
}

export function pathToUri(file: string): string {
  return pathToFileURL(file).href;
}

/** Whether two LSP ranges overlap or touch (an empty range touching a diagnostic counts). */
export function rangesTouch(a: LspRange, b: LspRange): boolean {
  return !(before(a.end, b.start) || before(b.end, a.start));
}

function before(a: LspPosition, b: LspPosition): boolean {
  return a.line < b.line || (a.line === b.line && a.character < b.character);
}
