// What the syntax tree has at an offset, with the schema place of the entries around it: a
// field key, a block's type or name, an `extends` reference, an import, or a name in a value
// (`leave_one_out`, `code.run_tests`, `outcome.tests_passed`).
import type { Range } from "../contracts/source-range.js";
import type * as ast from "../language/ast.js";
import { blockPlace, fieldPath, recordPlace, topPlace, type Place } from "./paths.js";

interface Common {
  /** The top-level block the hit is in. */
  readonly top: ast.Block;
  /** Place of the entries the hit belongs to. */
  readonly place: Place;
}

export type AstHit =
  | { readonly kind: "importPath"; readonly decl: ast.ImportDecl }
  | { readonly kind: "importAlias"; readonly decl: ast.ImportDecl }
  | (Common & {
      readonly kind: "blockType" | "blockName";
      readonly block: ast.Block;
      readonly inner: Place;
      readonly ancestors: readonly ast.Block[];
    })
  | (Common & {
      readonly kind: "extends";
      readonly block: ast.Block;
      readonly ref: ast.Reference;
      readonly part: number;
    })
  | (Common & {
      readonly kind: "key";
      readonly field: ast.Field;
      readonly index: number;
      readonly path: readonly string[] | undefined;
      readonly ancestors: readonly ast.Block[];
    })
  | (Common & {
      readonly kind: "name";
      readonly parts: readonly string[];
      readonly ranges: readonly Range[];
      /** The part the offset is on. */
      readonly index: number;
      /** The field whose value holds the name. */
      readonly field: readonly string[] | undefined;
      readonly node: ast.Expression;
    });

export function contains(r: Range, offset: number): boolean {
  return r.start.offset <= offset && offset <= r.end.offset;
}

export function locate(doc: ast.Document, offset: number): AstHit | undefined {
  for (const decl of doc.imports) {
    if (contains(decl.path.range, offset)) return { kind: "importPath", decl };
    if (decl.alias && contains(decl.alias.range, offset)) return { kind: "importAlias", decl };
  }
  for (const block of doc.blocks) {
    if (!contains(block.range, offset)) continue;
    const place = topPlace(block.type.name, block.name?.name);
    const outer: Place = { path: undefined, mode: "normal", topType: block.type.name };
    return inBlock(block, offset, outer, place, block, []);
  }
  return undefined;
}

function inBlock(
  block: ast.Block,
  offset: number,
  outer: Place,
  inner: Place,
  top: ast.Block,
  ancestors: readonly ast.Block[],
): AstHit | undefined {
  if (contains(block.type.range, offset)) return { kind: "blockType", block, inner, place: outer, top, ancestors };
  if (block.name && contains(block.name.range, offset))
    return { kind: "blockName", block, inner, place: outer, top, ancestors };
  if (block.extends && contains(block.extends.range, offset)) {
    const part = Math.max(
      0,
      block.extends.parts.findIndex((p) => contains(p.range, offset)),
    );
    return { kind: "extends", block, ref: block.extends, part, place: outer, top };
  }
  return inEntries(block.entries, offset, inner, top, [...ancestors, block]);
}

function inEntries(
  entries: readonly ast.Entry[],
  offset: number,
  place: Place,
  top: ast.Block,
  ancestors: readonly ast.Block[],
): AstHit | undefined {
  for (const entry of entries) {
    if (!contains(entry.range, offset)) continue;
    if (entry.kind === "Block")
      return inBlock(entry, offset, place, blockPlace(place, entry.type.name, entry.name?.name), top, ancestors);
    const keys = entry.path.map((k) => k.name);
    const index = entry.path.findIndex((k) => contains(k.range, offset));
    if (index >= 0) {
      return {
        kind: "key",
        field: entry,
        index,
        path: fieldPath(place, keys.slice(0, index + 1)),
        place,
        top,
        ancestors,
      };
    }
    const field = fieldPath(place, keys);
    const valuePlace: Place =
      place.mode === "ablation" ? { path: [], mode: "normal", topType: place.topType } : recordPlace(place, keys);
    const hit = inExpression(entry.value, offset, field, valuePlace, place, top, ancestors);
    if (hit) return hit;
  }
  return undefined;
}

