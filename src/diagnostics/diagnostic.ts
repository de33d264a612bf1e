// Diagnostics are data: every stage reports problems through this one shape, and the CLI and
// the language server print the same values.
import type { Range } from "../contracts/source-range.js";
import type { DiagnosticCode } from "./codes/index.js";

export type Severity = "error" | "warning" | "info";

export interface RelatedInformation {
  readonly file: string;
  readonly range: Range;
  readonly message: string;
}

export interface Diagnostic {
  /** Stable kebab-case code, e.g. `syntax-error`, `group-size-one`: one of src/diagnostics/codes/ or a lint rule's. */
  readonly code: DiagnosticCode;
  readonly severity: Severity;
  readonly message: string;
  readonly file: string;
  readonly range: Range;
  readonly related?: readonly RelatedInformation[];
  /** What to do about it, when there is something specific to say. */
  readonly hint?: string;
}

const severityRank: Record<Severity, number> = { error: 0, warning: 1, info: 2 };

/** Orders diagnostics by file, then position, then severity, then code: the order users read. */
export function compareDiagnostics(a: Diagnostic, b: Diagnostic): number {
  if (a.file !== b.file) return a.file < b.file ? -1 : 1;
  return (
    a.range.start.offset - b.range.start.offset ||
    a.range.end.offset - b.range.end.offset ||
    severityRank[a.severity] - severityRank[b.severity] ||
    (a.code < b.code ? -1 : a.code > b.code ? 1 : 0) ||
    (a.message < b.message ? -1 : a.message > b.message ? 1 : 0)
  );
}

export interface DiagnosticSummary {
  readonly errors: number;
  readonly warnings: number;
  readonly infos: number;
}

export function summarize(diagnostics: readonly Diagnostic[]): DiagnosticSummary {
  let errors = 0;
  let warnings = 0;
  let infos = 0;
  for (const d of diagnostics) {
    if (d.severity === "error") errors++;
    else if (d.severity === "warning") warnings++;
    else infos++;
  }
  return { errors, warnings, infos };
}

export function hasErrors(diagnostics: readonly Diagnostic[]): boolean {
  return diagnostics.some((d) => d.severity === "error");
}

/** Longer messages and hints are shown with their middle elided (they can quote a value megabytes long). */
const MAX_SHOWN_MESSAGE_CHARS = 1000;

/** `text` as printed: at most about MAX_SHOWN_MESSAGE_CHARS characters, its middle elided and counted. */
export function shownText(text: string): string {
  if (text.length <= MAX_SHOWN_MESSAGE_CHARS) return text;
  const keep = Math.floor(MAX_SHOWN_MESSAGE_CHARS / 2) - 20;
  return `${text.slice(0, keep)}...(${text.length - 2 * keep} characters elided)...${text.slice(-keep)}`;
}
