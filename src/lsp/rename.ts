// Renaming a top-level declaration: its name, the `extends` clauses and tool references that
// name it in its own file (`name`) and in every file that imports it (`alias.name`), looked for
// among the open documents and the .arl files of the workspace folders.
import path from "node:path";
import {
  ResponseError,
  ErrorCodes,
  type Range as LspRange,
  type TextEdit,
  type WorkspaceEdit,
} from "vscode-languageserver/node";
import type { Range } from "../contracts/source-range.js";
import type * as ast from "../language/ast.js";
import { importFile, importName } from "../language/imports.js";
import { parse } from "../language/parse.js";
import { reservedWords } from "../language/tokens.js";
import type { Declaration } from "../semantics/declarations.js";
import { toLspRange } from "./convert.js";
import { forEachValue, locate, nameChains } from "./locate.js";
import { resolveDeclaration } from "./resolve.js";
import type { Snapshot } from "./workspace.js";
import { defined, last } from "../contracts/checked.js";

/** The declaration under the cursor and the range of the name to edit there. */
function renameTarget(snapshot: Snapshot, offset: number): { decl: Declaration; range: Range } | undefined {
  const module = snapshot.entry;
  if (!module) return undefined;
  const hit = locate(module.parsed.document, offset);
  if (!hit) return undefined;
  if (hit.kind === "blockName" && hit.block === hit.top) {
    const decl = snapshot.declarationOf(module, hit.block);
    return decl ? { decl, range: defined(hit.block.name, "the block name").range } : undefined;
  }
  if (hit.kind === "extends") {
    const parts = hit.ref.parts;
    if (hit.part !== parts.length - 1) return undefined;
    const decl = resolveDeclaration(
      snapshot,
      module,
      parts.map((p) => p.name),
    );
    return decl ? { decl, range: last(parts).range } : undefined;
  }
  if (hit.kind === "name" && hit.index === hit.parts.length - 1 && hit.parts.length <= 2) {
    if (hit.parts.length === 1 && hit.field?.[hit.field.length - 1] !== "tools") return undefined;
    if (hit.parts.length === 2 && !module.imports.some((i) => i.name === hit.parts[0])) return undefined;
    const decl = resolveDeclaration(snapshot, module, hit.parts);
    return decl ? { decl, range: last(hit.ranges) } : undefined;
  }
  return undefined;
}

export function prepareRename(snapshot: Snapshot, offset: number): { range: LspRange; placeholder: string } | null {
  const target = renameTarget(snapshot, offset);
  if (!target) return null;
  if (target.decl.module.isStdlib)
    throw new ResponseError(
      ErrorCodes.InvalidRequest,
      `'${target.decl.name}' is declared in the stdlib, which cannot be renamed`,
    );
  return { range: toLspRange(target.range), placeholder: target.decl.name };
}

const identifier = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function rename(snapshot: Snapshot, offset: number, newName: string): WorkspaceEdit | null {
  const target = renameTarget(snapshot, offset);
  if (!target) return null;
  const { decl } = target;
  if (decl.module.isStdlib)
    throw new ResponseError(
      ErrorCodes.InvalidRequest,
      `'${decl.name}' is declared in the stdlib, which cannot be renamed`,
    );
  if (!identifier.test(newName) || reservedWords.has(newName))
    throw new ResponseError(ErrorCodes.InvalidParams, `'${newName}' is not a valid name`);
  if (newName !== decl.name && decl.module.parsed.document.blocks.some((b) => b.name?.name === newName)) {
    throw new ResponseError(
      ErrorCodes.InvalidParams,
      `'${newName}' is already declared in ${path.basename(decl.module.path)}`,
    );
  }
  const workspace = snapshot.workspace;
  const changes: Record<string, TextEdit[]> = {};
  const files = new Set([decl.module.path, ...workspace.candidateFiles()]);
  for (const file of files) {
    const text = workspace.host.readFile(file);
    if (text === undefined) continue;
    const parsed = parse(text, file);
    const ranges: Range[] = [];
    const names: string[][] = [];
    if (file === decl.module.path) {
      names.push([decl.name]);
      const own = parsed.document.blocks.find((b) => b.name?.name === decl.name && b.type.name === decl.type);
      if (own?.name) ranges.push(own.name.range);
    }
    for (const imp of parsed.document.imports) {
      if (importFile(imp.path.value, file) === decl.module.path) names.push([importName(imp), decl.name]);
    }
    if (names.length === 0) continue;
    collectReferences(parsed.document, names, ranges);
    if (ranges.length === 0) continue;
    changes[workspace.uriOf(file)] = dedupeRanges(ranges).map((r) => ({ range: toLspRange(r), newText: newName }));
  }
  return { changes };
}

const matches = (parts: readonly string[], names: readonly string[][]) =>
  names.some((n) => n.length === parts.length && n.every((p, i) => p === parts[i]));

/** The last-part ranges of `extends` clauses and tool references that spell one of `names`. */
function collectReferences(doc: ast.Document, names: readonly string[][], out: Range[]): void {
  const visitBlock = (b: ast.Block) => {
    if (
      b.extends &&
      matches(
        b.extends.parts.map((p) => p.name),
        names,
      )
    )
      out.push(last(b.extends.parts).range);
    for (const e of b.entries) visitEntry(e);
  };
  const visitEntry = (e: ast.Entry) => {
    if (e.kind === "Block") return visitBlock(e);
    forEachValue(e, (value, field) => {
      const isTools = field.path[field.path.length - 1]?.name === "tools";
      for (const chain of nameChains(value)) {
        if (chain.parts.length === 1 && !isTools) continue;
        if (matches(chain.parts, names)) out.push(last(chain.ranges));
      }
      if (value.kind === "Record") for (const inner of value.entries) visitEntry(inner);
    });
  };
  for (const b of doc.blocks) visitBlock(b);
}

function dedupeRanges(ranges: Range[]): Range[] {
  const seen = new Set<number>();
  return ranges.filter((r) => (seen.has(r.start.offset) ? false : (seen.add(r.start.offset), true)));
}
