// The built-in scorers of a dataset task that compare text (docs/datasets.md, "Built-in
// scorers"): exact match after normalisation, a number extracted by a pattern or the last number,
// the last \boxed{} of the answer. Pure functions of the answer's text and the ground truth; each
// gives the outcome signals `correct`, `score` (1 or 0) and `answered` (an answer was found).
import type { Signals } from "../../../contracts/env.js";

export type TextScorer = "exact" | "number" | "boxed";

/**
 * Text as compared: Unicode NFKC, lower case, whitespace collapsed, a surrounding `$...$` and
 * `\text{...}`, quotes and trailing full stops removed.
 */
export function normaliseAnswer(text: string): string {
  let s = text.normalize("NFKC").trim();
  for (let previous = ""; previous !== s;) {
    previous = s;
    s = s.replace(/^\$+|\$+$/g, "").trim();
    s = s.replace(/^\\text\{(.*)\}$/s, "$1").trim();
    s = s.replace(/^["'`](.*)["'`]$/s, "$1").trim();
    s = s.replace(/\.+$/, "").trim();
  }
  return s.replace(/\s+/g, " ").toLowerCase();
}

const NUMBER = /-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?|-?\.\d+/g;

/** The number a text spells (`1,234.5`, `-3`, `$12`, `50%` as 50); undefined when it is not one number. */
function parseNumber(text: string): number | undefined {
  const s = normaliseAnswer(text)
    .replace(/^\\?\$/, "")
    .replace(/\\?%$/, "")
    .trim();
  const match = s.match(NUMBER);
  if (!match || match.length !== 1 || match[0] !== s) return undefined;
  const value = Number(s.replace(/,/g, ""));
  return Number.isFinite(value) ? value : undefined;
}

/** The contents of the last `\boxed{...}` (or `\fbox{...}`), braces balanced; undefined when there is none. */
export function lastBoxed(text: string): string | undefined {
  const start = Math.max(text.lastIndexOf("\\boxed"), text.lastIndexOf("\\fbox"));
  if (start < 0) return undefined;
  const open = text.indexOf("{", start);
  // `\boxed 5`: the form without braces takes the next word.
  if (
    open < 0 ||
    text
      .slice(start, open)
      .replace(/^\\(boxed|fbox)/, "")
      .trim() !== ""
  )
    return text.slice(start).match(/^\\(?:boxed|fbox)\s+(\S+)/)?.[1];
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    if (text[i] === "{") depth++;
    else if (text[i] === "}" && --depth === 0) return text.slice(open + 1, i);
  }
  return undefined;
}

/** The last match of `pattern` in `text`: its first group, or the whole match when it has none. */
function lastMatch(text: string, pattern: RegExp): string | undefined {
  let found: string | undefined;
  for (const m of text.matchAll(
    new RegExp(pattern.source, pattern.flags.includes("g") ? pattern.flags : `${pattern.flags}g`),
  ))
    found = m[1] ?? m[0];
  return found;
}

/** Numbers are equal when they agree to a relative 1e-9 (0.1 + 0.2 is 0.3). */
function sameNumber(a: number, b: number): boolean {
  return Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));
}

/** Two answers are the same: as numbers when both are one, else as normalised text. */
function sameAnswer(answer: string, truth: string): boolean {
  const a = parseNumber(answer);
  const b = parseNumber(truth);
  if (a !== undefined && b !== undefined) return sameNumber(a, b);
  return normaliseAnswer(answer) === normaliseAnswer(truth);
}

function signals(answered: boolean, correct: boolean): Signals {
  return { correct, score: correct ? 1 : 0, answered };
}

/** Scores `text` against the row's ground truth with a built-in scorer. */
export function scoreText(scorer: TextScorer, text: string, truth: string | number, pattern: RegExp | null): Signals {
  const gold = String(truth);
  switch (scorer) {
    case "exact": {
      const answer = pattern ? lastMatch(text, pattern) : text;
      return answer === undefined
        ? signals(false, false)
        : signals(true, normaliseAnswer(answer) === normaliseAnswer(gold));
    }
    case "number": {
      const found = pattern ? lastMatch(text, pattern) : lastMatch(text, NUMBER);
      const value = found === undefined ? undefined : parseNumber(found);
      const expected = parseNumber(gold);
      return value === undefined
        ? signals(false, false)
        : signals(true, expected !== undefined && sameNumber(value, expected));
    }
    case "boxed": {
      const boxed = lastBoxed(text);
      return boxed === undefined ? signals(false, false) : signals(true, sameAnswer(boxed, lastBoxed(gold) ?? gold));
    }
  }
}
