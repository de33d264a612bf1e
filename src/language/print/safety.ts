// The formatter's safety net: its output is parsed again and must have the input's syntax tree
// (ranges aside) and comments; otherwise the file is refused rather than given a new meaning.
import type { Diagnostic } from "../../diagnostics/diagnostic.js";
import { hasErrors } from "../../diagnostics/diagnostic.js";
import { parse, type ParseResult } from "../parse.js";
import { commentText } from "./comments.js";

/** Why `output` is not a faithful rewrite of the parsed input, as a diagnostic; or undefined. */
export function checkRoundTrip(parsed: ParseResult, output: string, file: string): Diagnostic | undefined {
  const again = parse(output, file, { keepComments: true });
  if (hasErrors(again.diagnostics)) return internalError(file, "the formatted text does not parse");
  if (!sameAst(parsed.document, again.document))
    return internalError(file, "the formatted text has a different syntax tree");
  const before = parsed.comments.map(commentText);
  const after = again.comments.map(commentText);
  if (before.length !== after.length || before.some((c, i) => c !== after[i])) {
    return internalError(file, "the formatted text lost or changed a comment");
  }
  return undefined;
}

export function internalError(file: string, detail: string): Diagnostic {
  const at = { line: 1, column: 1, offset: 0 };
  return {
    code: "format-internal-error",
    severity: "error",
    message: `arl fmt could not format this file without changing it (${detail}); the file was left as it is`,
    file,
    range: { start: at, end: at },
    hint: "this is a bug in arl fmt, not in your spec; please report it with this file",
  };
}

/** Whether two syntax trees are equal, ignoring `range` fields. Iterative: trees can be deep. */
export function sameAst(a: unknown, b: unknown): boolean {
  const stack: [unknown, unknown][] = [[a, b]];
  for (let pair = stack.pop(); pair !== undefined; pair = stack.pop()) {
    const [x, y] = pair;
    if (x === y) continue;
    if (typeof x !== "object" || typeof y !== "object" || x === null || y === null) {
      if (typeof x === "number" && typeof y === "number" && Number.isNaN(x) && Number.isNaN(y)) continue;
      return false;
    }
    if (Array.isArray(x) !== Array.isArray(y)) return false;
    const kx = Object.keys(x).filter((k) => k !== "range" && (x as Record<string, unknown>)[k] !== undefined);
    const ky = Object.keys(y).filter((k) => k !== "range" && (y as Record<string, unknown>)[k] !== undefined);
    if (kx.length !== ky.length) return false;
    for (const k of kx) {
      if (!Object.prototype.hasOwnProperty.call(y, k)) return false;
      stack.push([(x as Record<string, unknown>)[k], (y as Record<string, unknown>)[k]]);
    }
  }
  return true;
}

/** A copy of a syntax tree without `range` fields (for test diffs). Iterative. */
export function stripRanges<T>(node: T): unknown {
  const root: { value?: unknown } = {};
  const stack: [unknown, Record<string, unknown> | unknown[], string | number][] = [[node, root, "value"]];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    const [src, parent, key] = item;
    let copy: unknown = src;
    if (Array.isArray(src)) {
      const arr: unknown[] = new Array(src.length);
      src.forEach((v, i) => stack.push([v, arr, i]));
      copy = arr;
    } else if (typeof src === "object" && src !== null) {
      const obj: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(src)) if (k !== "range" && v !== undefined) stack.push([v, obj, k]);
      copy = obj;
    }
    (parent as Record<string | number, unknown>)[key] = copy;
  }
  return root.value;
}
