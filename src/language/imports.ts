// Import resolution for one compilation: "std/..." resolves into the stdlib shipped with the
// package, "./x" and "../x" from the importing file. Imports may not leave the entry file's
// directory tree; cycles and missing files are diagnosed. Each file is read and parsed once.
import { readFileSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Diagnostic } from "../diagnostics/diagnostic.js";
import { arlFilesBelow, importPathBelow } from "./arl-files.js";
import type { ImportDecl } from "./ast.js";
import { parse, type ParseResult } from "./parse.js";

/** The stdlib folder shipped with the package (`stdlib/`, holding `std/`). */
export const STDLIB_ROOT = fileURLToPath(new URL("../../stdlib", import.meta.url));

/** How files are read: the disk by default; the language server overlays open documents. */
export interface SourceHost {
  readFile(absolutePath: string): string | undefined;
}

export const diskHost: SourceHost = {
  readFile(absolutePath) {
    try {
      if (!statSync(absolutePath).isFile()) return undefined;
      return readFileSync(absolutePath, "utf8");
    } catch {
      return undefined;
    }
  },
};

export interface ResolvedImport {
  readonly decl: ImportDecl;
  /** The name the importing file uses: the alias, or the path's last segment. */
  readonly name: string;
  /** Absolute path of the imported file, when it resolved. */
  readonly target?: string;
}

export interface Module {
  readonly path: string;
  readonly parsed: ParseResult;
  readonly imports: readonly ResolvedImport[];
  /** Whether the file belongs to the shipped stdlib. */
  readonly isStdlib: boolean;
}

export interface Program {
  readonly entry: string;
  /** Every module reached from the entry, keyed by absolute path, entry first. */
  readonly modules: ReadonlyMap<string, Module>;
  readonly diagnostics: readonly Diagnostic[];
}

export function importName(decl: ImportDecl): string {
  if (decl.alias) return decl.alias.name;
  const base = decl.path.value.split("/").filter(Boolean).pop() ?? "";
  return base.replace(/\.arl$/, "");
}

/** Loads modules, memoising parses across the entries of one compilation. */
export class ModuleLoader {
  private readonly cache = new Map<string, Module | null>();
  private readonly texts = new Map<string, string | null>();

  constructor(
    private readonly host: SourceHost = diskHost,
    private readonly stdlibRoot: string = STDLIB_ROOT,
  ) {}

  /** Loads `entry` and everything it imports. `entry` must be absolute. */
  load(entry: string): Program {
    const root = path.dirname(entry);
    const diagnostics: Diagnostic[] = [];
    const modules = new Map<string, Module>();
    const visiting: string[] = [];
    const reportedCycles = new Set<string>();

    const visit = (file: string): void => {
      if (modules.has(file)) return;
      const module = this.module(file);
      if (!module) return;
      modules.set(file, module);
      visiting.push(file);
      for (const imp of module.imports) {
        if (!imp.target) continue;
        const cycleStart = visiting.indexOf(imp.target);
        if (cycleStart >= 0) {
          const cycle = [...visiting.slice(cycleStart), imp.target];
          const key = [...cycle].sort().join("\n");
          if (!reportedCycles.has(key)) {
            reportedCycles.add(key);
            diagnostics.push({
              code: "import-cycle",
              severity: "error",
              message: `import cycle: ${cycle.map((f) => path.basename(f)).join(" -> ")}`,
              file,
              range: imp.decl.range,
              hint: "move what both files need into a third file that both import",
            });
          }
          continue;
        }
        if (!this.isUnder(imp.target, root) && !this.isUnder(imp.target, this.stdlibRoot)) {
          diagnostics.push({
            code: "import-outside-root",
            severity: "error",
            message: `import '${imp.decl.path.value}' leaves the directory of the entry file (${root})`,
            file,
            range: imp.decl.path.range,
            hint: "keep imported specs inside the experiment's folder, or use the stdlib with \"std/...\"",
          });
          continue;
        }
        visit(imp.target);
      }
      visiting.pop();
    };

    const entryModule = this.module(entry);
    if (!entryModule) {
      return { entry, modules, diagnostics: [] };
    }
    visit(entry);
    for (const m of modules.values()) diagnostics.push(...m.parsed.diagnostics, ...this.resolutionDiagnostics(m));
    return { entry, modules, diagnostics };
  }

