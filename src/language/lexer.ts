// Lexing: text -> tokens for the parser, comment tokens for the formatter and hover, and the
// lexical diagnostics (invalid characters, malformed numbers, unterminated strings/comments).
import { Lexer, type IToken } from "chevrotain";
import { LineIndex } from "../contracts/source-range.js";
import type { Diagnostic } from "../diagnostics/diagnostic.js";
import * as t from "./tokens.js";

/** Brackets nested deeper than this are cut out and reported (keeps parsing linear and stack-safe). */
const MAX_NESTING = 64;

const arlLexer = new Lexer([...t.allTokens], {
  positionTracking: "full",
  ensureOptimizations: false,
  recoveryEnabled: true,
});

export interface LexResult {
  /** Tokens the parser consumes (trivia and comments removed, over-deep nesting cut out). */
  readonly tokens: IToken[];
  /** Comment tokens (line, doc and block comments), in source order. */
  readonly comments: IToken[];
  readonly diagnostics: Diagnostic[];
  readonly lines: LineIndex;
}

export function tokenEndOffset(token: IToken): number {
  return token.startOffset + token.image.length;
}

/** Of one kind of mistake repeated many times in one place, the first this many are reported one by one. */
export const MAX_REPEATED_REPORTS = 10;

export function lex(source: string, file: string): LexResult {
  const lines = new LineIndex(source);
  const diagnostics: Diagnostic[] = [];
  const at = (start: number, end: number) => lines.range(start, end);
  const text = withoutLoneSurrogates(source, file, lines, diagnostics);
  const result = arlLexer.tokenize(text);

  for (const error of result.errors) {
    const bad = text.slice(error.offset, error.offset + error.length);
    const shown = bad.length > 20 ? `${bad.slice(0, 20)}…` : bad;
    diagnostics.push({
      code: "invalid-token",
      severity: "error",
      message: `unexpected character${bad.length > 1 ? "s" : ""} ${JSON.stringify(shown)}`,
      file,
      range: at(error.offset, error.offset + error.length),
      hint: "ARL accepts identifiers, numbers, strings, comments and the punctuation { } [ ] ( ) , : . and operators",
    });
  }

  const comments = result.groups[t.COMMENT_GROUP] ?? [];
  for (const c of comments) {
    if (c.tokenType === t.UnterminatedBlockComment) {
      diagnostics.push({
        code: "unterminated-comment",
        severity: "error",
        message: "block comment is never closed",
        file,
        range: at(c.startOffset, c.startOffset + 2),
        hint: "close it with */",
      });
    }
  }

  for (const token of result.tokens) {
    if (token.tokenType === t.UnterminatedString || token.tokenType === t.UnterminatedTripleString) {
      const triple = token.tokenType === t.UnterminatedTripleString;
      diagnostics.push({
        code: "unterminated-string",
        severity: "error",
        message: triple ? 'multi-line string is never closed with """' : "string is not closed before the end of the line",
        file,
        range: at(token.startOffset, triple ? token.startOffset + 3 : tokenEndOffset(token)),
        hint: triple ? 'add """ where the text ends' : 'add the closing " or use """ for text over several lines',
      });
    } else if (token.tokenType === t.MalformedNumber) {
      diagnostics.push({
        code: "invalid-token",
        severity: "error",
        message: `malformed number ${JSON.stringify(token.image)}`,
        file,
        range: at(token.startOffset, tokenEndOffset(token)),
        hint: "numbers look like 8, 1_000, 0.2 or 5e-7 (underscores only between digits)",
      });
    }
  }

  const tokens = cutDeepNesting(result.tokens, file, lines, diagnostics);
  return { tokens, comments, diagnostics, lines };
}

const REPLACEMENT = "\ufffd";

/**
 * A lone surrogate is not a character (no UTF-8 encoding has it; a plan holding one cannot be
 * hashed): each is reported where it is and replaced by U+FFFD, one code unit for one, so that
 * offsets stay valid and no later stage ever sees it.
 */
function withoutLoneSurrogates(text: string, file: string, lines: LineIndex, diagnostics: Diagnostic[]): string {
  if (!/[\ud800-\udfff]/.test(text)) return text;
  let out = "";
  let copied = 0;
  let found = 0;
  let firstUnreported = -1;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0xd800 || code > 0xdfff) continue;
    if (code <= 0xdbff) {
      const low = text.charCodeAt(i + 1);
      if (low >= 0xdc00 && low <= 0xdfff) {
        i++;
        continue;
      }
    }
    found++;
    if (found <= MAX_REPEATED_REPORTS) {
      diagnostics.push({
        code: "invalid-token",
        severity: "error",
        message: `lone surrogate U+${code.toString(16).toUpperCase()} is not a character`,
        file,
        range: lines.range(i, i + 1),
        hint: "the text was not valid Unicode here: retype or delete this character",
      });
    } else if (firstUnreported < 0) firstUnreported = i;
    out += text.slice(copied, i) + REPLACEMENT;
    copied = i + 1;
  }
  if (firstUnreported >= 0) {
    diagnostics.push({
      code: "invalid-token",
      severity: "error",
      message: `${found - MAX_REPEATED_REPORTS} more lone surrogates from here on`,
      file,
      range: lines.range(firstUnreported, firstUnreported + 1),
      hint: "the text was not valid Unicode: was the file decoded with the wrong encoding?",
    });
  }
  return out + text.slice(copied);
}

const opening = new Set([t.LBrace, t.LBracket, t.LParen]);
const closing = new Set([t.RBrace, t.RBracket, t.RParen]);

/** Removes tokens nested deeper than MAX_NESTING, reporting the first bracket of each cut. */
function cutDeepNesting(tokens: IToken[], file: string, lines: LineIndex, diagnostics: Diagnostic[]): IToken[] {
  let depth = 0;
  let maxDepth = 0;
  for (const token of tokens) {
    if (opening.has(token.tokenType)) maxDepth = Math.max(maxDepth, ++depth);
    else if (closing.has(token.tokenType) && depth > 0) depth--;
  }
  if (maxDepth <= MAX_NESTING) return tokens;

  const kept: IToken[] = [];
  depth = 0;
  for (const token of tokens) {
    const opens = opening.has(token.tokenType);
    const closes = closing.has(token.tokenType);
    if (opens) {
      depth++;
      if (depth === MAX_NESTING + 1) {
        diagnostics.push({
          code: "nesting-too-deep",
          severity: "error",
          message: `brackets are nested more than ${MAX_NESTING} levels deep`,
          file,
          range: lines.range(token.startOffset, tokenEndOffset(token)),
          hint: "flatten the structure; the nested part was skipped",
        });
      }
    }
    if (depth <= MAX_NESTING) kept.push(token);
    if (closes && depth > 0) depth--;
  }
  return kept;
}
