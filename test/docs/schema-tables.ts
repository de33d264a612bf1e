// The field tables of docs/language.md, rendered from the zod schemas of src/semantics/schema/:
// one table per block (and per env kind), one row per field with its dotted path, type, default
// and meaning (the schema's own `doc(...)` text). test/docs/language-reference.test.ts compares
// the doc with this rendering, so the reference cannot drift from what `arl check` accepts.
import type * as z from "zod";
import { algorithmSchema } from "../../src/semantics/schema/algorithm.js";
import { reference, rewardExpression } from "../../src/semantics/schema/common.js";
import { envSchema } from "../../src/semantics/schema/env.js";
import { libraryObject } from "../../src/contracts/libraries/library.js";
import { evalSchema } from "../../src/semantics/schema/eval.js";
import { experimentSchema } from "../../src/semantics/schema/experiment.js";
import { harnessSchema } from "../../src/semantics/schema/harness.js";
import { maskSchema } from "../../src/semantics/schema/mask.js";
import { policySchema } from "../../src/semantics/schema/policy.js";
import { resourcesSchema } from "../../src/semantics/schema/resources.js";
import { trackingSchema } from "../../src/semantics/schema/tracking.js";
import { constraintSchema, rewardSchema } from "../../src/semantics/schema/reward.js";
import { rolloutSchema } from "../../src/semantics/schema/rollout.js";
import { toolParameterSchema, toolSchema } from "../../src/semantics/schema/tool.js";

type Schema = z.ZodType;

/** The parts of a zod 4 definition this walk reads. */
interface Def {
  type: string;
  innerType?: Schema;
  in?: Schema;
  out?: Schema;
  shape?: Record<string, Schema>;
  catchall?: Schema;
  valueType?: Schema;
  element?: Schema;
  items?: Schema[];
  options?: Schema[];
  discriminator?: string;
  getter?: () => Schema;
  entries?: Record<string, string>;
  values?: unknown[];
  defaultValue?: unknown;
  checks?: {
    _zod: { def: { check: string; value?: number; inclusive?: boolean; format?: string; minimum?: number } };
  }[];
}

function def(s: Schema): Def {
  return (s as unknown as { def: Def }).def;
}

export interface FieldRow {
  /** Dotted path inside the block; `NAME` stands for a key the user chooses. */
  readonly path: string;
  readonly type: string;
  readonly default: string;
  readonly meaning: string;
}

export interface BlockTable {
  /** Identifies the table in the doc: `policy`, `env`, `env.rooms`, ... */
  readonly id: string;
  readonly rows: readonly FieldRow[];
}

/** Schemas whose zod form says little (custom checks, recursion): named by what they accept. */
const named = new Map<Schema, string>([
  [libraryObject, "block of the library's own fields (any JSON values)"],
  [reference, "tool reference"],
  [rewardExpression, "expression"],
  [constraintSchema, "block(condition)"],
  [toolParameterSchema, "parameter block"],
]);

/** A field's schema with its wrappers peeled off, and what the wrappers said. */
interface Peeled {
  readonly core: Schema;
  readonly nullable: boolean;
  readonly optional: boolean;
  readonly hasDefault: boolean;
  readonly defaultValue: unknown;
}

function peel(s: Schema): Peeled {
  let nullable = false;
  let optional = false;
  let hasDefault = false;
  let defaultValue: unknown;
  for (let i = 0; i < 20 && !named.has(s); i++) {
    const d = def(s);
    if (d.type === "default" || d.type === "prefault") {
      if (!hasDefault) defaultValue = d.defaultValue;
      hasDefault = true;
      s = d.innerType as Schema;
    } else if (d.type === "nullable") {
      nullable = true;
      s = d.innerType as Schema;
    } else if (d.type === "optional") {
      optional = true;
      s = d.innerType as Schema;
    } else if (d.type === "pipe" && d.in && d.out) s = def(d.in).type === "transform" ? d.out : d.in;
    else if (d.type === "lazy" && d.getter) s = d.getter();
    else break;
  }
  return { core: s, nullable, optional, hasDefault, defaultValue };
}

function numberType(d: Def): string {
  let int = false;
  const bounds: string[] = [];
  let low: number | undefined;
  let high: number | undefined;
  for (const c of d.checks ?? []) {
    const k = c._zod.def;
    if (k.check === "number_format" && (k.format === "safeint" || k.format === "int32")) int = true;
    else if (k.check === "greater_than" && k.value !== undefined) {
      if (k.inclusive) low = k.value;
      else bounds.push(`> ${k.value}`);
    } else if (k.check === "less_than" && k.value !== undefined) {
      if (k.inclusive) high = k.value;
      else bounds.push(`< ${k.value}`);
    }
  }
  if (low !== undefined && high !== undefined) bounds.unshift(`in [${low}, ${high}]`);
  else if (low !== undefined) bounds.unshift(`≥ ${low}`);
  else if (high !== undefined) bounds.unshift(`≤ ${high}`);
  return [int ? "integer" : "number", ...bounds].join(" ");
}

function minLength(d: Def): number | undefined {
  return d.checks?.map((c) => c._zod.def).find((k) => k.check === "min_length")?.minimum;
}

