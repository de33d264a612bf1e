// Values -> the plain JSON-like form zod checks, and the way back from a path of that form to
// the value written there (for locations and for describing what was found).
import type { PlainCall, PlainExpression, PlainName } from "./schema/common.js";
import type { ScalarValue, Value } from "./values.js";

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

/** `value` as the plain JSON-like form zod checks. */
export function toPlain(value: Value): unknown {
  const convert = (v: Value): unknown => {
    switch (v.kind) {
      case "scalar":
        return v.value;
      case "name":
        return { $name: v.path } satisfies PlainName;
      case "list":
        return v.items.map(convert);
      case "record": {
        const out: Record<string, unknown> = {};
        for (const [name, field] of v.fields) out[name] = convert(field);
        return out;
      }
      case "call": {
        const named: Record<string, unknown> = {};
        for (const [name, arg] of v.named) named[name] = convert(arg);
        return { $call: v.callee, args: v.args.map(convert), named } satisfies PlainCall;
      }
      case "expression":
        return { $expr: v } satisfies PlainExpression;
    }
  };
  return convert(value);
}

/**
 * Content keys of the blocks, lists and calls already spelled. A value is never changed once
 * built (RecordBuilder copies what it changes), and the variants of an experiment share most of
 * their blocks with it and with each other, so each shared block is spelled once, not once per
 * variant (spelling every variant whole was a fifth of the semantic stage on a large spec).
 */
const spelledByValue = new WeakMap<Value, string>();

/**
 * The content key of `value`: what the check's memos are keyed by (docs/architecture.md,
 * "Memoisation"). It spells each kind of value apart, so two values have the same key only
 * when they convert to the same plain value. An expression is keyed by its syntax tree and the
 * place it is written, which within one load identifies its text.
 */
export function contentKey(v: Value): string {
  switch (v.kind) {
    case "scalar":
      return scalarKey(v.value);
    case "name":
      return `n${JSON.stringify(v.path)}`;
    case "expression":
      return `e${JSON.stringify(v.expression)}@${JSON.stringify(v.origin)}`;
    default: {
      const known = spelledByValue.get(v);
      if (known !== undefined) return known;
      const fields = (m: ReadonlyMap<string, Value>) =>
        [...m].map(([name, field]) => `${JSON.stringify(name)}:${contentKey(field)}`).join(",");
      const key =
        v.kind === "list"
          ? `[${v.items.map(contentKey).join(",")}]`
          : v.kind === "record"
            ? `{${fields(v.fields)}}`
            : `c${JSON.stringify(v.callee)}(${v.args.map(contentKey).join(",")};${fields(v.named)})`;
      spelledByValue.set(v, key);
      return key;
    }
  }
}

/** The value written at `path`, or at the longest prefix of it that was written (`at`). */
export function valueAt(
  written: WrittenValues,
  path: readonly PropertyKey[],
): { value: Value; exact: boolean; at: readonly (string | number)[] } | undefined {
  const p = path.filter((k): k is string | number => typeof k !== "symbol");
  for (let n = p.length; n >= 0; n--) {
    const v = written.get(p.slice(0, n));
    if (v) return { value: v, exact: n === p.length, at: p.slice(0, n) };
  }
  return undefined;
}
