// The canonical formatter (`arl fmt`): AST + comments -> text, in one style with no options.
//
// Style rules (the tests in test/language/printer*.test.ts pin them down):
// - 2-space indentation, lines of at most 100 columns where a line break is allowed, LF line ends,
//   no trailing whitespace, one final newline.
// - Imports first, one per line, then one blank line; exactly one blank line between top-level
//   blocks. Elsewhere a run of blank lines between entries, items or comments becomes one blank
//   line; blank lines right after an opening bracket or before a closing one are dropped.
// - Blocks `type name extends ref { ... }` and records `{ ... }`: one entry per line, without
//   commas. Such a block or record stays on one line (`{ a: 1, b: 2 }`, entries separated by
//   ", ") only when it was on one line in the input, holds no comment and fits in 100 columns:
//   the output keeps all three properties, so formatting is idempotent. Empty ones are `{}`.
// - Lists and call arguments: on one line with ", " when they fit, otherwise one item per line,
//   each followed by a comma (so the last one too).
// - `key: value` with one space; keys print as written (bare or quoted); numbers keep their
//   spelling. Strings are re-escaped: `\"`, `\\`, `\n`, `\t`, `\r`, `\0`, and `\uXXXX` for other
//   control characters, invisible separators, non-space blanks and lone surrogates.
// - `"""` strings stay multi-line, their text on its own lines two columns deeper than the line
//   that opens them and the closing quotes at that line's indentation, so that the language's
//   dedent gives back the same value; `""""""` when empty. In their text, runs of three or more
//   quotes, a line's last blank and, when every line is indented, the first line's first blank
//   are escaped (the lexer and dedent would otherwise change the value).
// - Expressions get the fewest parentheses that keep their structure (`(1).x` keeps them: `1.x`
//   is one malformed number). A key ending in a digit-led segment is followed by ` .` (`2x .b`).
// - Every comment is kept: comments between entries, imports, blocks, list items or call
//   arguments stay there (on their own lines, or after the item when they were on its last
//   line); comments before a closing bracket or at the end of the file stay there too. A comment
//   inside an expression or a header is printed just before the token that followed it.
//   Comments force the construct around them onto several lines. `///` comments stay right
//   above what they document; where the input kept a `///` run apart from the next entry with a
//   token (`/// x` then `, y: 1`), a line holding only `,` keeps it apart in the output.
//
// Safety: the output is parsed again and compared with the input (AST without ranges, and the
// comments); if they differ, the input is refused with an internal-error diagnostic rather than
// being rewritten with a different meaning.
//
// The parts, in print/: doc (the layout language and its renderer), strings (escaping),
// comments (where each comment goes), nodes (the node printers), safety (the round-trip check).
import { hasErrors, type Diagnostic } from "../diagnostics/diagnostic.js";
import { parse } from "./parse.js";
import { Printer } from "./print/nodes.js";
import { checkRoundTrip, internalError } from "./print/safety.js";

export { commentText } from "./print/comments.js";
export { LINE_WIDTH } from "./print/doc.js";
export { sameAst, stripRanges } from "./print/safety.js";

export type FormatResult = { readonly output: string } | { readonly diagnostics: Diagnostic[] };

/**
 * Formats one file. Refuses (returns the diagnostics) when the input has syntax errors, and
 * when the formatter could not keep the input's meaning (a bug, reported as such).
 */
export function format(text: string, file: string): FormatResult {
  const parsed = parse(text, file, { keepComments: true });
  if (hasErrors(parsed.diagnostics)) return { diagnostics: [...parsed.diagnostics] };
  let output: string;
  try {
    output = new Printer(text, parsed.comments).print(parsed.document);
  } catch (error) {
    return { diagnostics: [internalError(file, error instanceof Error ? error.message : String(error))] };
  }
  const refused = checkRoundTrip(parsed, output, file);
  return refused ? { diagnostics: [refused] } : { output };
}
