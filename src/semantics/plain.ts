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

/**
 * The key of `parent`'s path extended by `segment`, built from `parent`'s key: the same string
 * as pathKey([...path, segment]) without copying the path and stringifying it whole at every
 * value (that was a tenth of checking a large spec).
 */
function childKey(parent: PathKey, segment: string | number): PathKey {
  const part = typeof segment === "number" ? String(segment) : JSON.stringify(segment);
  return parent === "[]" ? `[${part}]` : `${parent.slice(0, -1)},${part}]`;
}

export function toPlain(value: Value): PlainResult {
  const valuesByPath = new Map<PathKey, Value>();
  const convert = (v: Value, key: PathKey): unknown => {
    valuesByPath.set(key, v);
    switch (v.kind) {
      case "scalar":
        return v.value;
      case "name":
        return { $name: v.path } satisfies PlainName;
      case "list":
        return v.items.map((item, i) => convert(item, childKey(key, i)));
      case "record": {
        const out: Record<string, unknown> = {};
        for (const [name, field] of v.fields) out[name] = convert(field, childKey(key, name));
        return out;
      }
      case "call": {
        const named: Record<string, unknown> = {};
        for (const [name, arg] of v.named) named[name] = convert(arg, childKey(key, name));
        return { $call: v.callee, args: v.args.map((a, i) => convert(a, childKey(key, i))), named } satisfies PlainCall;
      }
      case "expression":
        return { $expr: v } satisfies PlainExpression;
    }
  };
  return { plain: convert(value, pathKey([])), valuesByPath };
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
