// What lowering one program shares across its variants, and the small helpers of its parts.
import path from "node:path";
import { STDLIB_ROOT } from "../contracts/paths.js";
import type { Program } from "../language/imports.js";
import { BlockIndex } from "../lint/locate.js";
import { sha256Hex } from "./hash.js";
import type { PlanProvenance } from "./schema.js";
import { arlVersion, stdlibVersion } from "./version.js";

/** Per-program facts every variant's plan shares. */
export interface LoweringContext {
  readonly entry: string;
  readonly entryDir: string;
  readonly provenance: PlanProvenance;
  /** Read and hash data files (the default); false only checks that they exist (`arl check` without a lock). */
  readonly hashData?: boolean;
  /**
   * Build each variant's plan (its plain copy and hash; the default); false stops once the
   * variant's diagnostics are known: `arl check` without a lock has no hash to compare.
   */
  readonly plans?: boolean;
  /** The entry's blocks, to show a refusal on the field the user wrote. */
  readonly blocks?: BlockIndex;
}

export function loweringContext(program: Program): LoweringContext {
  const entryDir = path.dirname(program.entry);
  const sources = [...program.modules.values()]
    .map((m) => ({ path: displayPath(m.path, entryDir), sha256: sha256Hex(m.parsed.text) }))
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return {
    entry: program.entry,
    entryDir,
    blocks: new BlockIndex(program.modules.get(program.entry)),
    provenance: {
      arl_version: arlVersion(),
      stdlib_version: stdlibVersion(),
      entry: path.basename(program.entry),
      sources,
    },
  };
}

/** Paths in plans: relative to the entry's directory, stdlib files as `std/...`, POSIX separators. */
export function displayPath(absolute: string, entryDir: string): string {
  const inStdlib = path.relative(STDLIB_ROOT, absolute);
  const rel =
    inStdlib && !inStdlib.startsWith("..") && !path.isAbsolute(inStdlib) ? inStdlib : path.relative(entryDir, absolute);
  return rel.split(path.sep).join("/");
}

/** The map's entries by key, in sorted order (the order of `[...map.keys()].sort()`). */
export function sortedEntries<V>(map: ReadonlyMap<string, V>): [string, V][] {
  return [...map].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/** A record with the map's keys in sorted order, so that declaration order leaves no trace. */
export function sortedRecord<V, W>(map: ReadonlyMap<string, V>, f: (v: V) => W): Record<string, W> {
  const out: Record<string, W> = {};
  for (const [k, v] of sortedEntries(map)) out[k] = f(v);
  return out;
}
