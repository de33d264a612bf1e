// The front end's entry point for one file: text -> AST + diagnostics. Never throws on input.
import type { CstNode, IToken } from "chevrotain";
import type { LineIndex } from "../contracts/source-range.js";
import { compareDiagnostics, type Diagnostic } from "../diagnostics/diagnostic.js";
import type { Document } from "./ast.js";
import { DocumentAstBuilder } from "./cst-to-ast.js";
import { lex, tokenEndOffset, type LexOptions, type LexResult } from "./lexer.js";
import { describeToken, parser } from "./parser.js";
import * as t from "./tokens.js";
import { at } from "../contracts/checked.js";

export interface ParseResult {
  readonly document: Document;
  readonly diagnostics: readonly Diagnostic[];
  /** Comment tokens in source order, for the formatter (lexed on first use unless `keepComments`). */
  readonly comments: readonly IToken[];
  readonly lines: LineIndex;
  readonly text: string;
}

export function parse(text: string, file: string, options: LexOptions = {}): ParseResult {
  return parseTokens(lex(text, file, options), text, file);
}

/**
 * Parses tokens lexed from `text` (or from a piece of it, with their positions in `text`: see
 * incremental-parse.ts). `lexed.lines` indexes `text`, which AST locations are read from.
 */
export function parseTokens(lexed: Omit<LexResult, "comments">, text: string, file: string): ParseResult {
  // Not `lexed` itself: the result would keep every parser token alive with it.
  const commentTokens = lexed.commentTokens;
  const builder = new DocumentAstBuilder(file, lexed.lines, lexed.docComments, text);
  parser.input = lexed.tokens;
  parser.onBlock = (block) => builder.blockParsed(block);
  let cst: CstNode;
  try {
    cst = parser.document();
  } finally {
    parser.onBlock = undefined;
  }
  const diagnostics: Diagnostic[] = [];
  // One message per position: a mismatch and a no-viable-alternative at the same token are
  // the same mistake; the latter says more.
  const seen = new Set<number>();
  const errors = [...parser.errors].sort((a, b) => rank(a.name) - rank(b.name));
  for (const error of errors) {
    const tok = error.token;
    const atEnd = tok.tokenType.name === "EOF" || Number.isNaN(tok.startOffset);
    let start = atEnd ? lastTokenEnd(lexed.tokens, text.length) : tok.startOffset;
    let end = atEnd ? start : tokenEndOffset(tok);
    let message = error.message;
    let hint = hintFor(error.message);
    // A list or call left open is noticed where it cannot go on, often lines later: point at
    // the bracket that is not closed.
    const opener =
      error.name === "MismatchedTokenException"
        ? unclosedOpener(lexed.tokens, atEnd ? lexed.tokens.length : firstTokenAtOrAfter(lexed.tokens, start), message)
        : undefined;
    if (opener) {
      const where = atEnd ? "the end of the file" : `${describeToken(tok)} on line ${lexed.lines.position(start).line}`;
      message = `'${opener.image}' is not closed: expected '${closerOf[opener.image]}' before ${where}`;
      hint = { hint: `add '${closerOf[opener.image]}' after the last ${opener.image === "[" ? "item" : "argument"}` };
      // What recovery then reports at the token itself is the same mistake.
      seen.add(start);
      start = opener.startOffset;
      end = tokenEndOffset(opener);
    }
    if (seen.has(start)) continue;
    seen.add(start);
    diagnostics.push({
      code: "syntax-error",
      severity: "error",
      message,
      file,
      range: lexed.lines.range(start, end),
      ...hint,
    });
  }
  const built = builder.finish(cst);
  for (const d of lexed.diagnostics)
    if (!(d.code === "invalid-token" && built.keySegments.has(d.range.start.offset))) diagnostics.push(d);
  for (const d of built.diagnostics) {
    if (d.code === "syntax-error" && seen.has(d.range.start.offset)) continue;
    seen.add(d.range.start.offset);
    diagnostics.push(d);
  }
  diagnostics.sort(compareDiagnostics);
  return {
    document: built.document,
    diagnostics: withoutCascades(diagnostics, lexed.tokens, text.length),
    get comments() {
      return commentTokens.all;
    },
    lines: lexed.lines,
    text,
  };
}

/**
 * Drops syntax errors that follow from an earlier error rather than from a new mistake: a
 * second one on the same line, one at the token right after an invalid token, and one at the
 * end of the file after a string or comment that swallowed the rest of it.
 */
function withoutCascades(sorted: Diagnostic[], tokens: readonly IToken[], textLength: number): Diagnostic[] {
  const afterLexError = new Set<number>();
  let swallowedToEnd = false;
  for (const d of sorted) {
    if (d.code === "invalid-token") {
      const next = tokens[firstTokenAtOrAfter(tokens, d.range.end.offset)];
      afterLexError.add(next ? next.startOffset : lastTokenEnd(tokens, textLength));
    }
    if (d.code === "unterminated-comment" || (d.code === "unterminated-string" && d.message.startsWith("multi-line")))
      swallowedToEnd = true;
  }
  const linesWithSyntaxError = new Set<number>();
  return sorted.filter((d) => {
    if (d.code !== "syntax-error") return true;
    const at = d.range.start.offset;
    if (afterLexError.has(at)) return false;
    if (swallowedToEnd && at >= lastTokenEnd(tokens, textLength)) return false;
    if (linesWithSyntaxError.has(d.range.start.line)) return false;
    linesWithSyntaxError.add(d.range.start.line);
    return true;
  });
}

const closerOf: Record<string, string> = { "[": "]", "(": ")" };

/** The `[` or `(` left open before token `index`, when `message` says its closer was expected. */
function unclosedOpener(tokens: readonly IToken[], index: number, message: string): IToken | undefined {
  const wanted = message.startsWith("expected ']'")
    ? t.LBracket
    : message.startsWith("expected ')'")
      ? t.LParen
      : undefined;
  if (!wanted) return undefined;
  const closer = wanted === t.LBracket ? t.RBracket : t.RParen;
  let depth = 0;
  for (let i = Math.min(index, tokens.length) - 1; i >= 0; i--) {
    const type = at(tokens, i).tokenType;
    if (type === closer) depth++;
    else if (type === wanted && depth-- === 0) return tokens[i];
  }
  return undefined;
}

function rank(errorName: string): number {
  return errorName === "MismatchedTokenException" ? 1 : 0;
}

/** Binary search: index of the first token starting at or after `offset` (tokens.length if none). */
function firstTokenAtOrAfter(tokens: readonly IToken[], offset: number): number {
  let lo = 0;
  let hi = tokens.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (at(tokens, mid).startOffset < offset) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function lastTokenEnd(tokens: readonly IToken[], textLength: number): number {
  const last = tokens[tokens.length - 1];
  return last ? tokenEndOffset(last) : textLength;
}

function hintFor(message: string): { hint?: string } {
  if (message.startsWith("expected '}'"))
    return { hint: "a block's entries are 'name: value' fields or nested blocks; check for a missing '}' or ':'" };
  if (message.startsWith("expected ':'")) return { hint: "a field is written 'name: value'" };
  if (message.startsWith("expected a value")) return { hint: "each field needs a value after ':'" };
  return {};
}
