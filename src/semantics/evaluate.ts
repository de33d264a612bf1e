// Blocks -> values: entries become records (dotted paths nest, named blocks such as
// `env code {...}` sit under `env.code`), `extends` deep-merges the base declaration under the
// entries, constant arithmetic is folded, and anything over run-time signals stays an expression.
import type { Diagnostic } from "../diagnostics/diagnostic.js";
import type * as ast from "../language/ast.js";
import { dottedName } from "../language/ast.js";
import type { Module } from "../language/imports.js";
import type { Declaration, DeclarationIndex } from "./declarations.js";
import { emptyRecord, mergeValues, RecordBuilder, type Origin, type RecordValue, type Value } from "./values.js";
import { at, defined } from "../contracts/checked.js";

export class Evaluator {
  readonly diagnostics: Diagnostic[] = [];
  private readonly declarationValues = new Map<Declaration, RecordValue>();
  private readonly inProgress: Declaration[] = [];

  constructor(readonly index: DeclarationIndex) {}

  /** The full value of a top-level declaration, its `extends` chain applied. */
  declaration(decl: Declaration): RecordValue {
    const cached = this.declarationValues.get(decl);
    if (cached) return cached;
    const cycleAt = this.inProgress.indexOf(decl);
    if (cycleAt >= 0) {
      const chain = [...this.inProgress.slice(cycleAt), decl].map((d) => d.name).join(" -> ");
      this.diagnostics.push({
        code: "extends-cycle",
        severity: "error",
        message: `'${decl.name}' extends itself: ${chain}`,
        file: decl.module.path,
        range: decl.block.extends?.range ?? decl.block.type.range,
        hint: "break the cycle: a declaration cannot be derived from one derived from it",
      });
      return emptyRecord(this.origin(decl.module, decl.block.range));
    }
    this.inProgress.push(decl);
    const value = this.block(decl.block, decl.module);
    this.inProgress.pop();
    this.declarationValues.set(decl, value);
    return value;
  }

  /** A block's value: its base (when it `extends` one) with its own entries merged over it. */
  block(block: ast.Block, module: Module): RecordValue {
    const own = this.entries(block.entries, module, this.origin(module, block.range));
    if (!block.extends) return own;
    const base = this.resolveExtends(block, module);
    if (!base) return { ...own, extendsFailed: true };
    const merged = mergeValues(this.declaration(base), own) as RecordValue;
    return { ...merged, extendsFrom: `${block.extends.parts.map((p) => p.name).join(".")}` };
  }

  private resolveExtends(block: ast.Block, module: Module): Declaration | undefined {
    const ref = defined(block.extends, "the extends clause");
    const target = this.index.resolve(module, ref);
    const written = ref.parts.map((p) => p.name).join(".");
    if (!target && ref.parts.length === 2 && this.index.isBrokenImport(module, at(ref.parts, 0).name)) return undefined;
    if (!target) {
      this.diagnostics.push({
        code: "unresolved-reference",
        severity: "error",
        message: `cannot find '${written}' to extend`,
        file: module.path,
        range: ref.range,
        hint: this.index.unresolvedHint(module, ref, block.type.name),
      });
      return undefined;
    }
    if (target.type !== block.type.name) {
      this.diagnostics.push({
        code: "extends-kind-mismatch",
        severity: "error",
        message: `a '${block.type.name}' block cannot extend '${written}', which is a '${target.type}'`,
        file: module.path,
        range: ref.range,
        related: [
          { file: target.module.path, range: target.block.type.range, message: `'${target.name}' is declared here` },
        ],
      });
      return undefined;
    }
    return target;
  }

  entries(entries: readonly ast.Entry[], module: Module, origin: Origin): RecordValue {
    const record = new RecordBuilder(emptyRecord(origin));
    const assigned = new Map<string, { range: ast.Entry["range"]; isRecord: boolean }>();
    for (const entry of entries) {
      let path: string[];
      let keyOrigins: Origin[];
      let value: Value | undefined;
      let doc: string | undefined;
      if (entry.kind === "Field") {
        path = entry.path.map((k) => k.name);
        keyOrigins = entry.path.map((k) => this.origin(module, k.range));
        value = this.expression(entry.value, module);
        doc = entry.doc;
      } else {
        path = entry.name ? [entry.type.name, entry.name.name] : [entry.type.name];
        keyOrigins = entry.name
          ? [this.origin(module, entry.type.range), this.origin(module, entry.name.range)]
          : [this.origin(module, entry.type.range)];
        value = this.block(entry, module);
        doc = entry.doc;
      }
      if (!value) continue;
      if (this.reportDuplicate(path, value.kind === "record", entry, assigned, module)) continue;
      record.set({ path, value, keyOrigins, ...(doc !== undefined ? { doc } : {}) });
    }
    return record.build();
  }

