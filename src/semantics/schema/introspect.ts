// Walking a zod schema by path: the field names valid at a place (for "did you mean" and
// editor completion) and a field's documentation (for hover).
import type * as z from "zod";

type AnySchema = z.ZodType;

interface Def {
  type: string;
  innerType?: AnySchema;
  in?: AnySchema;
  out?: AnySchema;
  shape?: Record<string, AnySchema>;
  valueType?: AnySchema;
  element?: AnySchema;
  options?: AnySchema[];
  discriminator?: string;
  getter?: () => AnySchema;
  catchall?: AnySchema;
  items?: AnySchema[];
}

function def(s: AnySchema): Def {
  return (s as unknown as { def: Def }).def;
}

/** Removes wrappers that do not change the shape: default, optional, nullable, pipes, lazy. */
function unwrap(s: AnySchema): AnySchema {
  for (let i = 0; i < 20; i++) {
    const d = def(s);
    if (
      (d.type === "default" ||
        d.type === "optional" ||
        d.type === "nullable" ||
        d.type === "prefault" ||
        d.type === "catch") &&
      d.innerType
    )
      s = d.innerType;
    else if (d.type === "pipe" && d.out && d.in) s = def(d.in).type === "transform" ? d.out : d.in;
    else if (d.type === "lazy" && d.getter) s = d.getter();
    else break;
  }
  return s;
}

/** The object options of a (discriminated) union, narrowed by `data`'s discriminator when given. */
function objectOptions(s: AnySchema, data: unknown): AnySchema[] {
  const d = def(s);
  if (d.type !== "union" || !d.options) return [s];
  const options = d.options.map(unwrap);
  const discriminator = d.discriminator;
  if (discriminator && data && typeof data === "object") {
    let tag = (data as Record<string, unknown>)[discriminator];
    // Before preprocessing, an enum-like tag is still a name: `kind: rooms`.
    if (tag && typeof tag === "object" && Array.isArray((tag as { $name?: unknown }).$name))
      tag = (tag as { $name: string[] }).$name.join(".");
    const match = options.filter((o) => {
      const lit = def(o).shape?.[discriminator];
      const values = lit ? (def(lit) as unknown as { values?: unknown[] }).values : undefined;
      return values?.includes(tag);
    });
    if (match.length > 0) return match;
  }
  return options;
}

/** The schema at `path` below `root`, following `data` to pick union options. */
export function schemaAt(root: AnySchema, path: readonly PropertyKey[], data?: unknown): AnySchema | undefined {
  let s: AnySchema | undefined = unwrap(root);
  let d: unknown = data;
  for (const key of path) {
    if (!s) return undefined;
    const options = objectOptions(s, d);
    let next: AnySchema | undefined;
    for (const o of options) {
      const od = def(o);
      if (od.type === "object") next = od.shape?.[String(key)] ?? od.catchall;
      else if (od.type === "record") next = od.valueType;
      else if (od.type === "array") next = od.element;
      else if (od.type === "tuple") next = od.items?.[Number(key)];
      if (next) break;
    }
    s = next ? unwrap(next) : undefined;
    d = d && typeof d === "object" ? (d as Record<PropertyKey, unknown>)[key as string] : undefined;
  }
  return s;
}

/** Whether the field at `path` may be `none` (its schema, wrappers included, accepts null). */
export function acceptsNone(root: AnySchema, path: readonly PropertyKey[], data?: unknown): boolean {
  if (path.length === 0) return root.safeParse(null).success;
  const parent = schemaAt(root, path.slice(0, -1), data);
  if (!parent) return false;
  const key = String(path[path.length - 1]);
  return objectOptions(parent, valueAtPath(data, path.slice(0, -1))).some((o) => {
    const od = def(o);
    const field =
      od.type === "object" ? (od.shape?.[key] ?? od.catchall) : od.type === "record" ? od.valueType : undefined;
    return field?.safeParse(null).success ?? false;
  });
}

/** Field names of the object schema at `path` (all union options' when not narrowed). */
export function fieldNames(root: AnySchema, path: readonly PropertyKey[], data?: unknown): string[] {
  const s = schemaAt(root, path, data);
  if (!s) return [];
  const names = new Set<string>();
  for (const o of objectOptions(s, valueAtPath(data, path))) {
    const od = def(o);
    if (od.type === "object" && od.shape) for (const k of Object.keys(od.shape)) names.add(k);
  }
  return [...names];
}

/** The documentation of the field at `path`, if it has one. */
export function fieldDoc(root: AnySchema, path: readonly PropertyKey[], data?: unknown): string | undefined {
  if (path.length === 0) return root.description;
  const parent = schemaAt(root, path.slice(0, -1), data);
  if (!parent) return undefined;
  const key = String(path[path.length - 1]);
  for (const o of objectOptions(parent, valueAtPath(data, path.slice(0, -1)))) {
    const field = def(o).shape?.[key];
    if (field?.description) return field.description;
    let inner: AnySchema | undefined = field;
    for (let i = 0; inner && i < 10 && !inner.description; i++) {
      const d = def(inner);
      inner = d.innerType ?? d.in ?? undefined;
    }
    if (inner?.description) return inner.description;
  }
  return undefined;
}

function valueAtPath(data: unknown, path: readonly PropertyKey[]): unknown {
  let d = data;
  for (const k of path) d = d && typeof d === "object" ? (d as Record<PropertyKey, unknown>)[k as string] : undefined;
  return d;
}
