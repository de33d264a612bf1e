// String literals as the formatter writes them: `"..."` re-escaped, `"""` text laid out so that
// the lexer's dedent gives the same value back.
import type * as ast from "../ast.js";
import { concat, hardline, indent, type Doc } from "./doc.js";
import { at } from "../../contracts/checked.js";

const hex4 = (code: number) => `\\u${code.toString(16).toUpperCase().padStart(4, "0")}`;

/**
 * Characters written as escapes in every string: control characters, invisible separators and
 * lone surrogates; and every whitespace character other than space, tab and newline (so that a
 * `"""` string's lines are blank exactly when they are empty, as dedent sees them).
 */
function escapeChar(ch: string, code: number): string | undefined {
  if (code < 0x20 || (code >= 0x7f && code <= 0x9f) || code === 0xfeff || code === 0x2028 || code === 0x2029) {
    if (ch === "\n") return "\\n";
    if (ch === "\t") return "\\t";
    if (ch === "\r") return "\\r";
    if (ch === "\0") return "\\0";
    return hex4(code);
  }
  if (ch !== " " && /\s/.test(ch)) return hex4(code);
  return undefined;
}

/** Escapes a string's characters for `"..."`, or for `"""` text (newlines and tabs stay). */
function escapeText(value: string, triple: boolean): string {
  let out = "";
  for (let i = 0; i < value.length; i++) {
    const ch = value.charAt(i);
    const code = value.charCodeAt(i);
    if (code >= 0xd800 && code <= 0xdbff) {
      const low = value.charCodeAt(i + 1);
      if (low >= 0xdc00 && low <= 0xdfff) {
        out += value.slice(i, i + 2);
        i++;
      } else out += hex4(code);
      continue;
    }
    if (code >= 0xdc00 && code <= 0xdfff) {
      out += hex4(code);
      continue;
    }
    if (ch === "\\") out += "\\\\";
    else if (ch === '"') {
      if (!triple) out += '\\"';
      else {
        // In `"""` text only a run of three quotes would end the string; shorter runs stay literal.
        let run = 1;
        while (value[i + run] === '"') run++;
        out += (run >= 3 ? '\\"' : '"').repeat(run);
        i += run - 1;
      }
    } else if (triple && (ch === "\n" || ch === "\t")) out += ch;
    else out += escapeChar(ch, code) ?? ch;
  }
  return out;
}

export function quoteString(value: string): string {
  return `"${escapeText(value, false)}"`;
}

const spaceEscape = (ch: string) => (ch === "\t" ? "\\t" : "\\u0020");

/** The lines of a `"""` string's text, escaped so that the lexer's dedent gives `value` back. */
function tripleLines(value: string): string[] {
  const lines = escapeText(value, true)
    .split("\n")
    // A line's trailing blanks would be invisible (and stripped by editors): escape the last one.
    .map((l) => (/[ \t]$/.test(l) ? l.slice(0, -1) + spaceEscape(l.charAt(l.length - 1)) : l));
  // Dedent removes the indentation common to all non-blank lines: if every line of the value
  // is itself indented, escape the first blank so that only the printer's indentation goes.
  const nonBlank = lines.filter((l) => l !== "");
  if (nonBlank.length > 0 && nonBlank.every((l) => /^[ \t]/.test(l))) {
    const i = lines.findIndex((l) => l !== "");
    const first = at(lines, i);
    lines[i] = spaceEscape(first.charAt(0)) + first.slice(1);
  }
  return lines;
}

/** A string literal, in the form (`"` or `"""`) it was written in. */
export function printString(s: ast.StringLiteral): Doc {
  if (!s.multiline) return quoteString(s.value);
  if (s.value === "") return '""""""';
  const body = tripleLines(s.value).flatMap((l): Doc[] => [hardline, l]);
  return concat(['"""', indent(concat(body)), hardline, '"""']);
}
