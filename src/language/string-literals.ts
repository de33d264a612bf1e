// String literals: the dedent of `"""` text and the decoding of escapes, reported where they
// are wrong.
import type { IToken } from "chevrotain";
import type { Diagnostic } from "../diagnostics/diagnostic.js";
import { MAX_REPEATED_REPORTS, tokenEndOffset } from "./lexer.js";
import { defined, last } from "../contracts/checked.js";
import type { Range } from "../contracts/source-range.js";

/** Where the decoder reports an escape it refuses. */
export interface Reporter {
  readonly file: string;
  readonly diagnostics: Diagnostic[];
  rangeOf(start: number, end: number): Range;
}

/** A string's text with its escapes decoded; each unknown escape is reported and kept as written. */
export function unescape(body: string, tok: IToken, to: Reporter): string {
  if (!body.includes("\\")) return body;
  let invalid = 0;
  let firstUnreported = -1;
  const value = body.replace(
    /\\(u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}|u\{[0-9A-Fa-f]{1,6}\}|u[0-9A-Fa-f]{4}|[\s\S]?)/g,
    (whole, esc: string, index: number) => {
      switch (esc[0]) {
        case "n":
          return "\n";
        case "t":
          return "\t";
        case "r":
          return "\r";
        case "0":
          return "\0";
        case '"':
          return '"';
        case "\\":
          return "\\";
        case "u": {
          // A surrogate pair written as two escapes (as in JSON) is one character.
          if (esc.length === 11)
            return String.fromCharCode(Number.parseInt(esc.slice(1, 5), 16), Number.parseInt(esc.slice(7, 11), 16));
          const hex = esc.startsWith("u{") ? esc.slice(2, -1) : esc.slice(1);
          const cp = Number.parseInt(hex, 16);
          // A lone surrogate is not a character: it cannot be written as UTF-8.
          if (cp <= 0x10ffff && !(cp >= 0xd800 && cp <= 0xdfff)) return String.fromCodePoint(cp);
          break;
        }
        default:
          break;
      }
      // The offset of the escape inside the token: exact for "..." strings, approximate after dedent.
      const at = Math.min(tokenEndOffset(tok) - 1, tok.startOffset + image0Offset(tok) + index);
      // A string of thousands of bad escapes (binary pasted in) is one mistake: a few reports and a count.
      if (++invalid > MAX_REPEATED_REPORTS) {
        if (firstUnreported < 0) firstUnreported = at;
        return whole;
      }
      to.diagnostics.push({
        code: "invalid-escape",
        severity: "error",
        ...escapeProblem(whole),
        file: to.file,
        range: to.rangeOf(at, at + whole.length),
      });
      return whole;
    },
  );
  if (firstUnreported >= 0) {
    to.diagnostics.push({
      code: "invalid-escape",
      severity: "error",
      message: `${invalid - MAX_REPEATED_REPORTS} more unknown escape sequences in this string`,
      file: to.file,
      range: to.rangeOf(firstUnreported, firstUnreported + 1),
      hint: 'write a backslash as \\\\; valid escapes are \\n \\t \\r \\0 \\" \\\\ \\uXXXX and \\u{X...}',
    });
  }
  return value;
}

/** The length of a line's leading run of spaces and tabs. */
function indentWidth(line: string): number {
  let n = 0;
  while (line[n] === " " || line[n] === "\t") n++;
  return n;
}

function image0Offset(tok: IToken): number {
  return tok.image.startsWith('"""') ? 3 : 1;
}

/**
 * Multi-line text: a line break right after the opening quotes and the whitespace-only line
 * before the closing quotes are dropped, and the indentation common to all non-blank lines
 * is removed, so a prompt can be indented with the code around it.
 */
export function dedent(raw: string): string {
  const all = raw.replace(/\r\n?/g, "\n").split("\n");
  // The line break after the opening quotes, and the closing quotes' own line when it holds
  // only indentation, are layout, not text.
  if (all.length > 1 && all[0] === "") all.shift();
  if (raw.includes("\n") && all.length > 0 && /^[ \t]*$/.test(last(all))) all.pop();
  const s = all.join("\n");
  const lines = all;
  let indent = Number.POSITIVE_INFINITY;
  for (const line of lines) {
    if (line.trim() === "") continue;
    indent = Math.min(indent, indentWidth(line));
  }
  if (!Number.isFinite(indent) || indent === 0) return s;
  return lines.map((line) => line.slice(Math.min(indent, indentWidth(line)))).join("\n");
}

/** What is wrong with an escape the string decoder refused, and how to write it instead. */
function escapeProblem(escape: string): { message: string; hint: string } {
  const valid = 'valid escapes are \\n \\t \\r \\0 \\" \\\\ \\uXXXX and \\u{X...}';
  const code = /^\\u\{?([0-9A-Fa-f]+)\}?$/.exec(escape);
  if (!code) return { message: `unknown escape sequence '${escape}'`, hint: valid };
  const cp = Number.parseInt(defined(code[1], "the escape's hex digits"), 16);
  if (cp >= 0xd800 && cp <= 0xdfff) {
    return {
      message: `'${escape}' is a lone surrogate, not a character (no UTF-8 text can hold it)`,
      hint: "write the character itself, or a high and low surrogate pair as two escapes (\\uD83D\\uDE00)",
    };
  }
  return { message: `'${escape}' is past U+10FFFF, the last Unicode code point`, hint: valid };
}