  /** Whether the entry file itself could be read. */
  canRead(file: string): boolean {
    return this.module(file) !== undefined;
  }

  private module(file: string): Module | undefined {
    const cached = this.cache.get(file);
    if (cached !== undefined) return cached ?? undefined;
    const text = this.read(file);
    if (text === undefined) {
      this.cache.set(file, null);
      return undefined;
    }
    const parsed = parse(text, file);
    const isStdlib = this.isUnder(file, this.stdlibRoot);
    const imports = parsed.document.imports.map((decl) => this.resolve(decl, file, isStdlib));
    const module: Module = { path: file, parsed, imports, isStdlib };
    this.cache.set(file, module);
    return module;
  }

  private resolve(decl: ImportDecl, from: string, fromStdlib: boolean): ResolvedImport {
    const name = importName(decl);
    const spec = decl.path.value;
    let candidate: string | undefined;
    if (spec.startsWith("std/")) candidate = path.join(this.stdlibRoot, spec);
    else if (spec.startsWith("./") || spec.startsWith("../")) candidate = path.resolve(path.dirname(from), spec);
    if (candidate === undefined) return { decl, name };
    if (!candidate.endsWith(".arl")) candidate += ".arl";
    // Stdlib files may only import the stdlib.
    if (fromStdlib && !this.isUnder(candidate, this.stdlibRoot)) return { decl, name };
    return this.read(candidate) === undefined ? { decl, name } : { decl, name, target: candidate };
  }

  private read(file: string): string | undefined {
    let text = this.texts.get(file);
    if (text === undefined) {
      text = this.host.readFile(file) ?? null;
      this.texts.set(file, text);
    }
    return text ?? undefined;
  }

  /** Diagnostics of a module's own import list: bad paths, missing files, duplicate names. */
  private resolutionDiagnostics(m: Module): Diagnostic[] {
    const out: Diagnostic[] = [];
    const names = new Map<string, ImportDecl>();
    for (const imp of m.imports) {
      const spec = imp.decl.path.value;
      if (!imp.target) {
        const malformed = !(spec.startsWith("std/") || spec.startsWith("./") || spec.startsWith("../"));
        out.push({
          code: malformed ? "invalid-import-path" : "import-not-found",
          severity: "error",
          message: malformed ? `import path '${spec}' must start with "std/", "./" or "../"` : `cannot find '${spec}'`,
          file: m.path,
          range: imp.decl.path.range,
          hint: malformed
            ? 'write "std/..." for the stdlib or a path relative to this file such as "./common"'
            : spec.startsWith("std/")
              ? `the stdlib has: ${listStdlib(this.stdlibRoot).join(", ") || "(nothing)"}`
              : "the path is relative to this file; the .arl extension may be left out",
        });
      }
      const previous = names.get(imp.name);
      if (previous) {
        out.push({
          code: "duplicate-import",
          severity: "error",
          message: `the name '${imp.name}' is imported twice`,
          file: m.path,
          range: imp.decl.range,
          related: [{ file: m.path, range: previous.range, message: "first imported here" }],
          hint: `give one of them another name with 'as'`,
        });
      } else names.set(imp.name, imp.decl);
    }
    return out;
  }

  private isUnder(file: string, dir: string): boolean {
    const rel = path.relative(dir, file);
    return rel !== "" && !rel.startsWith("..") && !path.isAbsolute(rel);
  }
}

let stdlibListing: string[] | undefined;

function listStdlib(root: string): string[] {
  stdlibListing ??= arlFilesBelow(root).map((f) => `"${importPathBelow(root, f)}"`);
  return stdlibListing;
}
