// The front end's codes: the lexer, the parser, imports, the formatter (src/language/) and the
// language server's own.
// Each code with the paragraph `arl explain CODE` prints.
import type { CodeExplanation } from "./explanation.js";

export const frontEndCodes = {
  "syntax-error": {
    stage: "parser",
    title: "The text does not follow the grammar",
    explanation: `The parser expected something else at this point (a value after ':', a closing bracket, a
block name). It recovers and keeps going, so every independent syntax error of a file is reported
in one run; fix the first one of a cluster first, later ones may follow from it. The normative
grammar is grammar/arl.ebnf.`,
  },
  "invalid-token": {
    stage: "lexer",
    title: "Characters that are not an ARL token",
    explanation: `The lexer found characters that start no token, or a malformed one (a number such as 1_ or
1e, a stray symbol). Numbers look like 8, 1_000, 0.2 or 5e-7, with underscores only between
digits; names are letters, digits and '_', not starting with a digit.`,
  },
  "unterminated-string": {
    stage: "lexer",
    title: "A string without its closing quote",
    explanation: `A "..." string must close on the same line; a """...""" string may span lines and closes
with three quotes. Everything after the opening quote up to the end of the line (or file) was
taken as the string.`,
  },
  "unterminated-comment": {
    stage: "lexer",
    title: "A /* comment without its closing */",
    explanation: `A block comment runs to the matching '*/'. Without one, the rest of the file is a comment.`,
  },
  "invalid-escape": {
    stage: "lexer",
    title: "An unknown escape sequence in a string",
    explanation: `Strings accept \\n \\t \\r \\0 \\" \\\\ \\uXXXX and \\u{X...} (a Unicode code point, not a surrogate).
Write a literal backslash as \\\\.`,
  },
  "nesting-too-deep": {
    stage: "lexer",
    title: "Brackets nested too deeply",
    explanation: `Blocks, lists and parentheses may nest 64 levels deep. Deeper nesting is refused rather than
risking the parser's stack; flatten the value or move parts into their own declarations.`,
  },
  "expression-too-deep": {
    stage: "parser",
    title: "An expression or dotted name nested too deeply",
    explanation: `A field's value may be at most 256 levels deep: each operator of a chain (a + b + c is two),
each prefix (- or !), each .name, call, list, record or block is one level, and so is each dot of a
field's name. Deeper values are refused where the limit is passed, so that no later stage (types,
lowering, printing, the editor) can run out of stack. Split a long sum or condition into named
terms or declarations.`,
  },
  "format-internal-error": {
    stage: "formatter",
    title: "arl fmt could not format a file without changing its meaning",
    explanation: `arl fmt parses what it prints and refuses to write a result whose syntax tree or comments
differ from the input's. The file is left exactly as it was; this is a bug in the formatter, not
in the spec: please report it with the file.`,
  },
  "import-not-found": {
    stage: "imports",
    title: "An import names a file that does not exist",
    explanation: `Relative imports ("./lib", "../common/envs") are resolved from the importing file, with or
without the .arl extension; "std/..." imports come from the standard library (stdlib/std/).`,
  },
  "invalid-import-path": {
    stage: "imports",
    title: "An import path of the wrong form",
    explanation: `Import paths start with "std/" (the standard library), "./" or "../" (a file relative to the
importing one). Bare names and absolute paths are refused so that a spec means the same on every
machine.`,
  },
  "import-outside-root": {
    stage: "imports",
    title: "An import leaves the entry file's folder",
    explanation: `A spec may import files below its own folder and the standard library, nothing else: a plan's
hash covers every imported file, and a checkout must contain all of them. Move the shared file
into the experiment's folder or use "std/...".`,
  },
  "import-cycle": {
    stage: "imports",
    title: "Files that import each other",
    explanation: `An import cycle (a -> b -> a) has no order in which the files can be read. Move what both files
need into a third file that both import.`,
  },
  "duplicate-import": {
    stage: "imports",
    title: "Two imports under the same name",
    explanation: `Each import binds a name (the file's name, or the one after 'as'); two imports cannot bind the
same one. Give one of them another name with 'as'.`,
  },
  "lsp-internal-error": {
    stage: "language server",
    title: "The language server failed while checking the file",
    explanation: `Checking this file raised inside the language server; the message gives the failure. The
server keeps serving the other files. This is a bug in arl: please report it with the file that
causes it. 'arl check FILE' on the command line shows whether the checker itself fails.`,
  },
} as const satisfies Record<string, CodeExplanation>;
