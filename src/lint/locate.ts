// Where a lint finding about a config path is shown: on the value the user wrote; for a default,
// on the nearest enclosing key that was written; for a value inherited through `extends` from
// another file (the stdlib, a shared base), on the entry file's `extends` clause or key that
// brought it in, with a note pointing at the inherited value. Users see findings in their file.
import type { RelatedInformation } from "../diagnostics/diagnostic.js";
import type * as ast from "../language/ast.js";
import type { Module } from "../language/imports.js";
import type { ExperimentModel, VariantModel } from "../semantics/analyze.js";
import { declarationNameRange } from "../semantics/declarations.js";
import type { Origin, Value } from "../semantics/values.js";
import type { ConfigPath } from "./rule.js";

export interface Location {
  readonly origin: Origin;
  readonly related: readonly RelatedInformation[];
}

/**
 * The blocks of the entry file that `extends` another, by source range, to find the `extends`
 * clause of a merged record. Built on the first question (most checks locate nothing inherited)
 * and holding only the blocks that have the clause: indexing every block of a large file was a
 * fifth of the lint stage.
 */
export class BlockIndex {
  private byRange: Map<string, ast.Block> | undefined;

  constructor(private readonly module: Module | undefined) {}

  /** The `extends` reference of the block written at `origin`, if it has one. */
  extendsAt(origin: Origin): Origin | undefined {
    const block = this.index().get(rangeKey(origin.range));
    return block?.extends ? { file: origin.file, range: block.extends.range } : undefined;
  }

  private index(): Map<string, ast.Block> {
    if (this.byRange) return this.byRange;
    const byRange = new Map<string, ast.Block>();
    const visitEntries = (entries: readonly ast.Entry[]) => {
      for (const e of entries) {
        if (e.kind === "Block") visitBlock(e);
        else if (e.value.kind === "Record") visitEntries(e.value.entries);
      }
    };
    const visitBlock = (b: ast.Block) => {
      if (b.extends) byRange.set(rangeKey(b.range), b);
      visitEntries(b.entries);
    };
    for (const b of this.module?.parsed.document.blocks ?? []) visitBlock(b);
    this.byRange = byRange;
    return byRange;
  }
}

function rangeKey(r: ast.Node["range"]): string {
  return `${r.start.offset}:${r.end.offset}`;
}

function dottedPath(path: ConfigPath): string {
  return path.map(String).join(".");
}

export function locatePath(
  path: ConfigPath,
  experiment: ExperimentModel,
  variant: VariantModel,
  entry: string,
  blocks: BlockIndex,
): Location {
  const values = variant.valuesByPath;
  const at = (n: number): Value | undefined => values.get(path.slice(0, n));
  let k = path.length;
  while (k > 0 && !at(k)) k--;
  const written = at(k);
  if (written && k === path.length && written.origin.file === entry) return { origin: written.origin, related: [] };

  // The value (or, for a default, the block holding it) came from another file.
  const inherited = written !== undefined && written.origin.file !== entry;
  const related = (via?: string): RelatedInformation[] => {
    if (!inherited || !written) return [];
    const what = `'${dottedPath(path.slice(0, k)) || "the experiment"}' is set here`;
    const unset = k < path.length ? `, without '${String(path[k])}' (its default applies)` : "";
    const through = via ? ` (inherited through '${via}')` : "";
    return [{ file: written.origin.file, range: written.origin.range, message: what + unset + through }];
  };

  // An inherited value is shown on the nearest `extends` clause in the entry file that brought it in.
  if (inherited) {
    for (let n = k; n >= 0; n--) {
      const child = at(n);
      if (child?.kind !== "record" || child.origin.file !== entry || child.extendsFrom === undefined) continue;
      const ext = blocks.extendsAt(child.origin);
      if (ext) return { origin: ext, related: related(child.extendsFrom) };
    }
  }
  // Otherwise on the nearest enclosing key written in the entry file.
  for (let n = k; n >= 1; n--) {
    const parent = at(n - 1);
    const keyOrigin = parent?.kind === "record" ? parent.keyOrigins.get(String(path[n - 1])) : undefined;
    if (keyOrigin?.file === entry) return { origin: keyOrigin, related: related() };
    const child = at(n);
    if (child && child.origin.file === entry) return { origin: child.origin, related: related() };
  }
  return {
    origin: { file: experiment.declaration.module.path, range: declarationNameRange(experiment.declaration) },
    related: related(),
  };
}
