// Test helpers: ASTs without locations, for comparing meaning.
import type { Document } from "../../src/language/ast.js";

/** A deep copy of `value` without `range` fields (and the document's file path). */
export function stripRanges(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(stripRanges);
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (k === "range" || k === "file") continue;
      out[k] = stripRanges(v);
    }
    return out;
  }
  return value;
}

export function astWithoutRanges(doc: Document): unknown {
  return stripRanges(doc);
}
