// The front end's entry point for one file: text -> AST + diagnostics. Never throws on input.
import type { IToken } from "chevrotain";
import { compareDiagnostics, type Diagnostic } from "../diagnostics/diagnostic.js";
import type { Document } from "./ast.js";
import { buildAst } from "./cst-to-ast.js";
import { lex, tokenEndOffset } from "./lexer.js";
import { parser } from "./parser.js";
import type { LineIndex } from "./source.js";

export interface ParseResult {
  readonly document: Document;
  readonly diagnostics: readonly Diagnostic[];
  /** Comment tokens in source order, for the formatter and hover. */
  readonly comments: readonly IToken[];
  readonly lines: LineIndex;
  readonly text: string;
}

export function parse(text: string, file: string): ParseResult {
  const lexed = lex(text, file);
  parser.input = lexed.tokens;
  const cst = parser.document();
  const diagnostics: Diagnostic[] = [...lexed.diagnostics];
  // One message per position: a mismatch and a no-viable-alternative at the same token are
  // the same mistake; the latter says more.
  const seen = new Set<number>();
  const errors = [...parser.errors].sort((a, b) => rank(a.name) - rank(b.name));
  for (const error of errors) {
    const tok = error.token;
    const atEnd = tok.tokenType.name === "EOF" || Number.isNaN(tok.startOffset);
    const start = atEnd ? lastTokenEnd(lexed.tokens, text) : tok.startOffset;
    const end = atEnd ? start : tokenEndOffset(tok);
    if (seen.has(start)) continue;
    seen.add(start);
    diagnostics.push({
      code: "syntax-error",
      severity: "error",
      message: error.message,
      file,
      range: lexed.lines.range(start, end),
      ...hintFor(error.message),
    });
  }
  const built = buildAst(cst, file, lexed.lines, lexed.comments, text);
  for (const d of built.diagnostics) {
    if (d.code === "syntax-error" && seen.has(d.range.start.offset)) continue;
    seen.add(d.range.start.offset);
    diagnostics.push(d);
  }
  diagnostics.sort(compareDiagnostics);
  return { document: built.document, diagnostics, comments: lexed.comments, lines: lexed.lines, text };
}

function rank(errorName: string): number {
  return errorName === "MismatchedTokenException" ? 1 : 0;
}

function lastTokenEnd(tokens: readonly IToken[], text: string): number {
  const last = tokens[tokens.length - 1];
  return last ? tokenEndOffset(last) : text.length;
}

function hintFor(message: string): { hint?: string } {
  if (message.startsWith("expected '}'")) return { hint: "a block's entries are 'name: value' fields or nested blocks; check for a missing '}' or ':'" };
  if (message.startsWith("expected ':'")) return { hint: "a field is written 'name: value'" };
  if (message.startsWith("expected a value")) return { hint: "each field needs a value after ':'" };
  return {};
}
