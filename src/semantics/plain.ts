// Values -> the plain JSON-like form zod checks, with a map from each path back to the value
// written there (for locations and for describing what was found).
import type { PlainCall, PlainExpression, PlainName } from "./schema/common.js";
import type { Value } from "./values.js";

export type PathKey = string;

export function pathKey(path: readonly (string | number)[]): PathKey {
  return JSON.stringify(path);
}

export interface PlainResult {
  readonly plain: unknown;
  readonly valuesByPath: ReadonlyMap<PathKey, Value>;
}

export function toPlain(value: Value): PlainResult {
  const valuesByPath = new Map<PathKey, Value>();
  const convert = (v: Value, path: (string | number)[]): unknown => {
    valuesByPath.set(pathKey(path), v);
    switch (v.kind) {
      case "scalar":
        return v.value;
      case "name":
        return { $name: v.path } satisfies PlainName;
      case "list":
        return v.items.map((item, i) => convert(item, [...path, i]));
      case "record": {
        const out: Record<string, unknown> = {};
        for (const [key, field] of v.fields) out[key] = convert(field, [...path, key]);
        return out;
      }
      case "call": {
        const named: Record<string, unknown> = {};
        for (const [key, arg] of v.named) named[key] = convert(arg, [...path, key]);
        return { $call: v.callee, args: v.args.map((a, i) => convert(a, [...path, i])), named } satisfies PlainCall;
      }
      case "expression":
        return { $expr: v } satisfies PlainExpression;
    }
  };
  return { plain: convert(value, []), valuesByPath };
}

/** The value written at `path`, or at the longest prefix of it that was written (`at`). */
export function valueAt(valuesByPath: ReadonlyMap<PathKey, Value>, path: readonly PropertyKey[]): { value: Value; exact: boolean; at: readonly (string | number)[] } | undefined {
  const p = path.filter((k): k is string | number => typeof k !== "symbol");
  for (let n = p.length; n >= 0; n--) {
    const v = valuesByPath.get(pathKey(p.slice(0, n)));
    if (v) return { value: v, exact: n === p.length, at: p.slice(0, n) };
  }
  return undefined;
}
