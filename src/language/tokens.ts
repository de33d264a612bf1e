// Token vocabulary of the .arl language. Order matters: Chevrotain tries patterns in the
// order of `allTokens` and keeps the first match, except where `longer_alt` says otherwise.
import { createToken, Lexer, type TokenType } from "chevrotain";

/** Token groups kept out of the parser's stream but returned by the lexer. */
export const COMMENT_GROUP = "comments";

// --- trivia ---------------------------------------------------------------------------------
export const WhiteSpace = createToken({
  name: "WhiteSpace",
  pattern: /[ \t\r\n\f\v\u00a0\ufeff]+/,
  group: Lexer.SKIPPED,
  line_breaks: true,
});
/** `/// text` documents the next declaration or field (shown on hover). */
export const DocComment = createToken({ name: "DocComment", pattern: /\/\/\/[^\n\r]*/, group: COMMENT_GROUP });
export const LineComment = createToken({ name: "LineComment", pattern: /\/\/[^\n\r]*/, group: COMMENT_GROUP });
export const BlockComment = createToken({
  name: "BlockComment",
  pattern: /\/\*[\s\S]*?\*\//,
  group: COMMENT_GROUP,
  line_breaks: true,
});
/** `/*` without its `*\/`: reported as `unterminated-comment`, swallowed to the end of input. */
export const UnterminatedBlockComment = createToken({
  name: "UnterminatedBlockComment",
  pattern: /\/\*[\s\S]*/,
  group: COMMENT_GROUP,
  line_breaks: true,
});

// --- categories (matched by the parser, never produced by the lexer) --------------------------
export const StringToken = createToken({ name: "StringToken", pattern: Lexer.NA, label: "string" });
export const NumberToken = createToken({ name: "NumberToken", pattern: Lexer.NA, label: "number" });
export const ComparisonOp = createToken({ name: "ComparisonOp", pattern: Lexer.NA, label: "comparison operator" });
export const AdditiveOp = createToken({ name: "AdditiveOp", pattern: Lexer.NA, label: "'+' or '-'" });
export const MultiplicativeOp = createToken({ name: "MultiplicativeOp", pattern: Lexer.NA, label: "'*', '/' or '%'" });
/**
 * Every token that cannot start an entry (nor close or separate entries). The parser consumes
 * runs of them as one error, so a mistake inside a block does not derail the rest of the file.
 */
export const Stray = createToken({ name: "Stray", pattern: Lexer.NA, label: "unexpected token" });

