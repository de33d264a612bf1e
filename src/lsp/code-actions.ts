// Quick fixes: apply a diagnostic's "did you mean 'x'?", and silence a lint finding with an
// `allow { code: "reason" }` entry in its experiment (added to the experiment's allow block, or
// a new one).
import { CodeActionKind, type CodeAction, type Range as LspRange, type TextEdit } from "vscode-languageserver/node";
import type { LineIndex } from "../contracts/source-range.js";
import type { Diagnostic } from "../diagnostics/diagnostic.js";
import type * as ast from "../language/ast.js";
import { lintRule } from "../lint/index.js";
import { lspRangeOf, rangesTouch, toLspDiagnostic, toLspRange } from "./convert.js";

const ALLOW_REASON_PLACEHOLDER = "TODO: say why this rule does not apply here";

const didYouMean = /^did you mean '([^']+)'\?$/;

export interface ActionInput {
  readonly uri: string;
  readonly text: string;
  readonly lines: LineIndex;
  readonly document: ast.Document;
  readonly range: LspRange;
  /** The diagnostics located in this document. */
  readonly diagnostics: readonly Diagnostic[];
  readonly uriOf: (file: string) => string;
}

export function codeActions(input: ActionInput): CodeAction[] {
  const out: CodeAction[] = [];
  const allowed = new Set<string>();
  for (const d of input.diagnostics) {
    if (!rangesTouch(toLspRange(d.range), input.range)) continue;
    const lsp = toLspDiagnostic(d, input.uriOf);
    const suggestion = d.hint ? didYouMean.exec(d.hint)?.[1] : undefined;
    if (suggestion !== undefined) {
      const edit = replacement(input.text, d, suggestion);
      if (edit) {
        out.push({
          title: `Change to '${suggestion}'`,
          kind: CodeActionKind.QuickFix,
          isPreferred: true,
          diagnostics: [lsp],
          edit: {
            changes: { [input.uri]: [{ range: lspRangeOf(input.lines, edit.start, edit.end), newText: edit.text }] },
          },
        });
      }
    }
    if (lintRule(d.code) && !allowed.has(d.code)) {
      const experiment = input.document.blocks.find(
        (b) =>
          b.type.name === "experiment" &&
          b.range.start.offset <= d.range.start.offset &&
          d.range.start.offset <= b.range.end.offset,
      );
      const edit = experiment ? allowEdit(input.text, input.lines, experiment, d.code) : undefined;
      if (experiment && edit) {
        allowed.add(d.code);
        out.push({
          title: `Allow '${d.code}' in experiment '${experiment.name?.name ?? "?"}' (give the reason)`,
          kind: CodeActionKind.QuickFix,
          diagnostics: [lsp],
          edit: { changes: { [input.uri]: [edit] } },
        });
      }
    }
  }
  return out;
}

/** What to replace for a suggestion: the whole range, or its last segment when only that was suggested. */
function replacement(
  text: string,
  d: Diagnostic,
  suggestion: string,
): { start: number; end: number; text: string } | undefined {
  if (suggestion.endsWith(".")) return undefined;
  const start = d.range.start.offset;
  const end = d.range.end.offset;
  const written = text.slice(start, end);
  if (written === suggestion || written.length === 0) return undefined;
  if (written.startsWith('"')) return { start, end, text: JSON.stringify(suggestion) };
  if (!/^[A-Za-z0-9_.\-\s]+$/.test(written)) return undefined;
  if (written.includes(".") && !suggestion.includes(".")) {
    const dot = written.lastIndexOf(".");
    return { start: start + dot + 1, end, text: suggestion };
  }
  return { start, end, text: suggestion };
}

function allowEntry(code: string): string {
  return `${code}: ${JSON.stringify(ALLOW_REASON_PLACEHOLDER)}`;
}

function indentOf(lines: LineIndex, line: number): string {
  return /^[ \t]*/.exec(lines.lineText(line))?.[0] ?? "";
}

/** The edit that adds `code: "reason"` to the experiment's allow block, or adds the block. */
function allowEdit(text: string, lines: LineIndex, experiment: ast.Block, code: string): TextEdit | undefined {
  const existing = experiment.entries.find(
    (e): e is ast.Block | ast.Field =>
      (e.kind === "Block" && e.type.name === "allow" && !e.name) ||
      (e.kind === "Field" && e.path.length === 1 && e.path[0]?.name === "allow" && e.value.kind === "Record"),
  );
  if (existing) {
    const entries = existing.kind === "Block" ? existing.entries : (existing.value as ast.RecordExpression).entries;
    const container = existing.kind === "Block" ? existing.range : existing.value.range;
    const close = container.end.offset - 1;
    if (text[close] !== "}") return undefined;
    const last = entries[entries.length - 1];
    if (!last) {
      const open = text.lastIndexOf("{", close);
      return { range: lspRangeOf(lines, open + 1, close), newText: ` ${allowEntry(code)} ` };
    }
    if (container.start.line === container.end.line) {
      return {
        range: lspRangeOf(lines, last.range.end.offset, last.range.end.offset),
        newText: `, ${allowEntry(code)}`,
      };
    }
    const indent = indentOf(lines, (entries[0] ?? last).range.start.line);
    return {
      range: lspRangeOf(lines, last.range.end.offset, last.range.end.offset),
      newText: `\n${indent}${allowEntry(code)}`,
    };
  }
  const close = experiment.range.end.offset - 1;
  if (text[close] !== "}") return undefined;
  const closeLine = lines.position(close).line;
  const onOwnLine = lines.lineText(closeLine).trim() === "}";
  if (!onOwnLine || experiment.range.start.line === closeLine) {
    return { range: lspRangeOf(lines, close, close), newText: ` allow { ${allowEntry(code)} } ` };
  }
  const first = experiment.entries[0];
  const indent = first ? indentOf(lines, first.range.start.line) : `${indentOf(lines, experiment.range.start.line)}  `;
  const at = lines.offsetAt(closeLine, 1);
  const previous = lines.lineText(closeLine - 1).trim();
  const blank = previous === "" || previous.endsWith("{") ? "" : "\n";
  return { range: lspRangeOf(lines, at, at), newText: `${blank}${indent}allow { ${allowEntry(code)} }\n` };
}
