// Values: what the entries of a block mean before typing. Each value remembers where it was
// written (and, through `extends`, which declaration it was inherited from), so that a schema
// problem found later points at the source text that caused it.
import type { Range } from "../contracts/source-range.js";
import type * as ast from "../language/ast.js";

export interface Origin {
  readonly file: string;
  readonly range: Range;
}

export type Value = ScalarValue | NameValue | ListValue | RecordValue | CallValue | ExpressionValue;

export interface ScalarValue {
  readonly kind: "scalar";
  /** `none` is null. */
  readonly value: number | string | boolean | null;
  readonly origin: Origin;
}

/** A bare or dotted name (`leave_one_out`, `code.run_tests`): an enum value or a reference, by schema. */
export interface NameValue {
  readonly kind: "name";
  readonly path: readonly string[];
  readonly origin: Origin;
}

export interface ListValue {
  readonly kind: "list";
  readonly items: readonly Value[];
  readonly origin: Origin;
}

export interface RecordValue {
  readonly kind: "record";
  readonly fields: ReadonlyMap<string, Value>;
  /** Where each key was written (the key's own range), for unknown-field and duplicate-field. */
  readonly keyOrigins: ReadonlyMap<string, Origin>;
  /** `///` docs of the entries, by key. */
  readonly docs: ReadonlyMap<string, string>;
  readonly origin: Origin;
  /** The declaration this record was derived from with `extends`, when it was. */
  readonly extendsFrom?: string;
  /** Its `extends` did not resolve (already reported): missing fields are not reported again. */
  readonly extendsFailed?: boolean;
}

/** A typed constructor from the schema: `constant(1024)`, `potential(...)`, `block(...)`. */
export interface CallValue {
  readonly kind: "call";
  readonly callee: string;
  readonly args: readonly Value[];
  readonly named: ReadonlyMap<string, Value>;
  readonly origin: Origin;
}

/** An expression over run-time signals (`1.0 * outcome.tests_passed`), typed by the reward checker. */
export interface ExpressionValue {
  readonly kind: "expression";
  readonly expression: ast.Expression;
  readonly origin: Origin;
}

export function emptyRecord(origin: Origin): RecordValue {
  return { kind: "record", fields: new Map(), keyOrigins: new Map(), docs: new Map(), origin };
}

/**
 * Deep merge: records merge key by key; anything else in `override` replaces the base, and so
 * does a record written with `extends` (it starts from its own base, not from what it overrides).
 */
export function mergeValues(base: Value, override: Value): Value {
  if (base.kind !== "record" || override.kind !== "record" || override.extendsFrom !== undefined) return override;
  const fields = new Map(base.fields);
  const keyOrigins = new Map(base.keyOrigins);
  const docs = new Map(base.docs);
  for (const [key, value] of override.fields) {
    const previous = fields.get(key);
    fields.set(key, previous ? mergeValues(previous, value) : value);
    keyOrigins.set(key, override.keyOrigins.get(key) ?? value.origin);
    const doc = override.docs.get(key);
    if (doc !== undefined) docs.set(key, doc);
  }
  return {
    kind: "record",
    fields,
    keyOrigins,
    docs,
    origin: override.origin,
    ...((override.extendsFrom ?? base.extendsFrom) ? { extendsFrom: override.extendsFrom ?? base.extendsFrom } : {}),
  };
}

/** One entry of a block: `path` (each segment written at `keyOrigins[i]`) set to `value`. */
export interface Assignment {
  readonly path: readonly string[];
  readonly value: Value;
  readonly keyOrigins: readonly Origin[];
  readonly doc?: string;
}

/**
 * Sets paths inside a record in order (deep-merging records, creating records on the way), as
 * if each assignment copied the record, without copying a record's maps for every entry: a
 * record is copied once, the first time an assignment reaches it, and that copy is then updated
 * in place. What the builder was given (the base, the values) is never changed.
 */
export class RecordBuilder {
  private root: RecordValue;
  /** The records this builder copied or created, whose maps it may still change. */
  private owned = new WeakSet<RecordValue>();

  constructor(base: RecordValue) {
    this.root = base;
  }

  set(a: Assignment): this {
    this.root = this.setIn(this.root, a.path, 0, a);
    return this;
  }

  /** The record; later `set` calls copy again rather than change what was returned. */
  build(): RecordValue {
    this.owned = new WeakSet();
    return this.root;
  }

  private own(record: RecordValue): RecordValue {
    if (this.owned.has(record)) return record;
    const copy: RecordValue = {
      ...record,
      fields: new Map(record.fields),
      keyOrigins: new Map(record.keyOrigins),
      docs: new Map(record.docs),
    };
    this.owned.add(copy);
    return copy;
  }

  private setIn(record: RecordValue, path: readonly string[], at: number, a: Assignment): RecordValue {
    const head = path[at];
    const headOrigin = a.keyOrigins[at];
    if (head === undefined || headOrigin === undefined) return record;
    const target = this.own(record);
    // Owned records are mutable by construction (own() made their maps).
    const fields = target.fields as Map<string, Value>;
    const origins = target.keyOrigins as Map<string, Origin>;
    const existing = fields.get(head);
    if (at === path.length - 1) {
      fields.set(head, existing ? mergeValues(existing, a.value) : a.value);
      origins.set(head, headOrigin);
      if (a.doc !== undefined) (target.docs as Map<string, string>).set(head, a.doc);
    } else {
      const inner = existing?.kind === "record" ? existing : emptyRecord(headOrigin);
      fields.set(head, this.setIn(inner, path, at + 1, a));
      if (!origins.has(head)) origins.set(head, headOrigin);
    }
    return target;
  }
}

export function getPath(value: Value, path: readonly string[]): Value | undefined {
  let current: Value | undefined = value;
  for (const key of path) {
    if (current?.kind !== "record") return undefined;
    current = current.fields.get(key);
  }
  return current;
}

/** A short description of a value's shape for messages: "a number", "a list", "the name x". */
export function describeValue(v: Value): string {
  switch (v.kind) {
    case "scalar":
      if (v.value === null) return "none";
      if (typeof v.value === "number") return `the number ${v.value}`;
      if (typeof v.value === "boolean") return `${v.value}`;
      return `the string ${JSON.stringify(v.value.length > 30 ? `${v.value.slice(0, 30)}…` : v.value)}`;
    case "name":
      return `the name '${v.path.join(".")}'`;
    case "list":
      return "a list";
    case "record":
      return "a block";
    case "call":
      return `${v.callee}(...)`;
    case "expression":
      return "an expression";
  }
}