// --- literals -------------------------------------------------------------------------------
/** `"""` … `"""`: multi-line text (system prompts, tool descriptions). */
export const TripleString = createToken({
  name: "TripleString",
  categories: [StringToken],
  pattern: /"""[\s\S]*?"""/,
  line_breaks: true,
  label: "string",
});
/** `"""` never closed: swallowed to the end of input, reported as `unterminated-string`. */
export const UnterminatedTripleString = createToken({
  name: "UnterminatedTripleString",
  categories: [StringToken],
  pattern: /"""[\s\S]*/,
  line_breaks: true,
  label: "string",
});
export const StringLiteral = createToken({
  name: "StringLiteral",
  categories: [StringToken],
  pattern: /"(?:[^"\\\n\r]|\\[^\n\r])*"/,
  label: "string",
});
/** A `"` string that reaches the end of its line: reported as `unterminated-string`. */
export const UnterminatedString = createToken({
  name: "UnterminatedString",
  categories: [StringToken],
  pattern: /"(?:[^"\\\n\r]|\\[^\n\r])*\\?/,
  label: "string",
});

/** A digit run that is not a well-formed number (`1_`, `1.5e`, `3abc`): `invalid-token`. */
export const MalformedNumber = createToken({
  name: "MalformedNumber",
  categories: [NumberToken, Stray],
  pattern: /\d[\w.]*/,
  label: "number",
});
export const NumberLiteral = createToken({
  name: "NumberLiteral",
  categories: [NumberToken, Stray],
  pattern: /\d+(?:_\d+)*(?:\.\d+(?:_\d+)*)?(?:[eE][+-]?\d+)?/,
  longer_alt: MalformedNumber,
  label: "number",
});

// --- identifiers and keywords -----------------------------------------------------------------
export const Identifier = createToken({ name: "Identifier", pattern: /[A-Za-z_][A-Za-z0-9_]*/, label: "identifier" });

function keyword(word: string, categories: TokenType[] = [Stray]): TokenType {
  return createToken({
    name: `Kw${word.charAt(0).toUpperCase()}${word.slice(1)}`,
    pattern: new RegExp(word),
    longer_alt: Identifier,
    label: `'${word}'`,
    categories,
  });
}

/** Not stray: a misplaced import is parsed as one and reported as misplaced. */
export const Import = keyword("import", []);
export const As = keyword("as");
export const Extends = keyword("extends");
export const When = keyword("when");
export const And = keyword("and");
export const Or = keyword("or");
export const Not = keyword("not");
export const True = keyword("true");
export const False = keyword("false");
export const None = keyword("none");

/** The reserved words, in the order docs/language.md lists them. */
export const keywordTokens: readonly TokenType[] = [Import, As, Extends, When, And, Or, Not, True, False, None];
export const reservedWords: ReadonlySet<string> = new Set([
  "import",
  "as",
  "extends",
  "when",
  "and",
  "or",
  "not",
  "true",
  "false",
  "none",
]);

// --- punctuation and operators ------------------------------------------------------------------
function punct(name: string, pattern: RegExp, label: string, categories: TokenType[] = [Stray]): TokenType {
  return createToken({ name, pattern, label: `'${label}'`, categories });
}

export const LBrace = punct("LBrace", /\{/, "{");
export const RBrace = punct("RBrace", /\}/, "}", []);
export const LBracket = punct("LBracket", /\[/, "[");
export const RBracket = punct("RBracket", /\]/, "]");
export const LParen = punct("LParen", /\(/, "(");
export const RParen = punct("RParen", /\)/, ")");
export const Comma = punct("Comma", /,/, ",");
export const Colon = punct("Colon", /:/, ":");
export const Dot = punct("Dot", /\./, ".");
export const EqEq = punct("EqEq", /==/, "==", [ComparisonOp, Stray]);
export const NotEq = punct("NotEq", /!=/, "!=", [ComparisonOp, Stray]);
export const LessEq = punct("LessEq", /<=/, "<=", [ComparisonOp, Stray]);
export const GreaterEq = punct("GreaterEq", />=/, ">=", [ComparisonOp, Stray]);
export const Less = punct("Less", /</, "<", [ComparisonOp, Stray]);
export const Greater = punct("Greater", />/, ">", [ComparisonOp, Stray]);
export const Plus = punct("Plus", /\+/, "+", [AdditiveOp, Stray]);
export const Minus = punct("Minus", /-/, "-", [AdditiveOp, Stray]);
export const Star = punct("Star", /\*/, "*", [MultiplicativeOp, Stray]);
export const Slash = punct("Slash", /\//, "/", [MultiplicativeOp, Stray]);
export const Percent = punct("Percent", /%/, "%", [MultiplicativeOp, Stray]);

/** Every token the lexer can produce, in matching order, followed by the categories. */
export const allTokens: readonly TokenType[] = [
  WhiteSpace,
  DocComment,
  LineComment,
  BlockComment,
  UnterminatedBlockComment,
  TripleString,
  UnterminatedTripleString,
  StringLiteral,
  UnterminatedString,
  NumberLiteral,
  MalformedNumber,
  ...keywordTokens,
  Identifier,
  LBrace,
  RBrace,
  LBracket,
  RBracket,
  LParen,
  RParen,
  Comma,
  Colon,
  Dot,
  EqEq,
  NotEq,
  LessEq,
  GreaterEq,
  Less,
  Greater,
  Plus,
  Minus,
  Star,
  Slash,
  Percent,
  StringToken,
  NumberToken,
  ComparisonOp,
  AdditiveOp,
  MultiplicativeOp,
  Stray,
];
