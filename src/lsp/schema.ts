// Questions the editor asks the zod schemas, beyond semantics/schema/introspect.ts: what kind
// of thing a field holds, which values it accepts (enums, literals, booleans, `none`, the
// discriminators of a union), and its default.
import type * as z from "zod";
import { experimentSchema } from "../semantics/schema/experiment.js";
import { fieldDoc, fieldNames, schemaAt } from "../semantics/schema/introspect.js";
import { defined, last } from "../contracts/checked.js";

/** Every path the editor uses is a path below the experiment schema. */
const rootSchema: z.ZodType = experimentSchema;

interface Def {
  type: string;
  innerType?: z.ZodType;
  in?: z.ZodType;
  out?: z.ZodType;
  shape?: Record<string, z.ZodType>;
  catchall?: z.ZodType;
  valueType?: z.ZodType;
  element?: z.ZodType;
  options?: z.ZodType[];
  discriminator?: string;
  getter?: () => z.ZodType;
  entries?: Record<string, string>;
  values?: unknown[];
  defaultValue?: unknown;
}

function def(s: z.ZodType): Def {
  return (s as unknown as { def: Def }).def;
}

/** Strips wrappers (default, optional, nullable, pipes, lazy); says whether `none` is accepted. */
function strip(s: z.ZodType): { schema: z.ZodType; nullable: boolean; defaultValue?: unknown; hasDefault: boolean } {
  let nullable = false;
  let hasDefault = false;
  let defaultValue: unknown;
  for (let i = 0; i < 20; i++) {
    const d = def(s);
    if (d.type === "default" || d.type === "prefault") {
      if (!hasDefault) {
        hasDefault = true;
        defaultValue = d.defaultValue;
      }
      s = defined(d.innerType, "the schema inside a default");
    } else if ((d.type === "optional" || d.type === "catch") && d.innerType) s = d.innerType;
    else if (d.type === "nullable" && d.innerType) {
      nullable = true;
      s = d.innerType;
    } else if (d.type === "pipe" && d.in && d.out) s = def(d.in).type === "transform" ? d.out : d.in;
    else if (d.type === "lazy" && d.getter) s = d.getter();
    else break;
  }
  return { schema: s, nullable, hasDefault, ...(hasDefault ? { defaultValue } : {}) };
}

/** The object options of `s` (one, or each option of a union). */
function objectOptions(s: z.ZodType): z.ZodType[] {
  const inner = strip(s).schema;
  const d = def(inner);
  if (d.type === "union" && d.options) return d.options.map((o) => strip(o).schema);
  return [inner];
}

/** The schema of `key` in each object option of the schema at `parent`. */
function fieldSchemas(parent: readonly string[], key: string, data?: unknown): z.ZodType[] {
  const p = schemaAt(rootSchema, parent, data);
  if (!p) return [];
  const out: z.ZodType[] = [];
  for (const o of objectOptions(p)) {
    const d = def(o);
    if (d.type === "object") {
      const f = d.shape?.[key] ?? d.catchall;
      if (f) out.push(f);
    } else if (d.type === "record" && d.valueType) out.push(d.valueType);
    else if ((d.type === "array" || d.type === "tuple") && d.element) out.push(d.element);
  }
  return out;
}

export type FieldShape = "block" | "map" | "list" | "enum" | "boolean" | "number" | "string" | "value";

function shapeOf(s: z.ZodType): FieldShape {
  const d = def(strip(s).schema);
  switch (d.type) {
    case "object":
      return "block";
    case "record":
      return "map";
    case "array":
    case "tuple":
      return "list";
    case "enum":
    case "literal":
      return "enum";
    case "boolean":
      return "boolean";
    case "number":
    case "int":
      return "number";
    case "string":
      return "string";
    case "union":
      return d.discriminator && !isNameLike(d) ? "block" : "value";
    default:
      return "value";
  }
}

/**
 * A discriminated union written as a name or a call rather than a block: `reduction: token_mean`,
 * `constant(1024)`, `kl.reference: refresh(100)`. Their options hold the tag and at most one value.
 */
function isNameLike(d: Def): boolean {
  return (d.options ?? []).every((o) => {
    const od = def(strip(o).schema);
    return od.type === "object" && Object.keys(od.shape ?? {}).length <= 2;
  });
}

