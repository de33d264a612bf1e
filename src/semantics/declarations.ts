// Top-level declarations of each module (`env world {...}`, `algorithm grpo {...}`) and how an
// `extends` reference finds one: `name` in the same file, `alias.name` through an import.
import type { Diagnostic } from "../diagnostics/diagnostic.js";
import type { Block, Reference } from "../language/ast.js";
import type { Module, Program } from "../language/imports.js";

export interface Declaration {
  readonly name: string;
  readonly type: string;
  readonly block: Block;
  readonly module: Module;
}

export class DeclarationIndex {
  private readonly byModule = new Map<string, Map<string, Declaration>>();
  readonly diagnostics: Diagnostic[] = [];

  constructor(readonly program: Program) {
    for (const module of program.modules.values()) {
      const table = new Map<string, Declaration>();
      for (const block of module.parsed.document.blocks) {
        if (!block.name) {
          this.diagnostics.push({
            code: "missing-name",
            severity: "error",
            message: `a top-level '${block.type.name}' block needs a name`,
            file: module.path,
            range: block.type.range,
            hint: `write '${block.type.name} NAME { ... }'`,
          });
          continue;
        }
        const previous = table.get(block.name.name);
        if (previous) {
          this.diagnostics.push({
            code: "duplicate-declaration",
            severity: "error",
            message: `'${block.name.name}' is declared twice in this file`,
            file: module.path,
            range: block.name.range,
            related: [{ file: module.path, range: previous.block.name!.range, message: "first declared here" }],
            hint: "rename one of them",
          });
          continue;
        }
        table.set(block.name.name, { name: block.name.name, type: block.type.name, block, module });
      }
      this.byModule.set(module.path, table);
    }
  }

  declarationsOf(module: Module): ReadonlyMap<string, Declaration> {
    return this.byModule.get(module.path) ?? new Map();
  }

  /** The module an import name stands for in `module`, if it resolved. */
  importedModule(module: Module, name: string): Module | undefined {
    const imp = module.imports.find((i) => i.name === name);
    return imp?.target ? this.program.modules.get(imp.target) : undefined;
  }

  /** Whether `name` is an import of `module` that failed to resolve (already reported). */
  isBrokenImport(module: Module, name: string): boolean {
    const imp = module.imports.find((i) => i.name === name);
    return imp !== undefined && (!imp.target || !this.program.modules.has(imp.target));
  }

  /** Resolves `name` or `alias.name` from `module`. */
  resolve(module: Module, ref: Reference): Declaration | undefined {
    const parts = ref.parts.map((p) => p.name);
    if (parts.length === 1) return this.declarationsOf(module).get(parts[0]!);
    if (parts.length === 2) {
      const target = this.importedModule(module, parts[0]!);
      return target ? this.declarationsOf(target).get(parts[1]!) : undefined;
    }
    return undefined;
  }

  /** Names an `extends` of the given block type could have meant, for "did you mean". */
  candidates(module: Module, type: string): string[] {
    const out: string[] = [];
    for (const d of this.declarationsOf(module).values()) if (d.type === type) out.push(d.name);
    for (const imp of module.imports) {
      const target = imp.target ? this.program.modules.get(imp.target) : undefined;
      if (!target) continue;
      for (const d of this.declarationsOf(target).values()) if (d.type === type) out.push(`${imp.name}.${d.name}`);
    }
    return out;
  }
}
