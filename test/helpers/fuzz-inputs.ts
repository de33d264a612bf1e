// What the front end's property and fuzz tests (test/language/fuzz.test.ts, fuzz-formatter.test.ts)
// share: the shipped specs, the run count (ARL_FUZZ_SCALE), the format check, and fast-check
// arbitraries of random token streams, mutations of real specs and comment trivia.
import fc from "fast-check";
import { expect } from "vitest";
import { parse } from "../../src/language/parse.js";
import { commentText, format, stripRanges } from "../../src/language/printer.js";
import { mutationOf, mutationSpellings } from "./mutations.js";
import { shippedSpecs } from "./specs.js";

export const examples = shippedSpecs();

/** ARL_FUZZ_SCALE=20 runs every property twenty times as often (for a longer hunt). */
export const scale = Number(process.env.ARL_FUZZ_SCALE ?? "1") || 1;

export const runs = (n: number) => ({ numRuns: Math.round(n * scale) });

// --- the format check ----------------------------------------------------------------------------

export const commentsOf = (text: string) => parse(text, "f.arl").comments.map(commentText);

/** For a cleanly parsing input: format is idempotent, keeps the tree and the comments, and parses. */
export function checkFormat(text: string): void {
  const first = format(text, "f.arl");
  if (!("output" in first))
    throw new Error(`format refused: ${JSON.stringify(first.diagnostics.map((d) => d.message))}`);
  const reparsed = parse(first.output, "f.arl");
  expect(reparsed.diagnostics).toEqual([]);
  expect(stripRanges(reparsed.document)).toEqual(stripRanges(parse(text, "f.arl").document));
  expect(commentsOf(first.output)).toEqual(commentsOf(text));
  const second = format(first.output, "f.arl");
  expect(second).toEqual({ output: first.output });
}

// --- (a) random token streams --------------------------------------------------------------------

export const randomToken = fc.oneof(
  { weight: 12, arbitrary: fc.constantFrom(...mutationSpellings) },
  { weight: 2, arbitrary: fc.string({ unit: "grapheme", maxLength: 4 }) },
  { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 4 }) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 6 }).map((b) => Buffer.from(b).toString("latin1")) },
);

export const tokenStream = fc
  .array(fc.tuple(randomToken, fc.constantFrom("", " ", "\n")), { maxLength: 120 })
  .map((ts) => ts.map(([a, b]) => a + b).join(""));

// --- (b) mutations of the shipped specs (test/helpers/mutations.ts) -----------------------------

export const mutation = mutationOf(400);

// --- (c) trivia for structurally valid specs -----------------------------------------------------
// Specs are generated as token lists from the grammar (fuzz-formatter.test.ts), then joined with
// random trivia: blanks, line breaks, and comments of every kind at every token boundary.

export const commentBody = fc
  .string({ unit: "grapheme", maxLength: 12 })
  .map((s) => s.replace(/[\n\r\u2028\u2029]/g, " "));

export const trivia = fc.oneof(
  { weight: 20, arbitrary: fc.constantFrom(" ", "\n", "  ", "\n\n", "\n\n\n", "\t", " \r\n", "\r", "\n \t\n") },
  { weight: 2, arbitrary: commentBody.map((c) => ` // ${c}\n`) },
  { weight: 2, arbitrary: commentBody.map((c) => `\n/// ${c}\n`) },
  { weight: 1, arbitrary: commentBody.map((c) => ` ///${c}\n`) },
  { weight: 2, arbitrary: commentBody.map((c) => ` /* ${c.replace(/\*\//g, "")} */ `) },
  { weight: 1, arbitrary: commentBody.map((c) => `\n/* ${c.replace(/\*\//g, "")}\n   more */\n`) },
);
