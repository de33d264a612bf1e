// Field-by-field comparison of two plans, for `arl diff`: what one variant changes relative to
// another. `hash` and `provenance` are left out: the first follows from the rest, the second
// records where the plan came from, not what it means.

export interface FieldChange {
  /** Dotted path; array items by index (`tools.2.name`); keys that are not names as ["key"]. */
  readonly path: string;
  /** Compact JSON, or undefined when the field is absent on that side. */
  readonly before?: string;
  readonly after?: string;
}

const ignored = new Set(["hash", "provenance"]);

export function diffPlans(a: unknown, b: unknown): FieldChange[] {
  const out: FieldChange[] = [];
  walk(strip(a), strip(b), "", out);
  return out;
}

export function formatChange(c: FieldChange): string {
  return `${c.path || "(plan)"}: ${c.before ?? "(absent)"} -> ${c.after ?? "(absent)"}`;
}

function strip(plan: unknown): unknown {
  if (plan === null || typeof plan !== "object" || Array.isArray(plan)) return plan;
  return Object.fromEntries(Object.entries(plan).filter(([k]) => !ignored.has(k)));
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/** Arrays of scalars (k values, a command line) read best whole; arrays of objects item by item. */
function isLeaf(v: unknown): boolean {
  if (Array.isArray(v)) return v.every((x) => x === null || typeof x !== "object");
  return !isRecord(v);
}

function join(base: string, key: string | number): string {
  const part =
    typeof key === "number" || /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? String(key) : `[${JSON.stringify(key)}]`;
  return base === "" ? part : part.startsWith("[") ? `${base}${part}` : `${base}.${part}`;
}

function walk(a: unknown, b: unknown, at: string, out: FieldChange[]): void {
  if (a === undefined && b === undefined) return;
  if (a === undefined || b === undefined || isLeaf(a) || isLeaf(b) || Array.isArray(a) !== Array.isArray(b)) {
    const before = a === undefined ? undefined : JSON.stringify(a);
    const after = b === undefined ? undefined : JSON.stringify(b);
    if (before !== after)
      out.push({ path: at, ...(before !== undefined ? { before } : {}), ...(after !== undefined ? { after } : {}) });
    return;
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.max(a.length, b.length); i++) walk(a[i], b[i], join(at, i), out);
    return;
  }
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  const keys = [...new Set([...Object.keys(ra), ...Object.keys(rb)])].sort();
  for (const k of keys) walk(ra[k], rb[k], join(at, k), out);
}
