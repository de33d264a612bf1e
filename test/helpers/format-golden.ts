// What the formatter's golden tests (test/language/printer.test.ts, printer-comments.test.ts)
// share: formatting an input that must be a fixed point keeping its syntax tree and comments, and
// writing expected lines.
import { expect } from "vitest";
import { parse } from "../../src/language/parse.js";
import { commentText, format, stripRanges } from "../../src/language/printer.js";

/** Formats `input`, checking idempotence, meaning and comments on the way. */
export function fmt(input: string): string {
  const result = format(input, "t.arl");
  if (!("output" in result))
    throw new Error(`refused: ${result.diagnostics.map((d) => `${d.code}: ${d.message}`).join("; ")}`);
  const { output } = result;
  expect(format(output, "t.arl"), "idempotent").toEqual({ output });
  const before = parse(input, "t.arl");
  const after = parse(output, "t.arl");
  expect(after.diagnostics).toEqual([]);
  expect(stripRanges(after.document)).toEqual(stripRanges(before.document));
  expect(after.comments.map(commentText)).toEqual(before.comments.map(commentText));
  return output;
}

/** Joins lines with "\n" and ends with one: expected outputs read like the files they are. */
export const lines = (...ls: string[]) => `${ls.join("\n")}\n`;
