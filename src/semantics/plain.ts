// Values -> the plain JSON-like form zod checks, with a map from each path back to the value
// written there (for locations and for describing what was found).
import type { PlainCall, PlainExpression, PlainName } from "./schema/common.js";
import type { ScalarValue, Value } from "./values.js";

export type PathKey = string;

export function pathKey(path: readonly (string | number)[]): PathKey {
  return JSON.stringify(path);
}

export interface PlainResult {
  readonly plain: unknown;
  readonly valuesByPath: ReadonlyMap<PathKey, Value>;
  /** With `keyed`: a string equal for two values exactly when they convert to the same plain value (contentKey). */
  readonly contentKey?: string;
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

/** A scalar as its key: String() tells every number apart (-0 too, which JSON writes as 0); strings quoted. */
function scalarKey(x: ScalarValue["value"]): string {
  if (typeof x === "number") return Object.is(x, -0) ? "-0" : String(x);
  return JSON.stringify(x);
}

/**
 * `value` as the plain JSON-like form zod checks; with `keyed`, also its content key: what the
 * check's memos are keyed by (docs/architecture.md, "Memoisation"). Usually the plain value's JSON
 * (native, so cheap); when JSON could not tell two values apart (an expression, -0 or a
 * non-finite number, a field named like the plain form's `$name`) a walk that spells each kind
 * apart (spelledKey).
 */
export function toPlain(value: Value, keyed = false): PlainResult {
  const valuesByPath = new Map<PathKey, Value>();
  let exotic = false;
  const dollar = (name: string) => {
    if (name.charCodeAt(0) === 36) exotic = true;
  };
  const convert = (v: Value, key: PathKey): unknown => {
    valuesByPath.set(key, v);
    switch (v.kind) {
      case "scalar":
        if (typeof v.value === "number" && (Object.is(v.value, -0) || !Number.isFinite(v.value))) exotic = true;
        return v.value;
      case "name":
        return { $name: v.path } satisfies PlainName;
      case "list":
        return v.items.map((item, i) => convert(item, childKey(key, i)));
      case "record": {
        const out: Record<string, unknown> = {};
        for (const [name, field] of v.fields) {
          dollar(name);
          out[name] = convert(field, childKey(key, name));
        }
        return out;
      }
      case "call": {
        const named: Record<string, unknown> = {};
        for (const [name, arg] of v.named) {
          dollar(name);
          named[name] = convert(arg, childKey(key, name));
        }
        return { $call: v.callee, args: v.args.map((a, i) => convert(a, childKey(key, i))), named } satisfies PlainCall;
      }
      case "expression":
        exotic = true;
        return { $expr: v } satisfies PlainExpression;
    }
  };
  const plain = convert(value, pathKey([]));
  if (!keyed) return { plain, valuesByPath };
  return { plain, valuesByPath, contentKey: exotic ? `w${spelledKey(value)}` : `j${JSON.stringify(plain)}` };
}

/**
 * A key that spells each kind of value apart. An expression is keyed by its syntax tree and the
 * place it is written, which within one load identifies its text.
 */
function spelledKey(v: Value): string {
  const fields = (m: ReadonlyMap<string, Value>) => [...m].map(([name, field]) => `${JSON.stringify(name)}:${spelledKey(field)}`).join(",");
  switch (v.kind) {
    case "scalar":
      return scalarKey(v.value);
    case "name":
      return `n${JSON.stringify(v.path)}`;
    case "list":
      return `[${v.items.map(spelledKey).join(",")}]`;
    case "record":
      return `{${fields(v.fields)}}`;
    case "call":
      return `c${JSON.stringify(v.callee)}(${v.args.map(spelledKey).join(",")};${fields(v.named)})`;
    case "expression":
      return `e${JSON.stringify(v.expression)}@${JSON.stringify(v.origin)}`;
  }
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