  /** The same path set twice in one block, or a value set both whole and by a dotted path. */
  private reportDuplicate(
    path: string[],
    isRecord: boolean,
    entry: ast.Entry,
    assigned: Map<string, { range: ast.Entry["range"]; isRecord: boolean }>,
    module: Module,
  ): boolean {
    const key = path.join(".");
    let clash = assigned.get(key);
    if (clash && clash.isRecord && isRecord && entry.kind === "Field") clash = undefined; // a: {..} then a.b: merges
    for (let n = 1; n < path.length && !clash; n++) {
      const prefix = assigned.get(path.slice(0, n).join("."));
      if (prefix && !prefix.isRecord) clash = prefix;
    }
    if (clash) {
      this.diagnostics.push({
        code: "duplicate-field",
        severity: "error",
        message: `'${key}' is set more than once in this block`,
        file: module.path,
        range: entry.kind === "Field" ? at(entry.path, 0).range : entry.type.range,
        related: [{ file: module.path, range: clash.range, message: "first set here" }],
        hint: "keep one of them",
      });
      return true;
    }
    if (!assigned.has(key)) assigned.set(key, { range: entry.range, isRecord });
    return false;
  }

  expression(e: ast.Expression, module: Module): Value | undefined {
    const origin = this.origin(module, e.range);
    switch (e.kind) {
      case "Number":
        return { kind: "scalar", value: e.value, origin };
      case "String":
        return { kind: "scalar", value: e.value, origin };
      case "Boolean":
        return { kind: "scalar", value: e.value, origin };
      case "None":
        return { kind: "scalar", value: null, origin };
      case "Identifier":
      case "Member": {
        const name = dottedName(e);
        return name === undefined
          ? { kind: "expression", expression: e, origin }
          : { kind: "name", path: name.split("."), origin };
      }
      case "List": {
        const items: Value[] = [];
        for (const item of e.items) {
          const v = this.expression(item, module);
          if (v) items.push(v);
        }
        return { kind: "list", items, origin };
      }
      case "Record":
        return this.entries(e.entries, module, origin);
      case "Call": {
        const callee = dottedName(e.callee);
        if (callee === undefined) return { kind: "expression", expression: e, origin };
        const args: Value[] = [];
        const named = new Map<string, Value>();
        for (const a of e.args) {
          const v = this.expression(a.value, module);
          if (!v) continue;
          if (a.name) named.set(a.name.name, v);
          else args.push(v);
        }
        return { kind: "call", callee, args, named, origin };
      }
      case "Unary": {
        const operand = this.expression(e.operand, module);
        if (operand?.kind === "scalar" && typeof operand.value === "number" && e.operator !== "not") {
          return { kind: "scalar", value: e.operator === "-" ? -operand.value : operand.value, origin };
        }
        return { kind: "expression", expression: e, origin };
      }
      case "Binary": {
        const folded = this.fold(e, module);
        return folded === undefined
          ? { kind: "expression", expression: e, origin }
          : { kind: "scalar", value: folded, origin };
      }
      case "When":
        return { kind: "expression", expression: e, origin };
      case "Invalid":
        return undefined;
    }
  }

  /** Constant arithmetic on numbers (`2 * 512`), so that schemas see numbers. */
  private fold(e: ast.BinaryExpression, module: Module): number | undefined {
    const left = this.expression(e.left, module);
    const right = this.expression(e.right, module);
    if (left?.kind !== "scalar" || right?.kind !== "scalar") return undefined;
    if (typeof left.value !== "number" || typeof right.value !== "number") return undefined;
    const a = left.value;
    const b = right.value;
    let r: number | undefined;
    switch (e.operator) {
      case "+":
        r = a + b;
        break;
      case "-":
        r = a - b;
        break;
      case "*":
        r = a * b;
        break;
      case "/":
        r = a / b;
        break;
      case "%":
        r = a % b;
        break;
      default:
        return undefined;
    }
    return Number.isFinite(r) ? r : undefined;
  }

  origin(module: Module, range: ast.Node["range"]): Origin {
    return { file: module.path, range };
  }
}