function inExpression(
  e: ast.Expression,
  offset: number,
  field: readonly string[] | undefined,
  valuePlace: Place,
  place: Place,
  top: ast.Block,
  ancestors: readonly ast.Block[],
): AstHit | undefined {
  if (!contains(e.range, offset)) return undefined;
  switch (e.kind) {
    case "Identifier":
    case "Member": {
      const chain = nameChain(e);
      if (chain) {
        const index = chain.ranges.findIndex((r) => contains(r, offset));
        return {
          kind: "name",
          parts: chain.parts,
          ranges: chain.ranges,
          index: Math.max(0, index),
          field,
          node: e,
          place,
          top,
        };
      }
      return e.kind === "Member" ? inExpression(e.object, offset, field, valuePlace, place, top, ancestors) : undefined;
    }
    case "Call":
      return (
        inExpression(e.callee, offset, field, valuePlace, place, top, ancestors) ??
        firstHit(
          e.args.map((a) => a.value),
          offset,
          field,
          valuePlace,
          place,
          top,
          ancestors,
        )
      );
    case "List":
      return firstHit(
        e.items,
        offset,
        field,
        {
          ...valuePlace,
          path: valuePlace.path && valuePlace.mode !== "sweep" ? [...valuePlace.path, "0"] : valuePlace.path,
        },
        place,
        top,
        ancestors,
      );
    case "Record":
      return inEntries(e.entries, offset, valuePlace, top, ancestors);
    case "Unary":
      return inExpression(e.operand, offset, field, valuePlace, place, top, ancestors);
    case "Binary":
      return firstHit([e.left, e.right], offset, field, valuePlace, place, top, ancestors);
    case "When":
      return firstHit([e.value, e.condition], offset, field, valuePlace, place, top, ancestors);
    default:
      return undefined;
  }
}

function firstHit(
  es: readonly ast.Expression[],
  offset: number,
  field: readonly string[] | undefined,
  valuePlace: Place,
  place: Place,
  top: ast.Block,
  ancestors: readonly ast.Block[],
): AstHit | undefined {
  for (const e of es) {
    const hit = inExpression(e, offset, field, valuePlace, place, top, ancestors);
    if (hit) return hit;
  }
  return undefined;
}

/** `a.b.c` as its parts and their ranges; undefined when the chain holds anything but names. */
function nameChain(e: ast.Expression): { parts: string[]; ranges: Range[] } | undefined {
  if (e.kind === "Identifier") return { parts: [e.name], ranges: [e.range] };
  if (e.kind === "Member") {
    const head = nameChain(e.object);
    if (!head) return undefined;
    return { parts: [...head.parts, e.property.name], ranges: [...head.ranges, e.property.range] };
  }
  return undefined;
}

/** Every name chain in an expression (for rename), not looking into records (their entries are fields of their own). */
export function nameChains(
  e: ast.Expression,
  out: { parts: string[]; ranges: Range[] }[] = [],
): { parts: string[]; ranges: Range[] }[] {
  switch (e.kind) {
    case "Identifier":
    case "Member": {
      const chain = nameChain(e);
      if (chain) out.push(chain);
      else if (e.kind === "Member") nameChains(e.object, out);
      break;
    }
    case "Call":
      nameChains(e.callee, out);
      for (const a of e.args) nameChains(a.value, out);
      break;
    case "List":
      for (const i of e.items) nameChains(i, out);
      break;
    case "Unary":
      nameChains(e.operand, out);
      break;
    case "Binary":
      nameChains(e.left, out);
      nameChains(e.right, out);
      break;
    case "When":
      nameChains(e.value, out);
      nameChains(e.condition, out);
      break;
    default:
      break;
  }
  return out;
}

/** Calls `fn` on the value of every field below `entry`. */
export function forEachValue(entry: ast.Entry, fn: (value: ast.Expression, field: ast.Field) => void): void {
  if (entry.kind === "Field") fn(entry.value, entry);
  else for (const e of entry.entries) forEachValue(e, fn);
}
