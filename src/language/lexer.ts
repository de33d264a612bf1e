// Lexing: text -> tokens for the parser, doc comments for hover, all comment tokens for the
// formatter (on request, or lexed again on first use), and the lexical diagnostics (invalid
// characters, malformed numbers, unterminated strings/comments).
import { createToken, Lexer, type IToken, type TokenType } from "chevrotain";
import { LineIndex } from "../contracts/source-range.js";
import type { Diagnostic } from "../diagnostics/diagnostic.js";
import * as t from "./tokens.js";

/** Brackets nested deeper than this are cut out and reported (keeps parsing linear and stack-safe). */
const MAX_NESTING = 64;

const lexerConfig = { positionTracking: "full", ensureOptimizations: false, recoveryEnabled: true } as const;

/** Keeps every comment as a token (the formatter, the editor's cursor context). */
const commentsLexer = new Lexer([...t.allTokens], lexerConfig);

/**
 * Matches what `commentsLexer` matches, but keeps of the comments only the doc comments (what a
 * check reads) and an unterminated block comment (a diagnostic). A kept token lives as long as
 * the parse: a file of 400k comment lines kept them all, and the garbage collector's copying of
 * them made `check` grow faster than its input.
 */
const codeLexer = new Lexer(
  t.allTokens.map((tok) => (tok === t.LineComment || tok === t.BlockComment ? skippedTwin(tok) : tok)),
  lexerConfig,
);

/** The same pattern in the skipped group: matched and dropped, never a token the parser sees. */
function skippedTwin(tok: TokenType): TokenType {
  return createToken({
    name: `Skipped${tok.name}`,
    pattern: tok.PATTERN,
    group: Lexer.SKIPPED,
    line_breaks: tok.LINE_BREAKS === true,
  });
}

export interface LexOptions {
  /** Keep every comment as a token at once (else `comments` lexes the text again on first use). */
  readonly keepComments?: boolean;
}

export interface LexResult {
  /** Tokens the parser consumes (trivia and comments removed, over-deep nesting cut out). */
  readonly tokens: IToken[];
  /** Comment tokens (line, doc and block comments), in source order; see `LexOptions`. */
  readonly comments: IToken[];
  /** The same comments, as a holder that keeps only the text until they are asked for. */
  readonly commentTokens: CommentTokens;
  /** The doc comments (`///`) alone, in source order: all that the AST reads of comments. */
  readonly docComments: IToken[];
  readonly diagnostics: Diagnostic[];
  readonly lines: LineIndex;
}

export function tokenEndOffset(token: IToken): number {
  return token.startOffset + token.image.length;
}

/** Of one kind of mistake repeated many times in one place, the first this many are reported one by one. */
export const MAX_REPEATED_REPORTS = 10;

export function lex(source: string, file: string, options: LexOptions = {}): LexResult {
  const lines = new LineIndex(source);
  const diagnostics: Diagnostic[] = [];
  const at = (start: number, end: number) => lines.range(start, end);
  const text = withoutLoneSurrogates(source, file, lines, diagnostics);
  const result = (options.keepComments ? commentsLexer : codeLexer).tokenize(text);

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

  const kept = result.groups[t.COMMENT_GROUP] ?? [];
  for (const c of kept) {
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
        message: triple
          ? 'multi-line string is never closed with """'
          : "string is not closed before the end of the line",
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
  const docComments = kept.filter((c) => c.tokenType === t.DocComment);
  const commentTokens = new CommentTokens(text, options.keepComments ? kept : undefined);
  return {
    tokens,
    docComments,
    diagnostics,
    lines,
    commentTokens,
    get comments() {
      return commentTokens.all;
    },
  };
}

/**
 * A text's comment tokens, in source order: given, or lexed from the text on first use. It holds
 * the text alone, so that a parse kept for its comments does not keep its parser tokens too.
 */
export class CommentTokens {
  constructor(
    private readonly text: string,
    private tokens?: IToken[],
  ) {}

  get all(): IToken[] {
    return (this.tokens ??= lex(this.text, "", { keepComments: true }).comments);
  }
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
