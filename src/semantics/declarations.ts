// Top-level declarations of each module (`env world {...}`, `algorithm grpo {...}`) and how an
// `extends` reference finds one: `name` in the same file, `alias.name` through an import.
import { readFileSync } from "node:fs";
import { STDLIB_ROOT } from "../contracts/paths.js";
import type { Diagnostic } from "../diagnostics/diagnostic.js";
import { didYouMean } from "../contracts/suggest.js";
import { arlFilesBelow, importPathBelow } from "../language/arl-files.js";
import type { Block, Reference } from "../language/ast.js";
import type { Module, Program } from "../language/imports.js";
import { parse } from "../language/parse.js";
import { at, defined, last } from "../contracts/checked.js";

export interface Declaration {
  readonly name: string;
  readonly type: string;
  readonly block: Block;
  readonly module: Module;
}

/** Where a declaration's name is written (every declaration is a named block). */
export function declarationNameRange(decl: Declaration): NonNullable<Block["name"]>["range"] {
  return defined(decl.block.name, `the name of ${decl.type} '${decl.name}'`).range;
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
            related: [{ file: module.path, range: declarationNameRange(previous), message: "first declared here" }],
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
    if (parts.length === 1) return this.declarationsOf(module).get(at(parts, 0));
    if (parts.length === 2) {
      const target = this.importedModule(module, at(parts, 0));
      return target ? this.declarationsOf(target).get(at(parts, 1)) : undefined;
    }
    return undefined;
  }

  /**
   * The hint of an `extends` that did not resolve: a close name that is in scope, else the
   * stdlib files that declare that name as a `type` (with the import that brings it in), else how
   * to declare it.
   */
  unresolvedHint(module: Module, ref: Reference, type: string): string {
    const parts = ref.parts.map((p) => p.name);
    const written = parts.join(".");
    const close = didYouMean(written, this.candidates(module, type));
    if (close) return close;
    const name = last(parts);
    const alias = parts.length === 2 ? at(parts, 0) : undefined;
    const declaring = stdlibDeclaring(type, name);
    // The alias names one of them (`findmax.task`: std/envs/findmax, not std/envs/dataset): that one alone.
    const named = declaring.filter((f) => alias !== undefined && defaultImportName(f) === alias);
    const files = named.length > 0 ? named : declaring;
    if (files.length > 0 && parts.length <= 2) {
      const imported = alias === undefined ? undefined : module.imports.find((i) => i.name === alias);
      const imports = files.map((f) => (alias === undefined ? `import "${f}"` : `import "${f}" as ${alias}`));
      const where =
        files.length === 1
          ? `"${files[0]}" declares the ${type} '${name}'`
          : `${files.map((f) => `"${f}"`).join(" and ")} declare the ${type} '${name}'`;
      const use = alias === undefined ? ` and write '${defaultImportName(at(files, 0))}.${name}'` : "";
      if (imported)
        return `'${alias}' imports "${imported.decl.path.value}", which does not declare it; ${where}: ${imports.join(" or ")}`;
      return `${where}: add ${imports.join(" or ")}${use}`;
    }
    return `declare '${type} ${name} { ... }' or import the file that does`;
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

let stdlibIndex: Map<string, string[]> | undefined;

/** Import paths ("std/algorithms") of the stdlib files that declare `name` as a `type`, read once. */
function stdlibDeclaring(type: string, name: string): string[] {
  if (!stdlibIndex) {
    stdlibIndex = new Map();
    for (const file of arlFilesBelow(STDLIB_ROOT)) {
      let text: string;
      try {
        text = readFileSync(file, "utf8");
      } catch {
        continue;
      }
      for (const block of parse(text, file).document.blocks) {
        if (!block.name) continue;
        const key = `${block.type.name} ${block.name.name}`;
        const files = stdlibIndex.get(key) ?? [];
        files.push(importPathBelow(STDLIB_ROOT, file));
        stdlibIndex.set(key, files);
      }
    }
  }
  return stdlibIndex.get(`${type} ${name}`) ?? [];
}

/** The name an import without `as` gives: the path's last segment. */
function defaultImportName(importPath: string): string {
  return last(importPath.split("/"));
}
