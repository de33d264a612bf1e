// Lowering a variant's overrides: what it changes relative to its experiment, as typed values.
import { readFileSync } from "node:fs";
import type { VariantModel } from "../semantics/analyze.js";
import { isPlainCall, isPlainExpression, isPlainName } from "../semantics/schema/common.js";
import type { ExperimentConfig } from "../semantics/schema/experiment.js";
import type { Origin, Value } from "../semantics/values.js";
import { lowerExpr } from "./lower-expr.js";
import { sortedEntries } from "./lower-context.js";
import type { JsonValue, Plan } from "./schema.js";

/** What the variant sets, as typed values (`constant(1024)` is `{mode: "constant", constant: 1024}`), sorted by path. */
export function lowerOverrides(variant: VariantModel, config: ExperimentConfig): Plan["overrides"] {
  const byPath = new Map<string, JsonValue>();
  for (const o of variant.overrides) byPath.set(o.path.join("."), overrideValue(o.path, o.value, variant, config));
  return sortedEntries(byPath).map(([p, value]) => ({ path: p, value }));
}

function overrideValue(
  at: readonly string[],
  written: Value,
  variant: VariantModel,
  config: ExperimentConfig,
): JsonValue {
  const [head, name] = at;
  const term = head === "reward" && at.length === 2 && name !== undefined ? variant.rewardTerms.get(name) : undefined;
  if (term) {
    return { kind: term.kind, expr: lowerExpr(term.expr) };
  }
  const constraint =
    head === "constraints" && at.length === 2 && name !== undefined ? variant.constraints.get(name) : undefined;
  if (constraint) {
    return { action: "block", condition: lowerExpr(constraint) };
  }
  let typed: unknown = config;
  for (const key of at)
    typed = typed !== null && typeof typed === "object" ? (typed as Record<string, unknown>)[key] : undefined;
  return typed !== undefined && isPlainJson(typed)
    ? (JSON.parse(JSON.stringify(typed)) as JsonValue)
    : writtenValue(written);
}

/** True when a typed value holds no spec-level markers (names, calls, unresolved expressions). */
function isPlainJson(v: unknown): boolean {
  if (v === null || typeof v !== "object") return typeof v !== "function" && v !== undefined;
  if (isPlainName(v) || isPlainCall(v) || isPlainExpression(v)) return false;
  return Object.values(v).every(isPlainJson);
}

/** A value as written, for the few places the typed config keeps references (e.g. harness.tools). */
function writtenValue(v: Value): JsonValue {
  switch (v.kind) {
    case "scalar":
      return v.value;
    case "name":
      return v.path.join(".");
    case "list":
      return v.items.map(writtenValue);
    case "record": {
      const out: Record<string, JsonValue> = {};
      for (const [k, field] of sortedEntries(v.fields)) out[k] = writtenValue(field);
      return out;
    }
    case "call": {
      const named: Record<string, JsonValue> = {};
      for (const [k, arg] of sortedEntries(v.named)) named[k] = writtenValue(arg);
      return { call: v.callee, args: v.args.map(writtenValue), named };
    }
    case "expression":
      return { expression: v.origin.file === "" ? "" : sourceText(v.origin) };
  }
}

function sourceText(origin: Origin): string {
  try {
    return readFileSync(origin.file, "utf8")
      .slice(origin.range.start.offset, origin.range.end.offset)
      .replace(/\s+/g, " ");
  } catch {
    return "";
  }
}