/** A discriminated union of literal-tagged options, written as the spec writes it: `initial`, `refresh(N)`. */
function taggedForms(d: Def): string[] | undefined {
  if (!d.discriminator || !d.options) return undefined;
  const key = d.discriminator;
  const forms: string[] = [];
  for (const option of d.options) {
    const shape = def(peel(option).core).shape;
    const tag = shape?.[key] ? def(shape[key]).values?.[0] : undefined;
    if (typeof tag !== "string" || !shape) return undefined;
    // A shorthand call has one argument besides the tag; anything larger is a block of its own.
    if (Object.keys(shape).length > 2) return undefined;
    forms.push(Object.keys(shape).length > 1 ? `${tag}(N)` : tag);
  }
  return forms;
}

function typeOf(s: Schema): string {
  const name = named.get(s);
  if (name) return name;
  const d = def(s);
  switch (d.type) {
    case "number":
      return numberType(d);
    case "string":
      return minLength(d) ? "non-empty string" : "string";
    case "boolean":
      return "bool";
    case "enum":
      return Object.values(d.entries ?? {}).join(" \\| ");
    case "literal":
      return (d.values ?? []).map(String).join(" \\| ");
    case "array": {
      const item = typeOf(peel(d.element as Schema).core);
      return `${minLength(d) ? "non-empty " : ""}list of ${item.includes("\\|") || item.includes(", or ") ? `(${item})` : item}`;
    }
    case "tuple":
      return `[${(d.items ?? []).map((i) => typeOf(peel(i).core)).join(", ")}]`;
    case "record": {
      const value = peel(d.valueType as Schema).core;
      if (value === peel(envSchema).core) return "NAME → `env` block";
      if (value === toolSchema) return "NAME → `tool` block";
      return `NAME → ${typeOf(value)}`;
    }
    case "object":
      return "block";
    case "union": {
      const forms = taggedForms(d);
      if (forms) return forms.join(" \\| ");
      return (d.options ?? []).map((o) => typeOf(peel(o).core)).join(", or ");
    }
    default:
      throw new Error(`schema-tables: no rendering for a zod '${d.type}' schema`);
  }
}

/** A default as it would be written in a spec. */
function valueText(v: unknown): string {
  if (v === null) return "none";
  if (typeof v === "string") return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(valueText).join(", ")}]`;
  if (typeof v === "object") {
    const o = v as Record<string, unknown>;
    const keys = Object.keys(o);
    // Tagged shorthand values (`{ mode: "token_mean" }`) are written as the bare name.
    if (keys.length === 1 && typeof o[keys[0] as string] === "string") return String(o[keys[0] as string]);
    return keys.length === 0 ? "{}" : "(block)";
  }
  return String(v);
}

/**
 * The default of a whole block: its fields' own defaults, except where the block's default sets
 * a field otherwise (the critic's optimizer starts at lr 1e-5, not the policy optimizer's 1e-6).
 */
function objectDefault(schema: Schema, value: unknown): string {
  const plain = schema.safeParse({});
  const base = (plain.success ? plain.data : {}) as Record<string, unknown>;
  const own = value as Record<string, unknown>;
  const differs = Object.keys(own).filter((k) => JSON.stringify(own[k]) !== JSON.stringify(base[k]));
  if (differs.length === 0) return "(its fields' defaults)";
  return `(its fields' defaults, but ${differs.map((k) => `\`${k}: ${valueText(own[k])}\``).join(", ")})`;
}

function defaultText(p: Peeled): string {
  if (p.hasDefault) {
    const d = def(p.core);
    // Enum defaults are names, written without quotes (`estimator: group`).
    if (typeof p.defaultValue === "string" && (d.type === "enum" || d.type === "union")) return `\`${p.defaultValue}\``;
    if (Array.isArray(p.defaultValue) && d.type === "array" && def(peel(d.element as Schema).core).type === "enum")
      return `\`[${p.defaultValue.join(", ")}]\``;
    if (d.type === "object" && p.defaultValue !== null) return objectDefault(p.core, p.defaultValue);
    return `\`${valueText(p.defaultValue)}\``;
  }
  if (p.optional) return "(unset)";
  return "required";
}

/** Meanings of the fields whose schema carries no `doc(...)` text (keys the user names, tags). */
const undocumented: Readonly<Record<string, string>> = {
  "reward:NAME":
    "A named reward term: a number, a signal (`outcome.success`), an expression over signals, or `potential(...)` for shaping. The terms add up to the episode's reward.",
  "env:kind": "Which environment implementation serves the tasks; the fields below depend on it.",
  "constraints:NAME":
    "A hard block: the harness refuses a tool call while the condition holds, and the refusal is the observation.",
};

function row(table: string, path: string, field: Schema, p: Peeled): FieldRow {
  const type = typeOf(p.core) + (p.nullable ? " \\| none" : "");
  // An entry the user names (a reward term, a constraint) exists only where it is written.
  const entry = path === "NAME" || path.endsWith(".NAME");
  const meaning = (field.description ?? p.core.description ?? undocumented[`${table}:${path}`] ?? "")
    .replace(/\|/g, "\\|")
    .replace(/\s+/g, " ")
    .trim();
  return { path, type, default: entry ? "—" : defaultText(p), meaning };
}

