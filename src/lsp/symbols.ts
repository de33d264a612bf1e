// Document symbols: every block, nested as written (`experiment x` > `algorithm` > `advantage`),
// and record-valued fields (`cross_policy: { ... }`) as containers of what they hold.
import { SymbolKind, type DocumentSymbol } from "vscode-languageserver/node";
import type * as ast from "../language/ast.js";
import { toLspRange } from "./convert.js";
import { at, last } from "../contracts/checked.js";

const topKinds: Record<string, SymbolKind> = {
  experiment: SymbolKind.Class,
  env: SymbolKind.Module,
  tool: SymbolKind.Function,
  policy: SymbolKind.Object,
  harness: SymbolKind.Object,
  reward: SymbolKind.Object,
  algorithm: SymbolKind.Object,
  mask: SymbolKind.Object,
  rollout: SymbolKind.Object,
  eval: SymbolKind.Object,
  resources: SymbolKind.Object,
  tracking: SymbolKind.Object,
};

export function documentSymbols(doc: ast.Document): DocumentSymbol[] {
  return doc.blocks.map((b) => blockSymbol(b, true));
}

function blockSymbol(block: ast.Block, top: boolean): DocumentSymbol {
  const name = block.name ? `${block.type.name} ${block.name.name}` : block.type.name;
  const selection = block.name ?? block.type;
  const symbol: DocumentSymbol = {
    name,
    kind: top
      ? (topKinds[block.type.name] ?? SymbolKind.Object)
      : block.type.name === "tool"
        ? SymbolKind.Function
        : block.type.name === "env"
          ? SymbolKind.Module
          : SymbolKind.Struct,
    range: toLspRange(block.range),
    selectionRange: toLspRange(selection.range),
    children: children(block.entries),
  };
  if (block.extends) symbol.detail = `extends ${block.extends.parts.map((p) => p.name).join(".")}`;
  return symbol;
}

function children(entries: readonly ast.Entry[]): DocumentSymbol[] {
  const out: DocumentSymbol[] = [];
  for (const e of entries) {
    if (e.kind === "Block") out.push(blockSymbol(e, false));
    else if (e.value.kind === "Record") {
      out.push({
        name: e.path.map((k) => k.name).join("."),
        kind: SymbolKind.Struct,
        range: toLspRange(e.range),
        selectionRange: toLspRange({ start: at(e.path, 0).range.start, end: last(e.path).range.end }),
        children: children(e.value.entries),
      });
    }
  }
  return out;
}
