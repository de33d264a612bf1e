// Schema paths of the places in a spec: where a block or record sits in an experiment's
// configuration (`algorithm.advantage`, `env.code.tool.run_tests`), shared by completion (which
// works on tokens, so that unfinished text is understood) and hover/definition (on the AST).
import { declarationKinds } from "../semantics/schema/experiment.js";

/**
 * How the entries of a block are read: `normal` fields; `sweep` fields whose values are lists
 * of the field's values; `ablation` arm names (each arm holds normal overrides); `allow` lint codes.
 */
export type BlockMode = "normal" | "sweep" | "ablation" | "allow";

export interface Place {
  /** Path of the object below the experiment schema's root; undefined when unknown. */
  readonly path: readonly string[] | undefined;
  readonly mode: BlockMode;
  /** The type of the top-level declaration this place is in. */
  readonly topType: string | undefined;
}

const kinds: readonly string[] = declarationKinds;

/** Where a top-level declaration's entries sit: `experiment` at the root, `env NAME` at env.NAME, ... */
export function declarationPath(type: string, name: string | undefined): readonly string[] | undefined {
  if (!kinds.includes(type)) return undefined;
  if (type === "experiment") return [];
  if (type === "env" || type === "tool") return [type, name ?? "_"];
  return [type];
}

export function topPlace(type: string, name: string | undefined): Place {
  return { path: declarationPath(type, name), mode: "normal", topType: type };
}

/** The place of a block `type [name] { ... }` written among the entries of `parent`. */
export function blockPlace(parent: Place, type: string, name: string | undefined): Place {
  const { path, mode, topType } = parent;
  if (path === undefined || mode === "allow") return { path: undefined, mode: "normal", topType };
  if (mode === "ablation") return { path: [], mode: "normal", topType };
  if (path.length === 0 && mode === "normal" && topType === "experiment" && name === undefined) {
    if (type === "sweep") return { path: [], mode: "sweep", topType };
    if (type === "ablation") return { path: [], mode: "ablation", topType };
  }
  const next = name === undefined ? [...path, type] : [...path, type, name];
  return { path: next, mode: isAllowPath(next) ? "allow" : mode, topType };
}

/** The place of a record value `key.path: { ... }` written among the entries of `parent`. */
export function recordPlace(parent: Place, key: readonly string[]): Place {
  const { path, mode, topType } = parent;
  if (path === undefined || mode === "allow" || mode === "ablation")
    return { path: undefined, mode: "normal", topType };
  const next = [...path, ...key];
  return { path: next, mode: isAllowPath(next) ? "allow" : mode, topType };
}

/** The path of a field `key.path: value` among the entries of `parent`. */
export function fieldPath(parent: Place, key: readonly string[]): readonly string[] | undefined {
  if (parent.path === undefined || parent.mode === "allow" || parent.mode === "ablation") return undefined;
  return [...parent.path, ...key];
}

function isAllowPath(path: readonly string[]): boolean {
  return path.length === 1 && path[0] === "allow";
}
