// RFC 8785 JSON Canonicalization Scheme (JCS): the byte form a plan's hash is taken over.
// Keys sorted by UTF-16 code units, numbers in the ECMAScript form, strings escaped as
// JSON.stringify does, no whitespace. Anything that JSON cannot say exactly is rejected.

export class CanonicalizationError extends Error {}

/** The canonical JSON text of `value` (RFC 8785). Throws CanonicalizationError on non-JSON input. */
export function canonicalize(value: unknown): string {
  const out: string[] = [];
  write(value, out, "$");
  return out.join("");
}

/**
 * The canonical text of each field of a plain object (absent optional fields left out), so that
 * objects sharing most fields are canonicalised once; `joinCanonicalFields` puts them together.
 */
export function canonicalFields(record: Readonly<Record<string, unknown>>): Map<string, string> {
  const fields = new Map<string, string>();
  for (const key of Object.keys(record)) {
    if (record[key] === undefined) continue;
    const out: string[] = [];
    write(record[key], out, `$.${key}`);
    fields.set(key, out.join(""));
  }
  return fields;
}

/** The canonical text of the object whose fields' texts are `fields`: equal to `canonicalize` of it. */
export function joinCanonicalFields(fields: ReadonlyMap<string, string>): string {
  return `{${[...fields.keys()]
    .sort()
    .map((key) => `${canonicalString(key, `$.${key}`)}:${fields.get(key)}`)
    .join(",")}}`;
}

/** ECMAScript Number::toString, which JSON.stringify uses; -0 is written as 0 (RFC 8785 §3.2.2.3). */
export function canonicalNumber(n: number, at = "$"): string {
  if (!Number.isFinite(n)) throw new CanonicalizationError(`${at}: ${n} has no JSON form`);
  return Object.is(n, -0) ? "0" : JSON.stringify(n);
}

// A lone surrogate is not Unicode; the RFC requires valid input rather than inventing escapes.
const loneSurrogate = /\p{Surrogate}/u;

function canonicalString(s: string, at = "$"): string {
  if (loneSurrogate.test(s)) throw new CanonicalizationError(`${at}: the string holds a lone surrogate`);
  return JSON.stringify(s);
}

/** Default sort compares UTF-16 code units, which is the order RFC 8785 §3.2.3 asks for. */
export function sortedKeys(o: object): string[] {
  return Object.keys(o).sort();
}

function isPlainObject(v: object): boolean {
  const proto: unknown = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

function write(v: unknown, out: string[], at: string): void {
  if (v === null) {
    out.push("null");
    return;
  }
  switch (typeof v) {
    case "boolean":
      out.push(v ? "true" : "false");
      return;
    case "number":
      out.push(canonicalNumber(v, at));
      return;
    case "string":
      out.push(canonicalString(v, at));
      return;
    case "object":
      break;
    default:
      throw new CanonicalizationError(`${at}: a ${typeof v} has no JSON form`);
  }
  if (Array.isArray(v)) {
    out.push("[");
    v.forEach((item, i) => {
      if (i > 0) out.push(",");
      if (item === undefined) throw new CanonicalizationError(`${at}[${i}]: undefined has no JSON form`);
      write(item, out, `${at}[${i}]`);
    });
    out.push("]");
    return;
  }
  if (!isPlainObject(v)) throw new CanonicalizationError(`${at}: only plain objects have a JSON form`);
  out.push("{");
  let first = true;
  const record = v as Record<string, unknown>;
  for (const key of sortedKeys(record)) {
    const field = record[key];
    if (field === undefined) continue; // as JSON.stringify: an absent optional field
    if (!first) out.push(",");
    first = false;
    out.push(canonicalString(key, `${at}.${key}`), ":");
    write(field, out, `${at}.${key}`);
  }
  out.push("}");
}

/**
 * Pretty-printed JSON for people (plan and lock files): two-space indent, keys in the order
 * given, a final newline. The same values, numbers and strings as the canonical form.
 */
export function prettyJson(value: unknown): string {
  canonicalize(value); // the same validity rules as the hashed form
  return `${JSON.stringify(value, (_k, v: unknown) => (typeof v === "number" && Object.is(v, -0) ? 0 : v), 2)}\n`;
}
