// Sweeps and ablations: an experiment's `sweep` (cartesian product over its fields) and
// `ablation` (named override sets) become variants, each the experiment with its overrides.
import type { Diagnostic } from "../diagnostics/diagnostic.js";
import { describeValue, RecordBuilder, type Origin, type RecordValue, type Value } from "./values.js";
import { at, last } from "../contracts/checked.js";
import type { CompilerCode } from "../diagnostics/codes/index.js";

export interface Override {
  readonly path: readonly string[];
  readonly value: Value;
}

export interface Variant {
  /** Stable name: `default`, `no_task_norm`, `max_turns=8`, or both joined by a comma. */
  readonly name: string;
  readonly overrides: readonly Override[];
  /** The experiment with the overrides applied and `sweep`/`ablation` removed. */
  readonly value: RecordValue;
}

interface Leaf {
  readonly path: string[];
  readonly value: Value;
  readonly keyOrigin: Origin;
}

/** Leaves of a record of overrides: `rollout { cross_policy: none }` gives `rollout.cross_policy`. */
function leaves(record: RecordValue, prefix: string[] = [], out: Leaf[] = []): Leaf[] {
  for (const [key, value] of record.fields) {
    const path = [...prefix, key];
    // Into the same array: spreading a nested block's leaves as arguments overflows the stack for a big one.
    if (value.kind === "record" && value.fields.size > 0 && value.extendsFrom === undefined) leaves(value, path, out);
    else out.push({ path, value, keyOrigin: record.keyOrigins.get(key) ?? value.origin });
  }
  return out;
}

/** Small and large magnitudes in exponent form (1e-6, 5e-7), the rest plainly (0.2, 128). */
function formatNumber(n: number): string {
  const magnitude = Math.abs(n);
  return n !== 0 && (magnitude < 1e-3 || magnitude >= 1e6) ? n.toExponential().replace("e+", "e") : String(n);
}

/** How a swept value appears in a variant name. */
function formatVariantValue(v: Value): string {
  switch (v.kind) {
    case "scalar":
      if (typeof v.value === "number") return formatNumber(v.value);
      return v.value === null ? "none" : String(v.value);
    case "name":
      return v.path.join(".");
    case "call":
      return `${v.callee}(${v.args.map(formatVariantValue).join(",")})`;
    default:
      return describeValue(v).replace(/\s+/g, "_");
  }
}

export function expandVariants(experiment: RecordValue, diagnostics: Diagnostic[]): Variant[] {
  const sweep = experiment.fields.get("sweep");
  const ablation = experiment.fields.get("ablation");
  const base: RecordValue = {
    ...experiment,
    fields: new Map([...experiment.fields].filter(([k]) => k !== "sweep" && k !== "ablation")),
  };
  const error = (origin: Origin, code: CompilerCode, message: string, hint?: string) =>
    diagnostics.push({
      code,
      severity: "error",
      message,
      file: origin.file,
      range: origin.range,
      ...(hint ? { hint } : {}),
    });

  // Sweep axes: each leaf must be a non-empty list of values.
  const axes: { leaf: Leaf; items: readonly Value[] }[] = [];
  if (sweep) {
    if (sweep.kind !== "record")
      error(
        sweep.origin,
        "type-mismatch",
        `'sweep' expects a block of 'path: [values]' entries, found ${describeValue(sweep)}`,
      );
    else {
      for (const leaf of leaves(sweep)) {
        if (leaf.value.kind !== "list")
          error(
            leaf.value.origin,
            "type-mismatch",
            `sweep '${leaf.path.join(".")}' expects a list of values, found ${describeValue(leaf.value)}`,
            "write e.g. harness.max_turns: [6, 8, 12]",
          );
        else if (leaf.value.items.length === 0)
          error(leaf.value.origin, "invalid-value", `sweep '${leaf.path.join(".")}' has no values`);
        else axes.push({ leaf, items: leaf.value.items });
      }
    }
  }
  const lastSegments = axes.map((a) => last(a.leaf.path));
  const axisLabel = (i: number) =>
    lastSegments.filter((s) => s === lastSegments[i]).length > 1
      ? at(axes, i).leaf.path.join(".")
      : at(lastSegments, i);

  let combos: { name: string; overrides: Leaf[] }[] = [{ name: "", overrides: [] }];
  axes.forEach((axis, i) => {
    const next: typeof combos = [];
    for (const combo of combos) {
      for (const item of axis.items) {
        const part = `${axisLabel(i)}=${formatVariantValue(item)}`;
        next.push({
          name: combo.name ? `${combo.name},${part}` : part,
          overrides: [...combo.overrides, { path: axis.leaf.path, value: item, keyOrigin: axis.leaf.keyOrigin }],
        });
      }
    }
    combos = next;
  });

  // Ablations: named override sets.
  let arms: { name: string; overrides: Leaf[] }[] = [{ name: "", overrides: [] }];
  if (ablation) {
    if (ablation.kind !== "record")
      error(
        ablation.origin,
        "type-mismatch",
        `'ablation' expects named blocks of overrides, found ${describeValue(ablation)}`,
      );
    else if (ablation.fields.size > 0) {
      arms = [];
      for (const [name, arm] of ablation.fields) {
        if (arm.kind !== "record") {
          error(
            arm.origin,
            "type-mismatch",
            `ablation '${name}' expects a block of overrides, found ${describeValue(arm)}`,
            `write '${name} { path: value }' or '${name} {}'`,
          );
          continue;
        }
        arms.push({ name, overrides: leaves(arm) });
      }
    }
  }

  const variants: Variant[] = [];
  for (const arm of arms) {
    for (const combo of combos) {
      const name = [arm.name, combo.name].filter(Boolean).join(",") || "default";
      const all = [...arm.overrides, ...combo.overrides];
      const value = new RecordBuilder(base);
      for (const o of all) value.set({ path: o.path, value: o.value, keyOrigins: o.path.map(() => o.keyOrigin) });
      variants.push({ name, overrides: all.map((o) => ({ path: o.path, value: o.value })), value: value.build() });
    }
  }
  return variants;
}
