// A compact, reviewable rendering of the AST for golden files: one S-expression per node,
// every field of every node shown except source ranges.
import type * as ast from "../../src/language/ast.js";

export function sexpr(node: ast.Node, indent = ""): string {
  const inner = `${indent}  `;
  const lines = (items: readonly ast.Node[]) => items.map((i) => `\n${inner}${sexpr(i, inner)}`).join("");
  const doc = (d: string | undefined) => (d === undefined ? "" : ` (doc ${JSON.stringify(d)})`);
  switch (node.kind) {
    case "Document":
      return `(document${lines(node.imports)}${lines(node.blocks)})`;
    case "Import":
      return `(import ${JSON.stringify(node.path.value)}${node.alias ? ` as ${node.alias.name}` : ""}${doc(node.doc)})`;
    case "Block": {
      const head = [node.type.name, node.name?.name, node.extends ? `(extends ${sexpr(node.extends)})` : undefined]
        .filter(Boolean)
        .join(" ");
      return `(block ${head}${doc(node.doc)}${lines(node.entries)})`;
    }
    case "Field":
      return `(field ${node.path.map((k) => sexpr(k)).join(".")} ${sexpr(node.value, inner)}${doc(node.doc)})`;
    case "Key":
      return node.quoted ? JSON.stringify(node.name) : node.name;
    case "Reference":
      return node.parts.map((p) => p.name).join(".");
    case "Argument":
      return node.name ? `(${node.name.name}: ${sexpr(node.value, indent)})` : sexpr(node.value, indent);
    case "Number":
      return `${node.raw}=${node.value}`;
    case "String":
      return `${node.multiline ? '"""' : ""}${JSON.stringify(node.value)}`;
    case "Boolean":
      return String(node.value);
    case "None":
      return "none";
    case "Identifier":
      return node.name;
    case "Member":
      return `(. ${sexpr(node.object, indent)} ${node.property.name})`;
    case "Call":
      return `(call ${sexpr(node.callee, indent)}${node.args.map((a) => ` ${sexpr(a, indent)}`).join("")})`;
    case "List":
      return `[${node.items.map((i) => sexpr(i, indent)).join(" ")}]`;
    case "Record":
      return `(record${lines(node.entries)})`;
    case "Unary":
      return `(${node.operator === "not" ? "not" : `unary${node.operator}`} ${sexpr(node.operand, indent)})`;
    case "Binary":
      return `(${node.operator} ${sexpr(node.left, indent)} ${sexpr(node.right, indent)})`;
    case "When":
      return `(when ${sexpr(node.value, indent)} ${sexpr(node.condition, indent)})`;
    case "Invalid":
      return "(invalid)";
  }
}