/** What the field at `path` holds, when the schema knows the path. */
export function fieldShape(path: readonly string[], data?: unknown): FieldShape | undefined {
  if (path.length === 0) return "block";
  const schemas = fieldSchemas(path.slice(0, -1), last(path), data);
  const first = schemas[0];
  return first ? shapeOf(first) : undefined;
}

/** Field names valid in the object at `path`. */
export function fieldsAt(path: readonly string[], data?: unknown): string[] {
  return fieldNames(rootSchema, path, data);
}

export function docAt(path: readonly string[], data?: unknown): string | undefined {
  if (path.length === 0) return undefined;
  return fieldDoc(rootSchema, path, data);
}

/** Names (and `true`, `false`, `none`) the field at `path` accepts as its whole value. */
export function valueCandidates(
  path: readonly string[],
  data?: unknown,
  options: { element?: boolean } = {},
): string[] {
  if (path.length === 0) return [];
  const out = new Set<string>();
  let schemas = fieldSchemas(path.slice(0, -1), last(path), data);
  if (options.element) {
    schemas = schemas.flatMap((s) => {
      const d = def(strip(s).schema);
      if (d.type === "array" && d.element) return [d.element];
      if (d.type === "union")
        return (d.options ?? []).flatMap((o) => {
          const option = def(strip(o).schema);
          return option.type === "array" ? [defined(option.element, "an array schema's element")] : [o];
        });
      return [s];
    });
  }
  for (const s of schemas) collect(s, out, 0);
  return [...out];
}

function collect(s: z.ZodType, out: Set<string>, depth: number): void {
  if (depth > 10) return;
  const stripped = strip(s);
  if (stripped.nullable) out.add("none");
  const d = def(stripped.schema);
  switch (d.type) {
    case "enum":
      for (const v of Object.values(d.entries ?? {})) out.add(String(v));
      break;
    case "literal":
      for (const v of d.values ?? [])
        if (typeof v === "string" || typeof v === "boolean" || typeof v === "number") out.add(String(v));
      break;
    case "boolean":
      out.add("true");
      out.add("false");
      break;
    case "null":
      out.add("none");
      break;
    case "union":
      for (const o of d.options ?? []) {
        const od = def(strip(o).schema);
        if (od.type === "object" && d.discriminator) {
          const lit = od.shape?.[d.discriminator];
          if (lit) collect(lit, out, depth + 1);
        } else collect(o, out, depth + 1);
      }
      break;
    default:
      break;
  }
}

/** The default of the field at `path`, as ARL text, when it has a simple one. */
export function defaultText(path: readonly string[], data?: unknown): string | undefined {
  if (path.length === 0) return undefined;
  for (const s of fieldSchemas(path.slice(0, -1), last(path), data)) {
    const stripped = strip(s);
    if (!stripped.hasDefault) continue;
    const value =
      typeof stripped.defaultValue === "function" ? (stripped.defaultValue as () => unknown)() : stripped.defaultValue;
    const shape = shapeOf(s);
    return plainText(value, shape === "enum");
  }
  return undefined;
}

function plainText(v: unknown, bare: boolean): string | undefined {
  if (v === null) return "none";
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  if (typeof v === "string") return bare ? v : JSON.stringify(v);
  if (Array.isArray(v)) {
    const items = v.map((i) => plainText(i, bare));
    return items.every((i) => i !== undefined) ? `[${items.join(", ")}]` : undefined;
  }
  if (typeof v === "object" && v !== null) {
    const mode = (v as { mode?: unknown }).mode;
    if (typeof mode === "string" && Object.keys(v).length === 1) return mode;
    if (Object.keys(v).length === 0) return "{}";
  }
  return undefined;
}

/** A one-line description of what the field accepts, for hover. */
export function describeField(path: readonly string[], data?: unknown): string | undefined {
  const shape = fieldShape(path, data);
  if (!shape) return undefined;
  const values = valueCandidates(path, data);
  switch (shape) {
    case "block":
      return "a block";
    case "map":
      return "named entries";
    case "list":
      return "a list";
    case "enum":
      return `one of ${values.join(", ")}`;
    case "boolean":
      return values.includes("none") ? "true, false or none" : "true or false";
    case "number":
      return values.includes("none") ? "a number or none" : "a number";
    case "string":
      return values.includes("none") ? "a string or none" : "a string";
    default:
      return values.length > 0 ? `one of ${values.join(", ")}` : undefined;
  }
}
