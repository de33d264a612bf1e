// Values -> the plain JSON-like form zod checks, and the way back from a path of that form to
// the value written there (for locations and for describing what was found).
import type { PlainCall, PlainExpression, PlainName } from "./schema/common.js";
import type { ScalarValue, Value } from "./values.js";

export interface PlainResult {
  readonly plain: unknown;
  /** With `keyed`: a string equal for two values exactly when they convert to the same plain value (contentKey). */
  readonly contentKey?: string;
}

/**
 * The values written in one value, by their path in its plain form: a record's fields by name,
 * a list's items by index, a call's arguments by index and its named arguments by name. Looked
 * up by walking the value, not kept in a map of every path: a map built for every variant was
 * half of the semantic stage's time on a large spec, mostly its garbage, while a check looks up
 * a handful of paths per variant.
 */
export class WrittenValues {
  constructor(private readonly root: Value) {}

  /** The value written at `path`, if one was (a symbol in the path matches nothing). */
  get(path: readonly PropertyKey[]): Value | undefined {
    let v: Value | undefined = this.root;
    for (const segment of path) {
      if (v === undefined) return undefined;
      v = child(v, segment);
    }
    return v;
  }

  has(path: readonly PropertyKey[]): boolean {
    return this.get(path) !== undefined;
  }
}

/** The value under `segment` of `v`: numbers index lists and call arguments, strings name fields. */
function child(v: Value, segment: PropertyKey): Value | undefined {
  const index = typeof segment === "number" && Number.isInteger(segment) && segment >= 0 ? segment : undefined;
  switch (v.kind) {
    case "list":
      return index === undefined ? undefined : v.items[index];
    case "record":
      return typeof segment === "string" ? v.fields.get(segment) : undefined;
    case "call":
      return index !== undefined ? v.args[index] : typeof segment === "string" ? v.named.get(segment) : undefined;
    default:
      return undefined;
  }
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
  let exotic = false;
  const dollar = (name: string) => {
    if (name.charCodeAt(0) === 36) exotic = true;
  };
  const convert = (v: Value): unknown => {
    switch (v.kind) {
      case "scalar":
        if (typeof v.value === "number" && (Object.is(v.value, -0) || !Number.isFinite(v.value))) exotic = true;
        return v.value;
      case "name":
        return { $name: v.path } satisfies PlainName;
      case "list":
        return v.items.map(convert);
      case "record": {
        const out: Record<string, unknown> = {};
        for (const [name, field] of v.fields) {
          dollar(name);
          out[name] = convert(field);
        }
        return out;
      }
      case "call": {
        const named: Record<string, unknown> = {};
        for (const [name, arg] of v.named) {
          dollar(name);
          named[name] = convert(arg);
        }
        return { $call: v.callee, args: v.args.map(convert), named } satisfies PlainCall;
      }
      case "expression":
        exotic = true;
        return { $expr: v } satisfies PlainExpression;
    }
  };
  const plain = convert(value);
  if (!keyed) return { plain };
  return { plain, contentKey: exotic ? `w${spelledKey(value)}` : `j${JSON.stringify(plain)}` };
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
export function valueAt(written: WrittenValues, path: readonly PropertyKey[]): { value: Value; exact: boolean; at: readonly (string | number)[] } | undefined {
  const p = path.filter((k): k is string | number => typeof k !== "symbol");
  for (let n = p.length; n >= 0; n--) {
    const v = written.get(p.slice(0, n));
    if (v) return { value: v, exact: n === p.length, at: p.slice(0, n) };
  }
  return undefined;
}