/** Rows of every field of an object schema, nested blocks and records of blocks followed inside. */
function objectRows(table: string, s: Schema, prefix: string, skip: ReadonlySet<string> = new Set()): FieldRow[] {
  const d = def(s);
  const rows: FieldRow[] = [];
  for (const [key, field] of Object.entries(d.shape ?? {})) {
    if (skip.has(key)) continue;
    rows.push(...fieldRows(table, `${prefix}${key}`, field));
  }
  if (d.catchall && def(d.catchall).type !== "never") rows.push(...fieldRows(table, `${prefix}NAME`, d.catchall));
  return rows;
}

function fieldRows(table: string, path: string, field: Schema): FieldRow[] {
  const p = peel(field);
  const rows = [row(table, path, field, p)];
  if (named.has(p.core)) return rows;
  const d = def(p.core);
  if (d.type === "object") rows.push(...objectRows(table, p.core, `${path}.`));
  if (d.type === "record") {
    const value = peel(d.valueType as Schema).core;
    // Records of blocks the experiment names itself (env, tool) have tables of their own.
    const own = value === peel(envSchema).core || value === toolSchema;
    if (def(value).type === "object" && !own) rows.push(...objectRows(table, value, `${path}.NAME.`));
    // A parameter is recursive (items, properties): its fields are listed once, at the top.
    if (value === toolParameterSchema && !path.includes("."))
      rows.push(...objectRows(table, (def(toolParameterSchema).getter as () => Schema)(), `${path}.NAME.`));
  }
  return rows;
}

/** The env union's options, by kind, and the fields all kinds share. */
function envKinds(): { common: string[]; kinds: Map<string, Schema> } {
  const union = def(peel(envSchema).core);
  const kinds = new Map<string, Schema>();
  for (const option of union.options ?? []) {
    const kind = def(def(option).shape?.kind as Schema).values?.[0];
    kinds.set(String(kind), option);
  }
  const shapes = [...kinds.values()].map((o) => def(o).shape ?? {});
  const first = shapes[0] ?? {};
  const common = Object.keys(first).filter((k) => k !== "kind" && shapes.every((s) => s[k] === first[k]));
  return { common, kinds };
}

/** Every table of the language reference, in the order of the doc. */
export function blockTables(): BlockTable[] {
  const tables: BlockTable[] = [
    { id: "experiment", rows: objectRows("experiment", experimentSchema, "").filter((r) => !r.path.includes(".")) },
  ];
  const blocks: [string, Schema][] = [
    ["policy", policySchema],
    ["harness", harnessSchema],
    ["reward", rewardSchema],
    ["mask", maskSchema],
    ["algorithm", algorithmSchema],
    ["rollout", rolloutSchema],
    ["eval", evalSchema],
    ["resources", resourcesSchema],
    ["tracking", trackingSchema],
    ["tool", toolSchema],
  ];
  for (const [id, schema] of blocks) tables.push({ id, rows: objectRows(id, schema, "") });
  const { common, kinds } = envKinds();
  const first = [...kinds.values()][0] as Schema;
  const commonSet = new Set(common);
  tables.push({
    id: "env",
    rows: [
      ...fieldRows("env", "kind", def(first).shape?.kind as Schema).map((r) => ({
        ...r,
        type: [...kinds.keys()].join(" \\| "),
      })),
      ...objectRows(
        "env",
        first,
        "",
        new Set([...Object.keys(def(first).shape ?? {})].filter((k) => !commonSet.has(k))),
      ),
    ],
  });
  for (const [kind, schema] of kinds)
    tables.push({ id: `env.${kind}`, rows: objectRows(`env.${kind}`, schema, "", new Set([...common, "kind"])) });
  tables.push({ id: "constraints", rows: fieldRows("constraints", "NAME", constraintSchema) });
  return tables;
}

/** The markdown of one table, as it stands between its markers in docs/language.md. */
export function renderTable(table: BlockTable): string {
  const lines = ["| Field | Type | Default | Meaning |", "|---|---|---|---|"];
  for (const r of table.rows) lines.push(`| \`${r.path}\` | ${r.type} | ${r.default} | ${r.meaning} |`);
  return lines.join("\n");
}

export const beginMarker = (id: string) =>
  `<!-- fields:${id} (generated from src/semantics/schema; test/docs/language-reference.test.ts) -->`;
export const endMarker = (id: string) => `<!-- /fields:${id} -->`;

/** `doc` with every generated table replaced by its current rendering (tables without markers are left out). */
export function withTables(doc: string, tables: readonly BlockTable[]): string {
  let out = doc;
  for (const t of tables) {
    const begin = beginMarker(t.id);
    const end = endMarker(t.id);
    const a = out.indexOf(begin);
    const b = out.indexOf(end);
    if (a < 0 || b < a) continue;
    out = `${out.slice(0, a + begin.length)}\n${renderTable(t)}\n${out.slice(b)}`;
  }
  return out;
}
