// Variants of a sweep, with their seeds together: runs that differ only in `seed` (a sweep over
// `seed`, or one spec run with several seeds) are one variant, reported as the mean and spread
// across its seeds. Every other run is a variant of its own, labelled as before.
import { finiteNumber, type RunInfo } from "./load.js";
import { variantOverTasks } from "./stats.js";
import type { Interval } from "../rl/eval.js";
import type { RunReport, VariantGroup } from "./types.js";
import { at } from "../contracts/checked.js";

/** A variant name without its `seed=N` part (`g4,seed=2` is `g4`; `seed=2` alone is `default`). */
function withoutSeed(variant: string): string {
  const parts = variant.split(",").filter((p) => !/^seed=/.test(p));
  return parts.length > 0 ? parts.join(",") : "default";
}

function groupKey(run: RunInfo): string {
  return JSON.stringify([run.experiment, run.overrides.filter((o) => o.path !== "seed")]);
}

/**
 * The runs' variants in order of first appearance. A group keeps its runs only when their seeds
 * are all known and distinct; otherwise (repeats of one plan) each run is a variant of its own.
 */
export function groupRuns(reports: readonly RunReport[]): VariantGroup[] {
  const byKey = new Map<string, RunReport[]>();
  for (const r of reports) {
    const key = groupKey(r.run);
    byKey.set(key, [...(byKey.get(key) ?? []), r]);
  }
  const buckets: RunReport[][] = [];
  for (const members of byKey.values()) {
    const seeds = members.map((m) => m.run.seed);
    const distinct = seeds.every((s) => s !== null) && new Set(seeds).size === seeds.length;
    if (members.length > 1 && distinct)
      buckets.push([...members].sort((a, b) => (a.run.seed ?? 0) - (b.run.seed ?? 0)));
    else buckets.push(...members.map((m) => [m]));
  }
  buckets.sort((a, b) => reports.indexOf(at(a, 0)) - reports.indexOf(at(b, 0)));
  const labels = groupLabels(buckets);
  return buckets.map((members, index) => ({ label: at(labels, index), index, members }));
}

function groupLabels(buckets: readonly (readonly RunReport[])[]): string[] {
  const unique = (labels: string[]) => new Set(labels).size === labels.length;
  const single = (b: readonly RunReport[]) => b.length === 1;
  const plain = buckets.map((b) => (single(b) ? at(b, 0).label : withoutSeed(at(b, 0).run.variant)));
  if (unique(plain)) return plain;
  const qualified = buckets.map((b) =>
    single(b) ? at(b, 0).label : `${at(b, 0).run.experiment}/${withoutSeed(at(b, 0).run.variant)}`,
  );
  return unique(qualified) ? qualified : qualified.map((l, i) => `${l}#${i + 1}`);
}

/** Mean, sample standard deviation and range of some seeds' values. */
export interface SeedSpread {
  readonly n: number;
  readonly mean: number;
  /** 0 for a single seed. */
  readonly sd: number;
  readonly min: number;
  readonly max: number;
}

export function spread(values: readonly number[]): SeedSpread | null {
  const xs = values.filter((x) => Number.isFinite(x));
  if (xs.length === 0) return null;
  const mean = xs.reduce((s, x) => s + x, 0) / xs.length;
  const sd = xs.length > 1 ? Math.sqrt(xs.reduce((s, x) => s + (x - mean) ** 2, 0) / (xs.length - 1)) : 0;
  return { n: xs.length, mean, sd, min: Math.min(...xs), max: Math.max(...xs) };
}

/** Each member's final pass@k estimate, aggregated over the group's seeds. */
export function finalSpread(group: VariantGroup, k: number): SeedSpread | null {
  return spread(
    group.members.flatMap((m) => {
      const v = finiteNumber(m.final?.pass.get(k)?.estimate);
      return v === undefined ? [] : [v];
    }),
  );
}

/** The group's final pass@k over its tasks, each task its mean over the seeds, with its interval. */
export function finalOverTasks(group: VariantGroup, k: number): Interval | null {
  return variantOverTasks(
    group.members.map((m) => m.run),
    k,
  );
}

/** The group whose label (or one of whose runs' labels or variants) is `name`. */
export function findGroup(groups: readonly VariantGroup[], name: string): VariantGroup | undefined {
  return (
    groups.find((g) => g.label === name) ??
    groups.find((g) => g.members.some((m) => m.label === name || m.run.variant === name))
  );
}
