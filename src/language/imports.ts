// Import resolution for one compilation: "std/..." resolves into the stdlib shipped with the
// package, "./x" and "../x" from the importing file. Imports may not leave the entry file's
// directory tree (nor the stdlib), judged on real paths so that a symbolic link cannot lead out
// of it, and a refused file is never read; cycles and missing files are diagnosed. Each file is
// read and parsed once.
import { readFileSync, statSync } from "node:fs";
import path from "node:path";
import { STDLIB_ROOT } from "../contracts/paths.js";
import type { Diagnostic } from "../diagnostics/diagnostic.js";
import { arlFilesBelow, importPathBelow } from "./arl-files.js";
import type { ImportDecl } from "./ast.js";
import { confine, isInside } from "../contracts/confine.js";
import { parse, type ParseResult } from "./parse.js";

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
  /** Why the import was refused without reading it: `..` or a symbolic link leads out of the entry's tree. */
  readonly refused?: "outside" | "link";
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

/** The file an import path names, before any check (".arl" added); undefined for a malformed path. */
export function importFile(spec: string, from: string, stdlibRoot: string = STDLIB_ROOT): string | undefined {
  let candidate: string | undefined;
  if (spec.startsWith("std/")) candidate = path.join(stdlibRoot, spec);
  else if (spec.startsWith("./") || spec.startsWith("../")) candidate = path.resolve(path.dirname(from), spec);
  if (candidate === undefined) return undefined;
  return candidate.endsWith(".arl") ? candidate : `${candidate}.arl`;
}

/** Loads modules, memoising parses across the entries of one compilation. */
export class ModuleLoader {
  /** Modules by entry root and path: what an import may reach depends on the entry's folder. */
  private readonly cache = new Map<string, Module | null>();
  private readonly parses = new Map<string, ParseResult>();
  private readonly texts = new Map<string, string | null>();

  constructor(
    private readonly host: SourceHost = diskHost,
    private readonly stdlibRoot: string = STDLIB_ROOT,
    /** How a file's text is parsed: the language server passes one that reuses its last parse (incremental-parse.ts). */
    private readonly parseText: (text: string, file: string) => ParseResult = parse,
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
      const module = this.module(file, root);
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
        visit(imp.target);
      }
      visiting.pop();
    };

    const entryModule = this.module(entry, root);
    if (!entryModule) {
      return { entry, modules, diagnostics: [] };
    }
    visit(entry);
    // One push per diagnostic: spreading a file's 150,000 parse errors into push() overflows the stack.
    for (const m of modules.values()) {
      for (const d of m.parsed.diagnostics) diagnostics.push(d);
      for (const d of this.resolutionDiagnostics(m, root)) diagnostics.push(d);
    }
    return { entry, modules, diagnostics };
  }

  /** Whether the entry file itself could be read. */
  canRead(file: string): boolean {
    return this.module(file, path.dirname(file)) !== undefined;
  }

  /** `file` as a module of a program whose entry lies in `root`. */
  private module(file: string, root: string): Module | undefined {
    const key = `${root}\0${file}`;
    const cached = this.cache.get(key);
    if (cached !== undefined) return cached ?? undefined;
    const parsed = this.parsed(file);
    if (!parsed) {
      this.cache.set(key, null);
      return undefined;
    }
    const isStdlib = isInside(file, this.stdlibRoot);
    const imports = parsed.document.imports.map((decl) => this.resolve(decl, file, isStdlib, root));
    const module: Module = { path: file, parsed, imports, isStdlib };
    this.cache.set(key, module);
    return module;
  }

  private parsed(file: string): ParseResult | undefined {
    let parsed = this.parses.get(file);
    if (!parsed) {
      const text = this.read(file);
      if (text === undefined) return undefined;
      parsed = this.parseText(text, file);
      this.parses.set(file, parsed);
    }
    return parsed;
  }

  private resolve(decl: ImportDecl, from: string, fromStdlib: boolean, root: string): ResolvedImport {
    const name = importName(decl);
    const candidate = importFile(decl.path.value, from, this.stdlibRoot);
    if (candidate === undefined) return { decl, name };
    // Stdlib files may only import the stdlib; the entry's files its folder and the stdlib.
    // The check comes before any read: a refused file is never opened.
    const confined = confine(candidate, fromStdlib ? [this.stdlibRoot] : [root, this.stdlibRoot]);
    if (!confined.ok)
      return fromStdlib ? { decl, name } : { decl, name, refused: confined.reason === "link" ? "link" : "outside" };
    return this.read(confined.path) === undefined ? { decl, name } : { decl, name, target: confined.path };
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
  private resolutionDiagnostics(m: Module, root: string): Diagnostic[] {
    const out: Diagnostic[] = [];
    const names = new Map<string, ImportDecl>();
    for (const imp of m.imports) {
      const spec = imp.decl.path.value;
      if (imp.refused) {
        out.push({
          code: "import-outside-root",
          severity: "error",
          message:
            imp.refused === "link"
              ? `import '${spec}' goes through a symbolic link that leads out of the directory of the entry file (${root}); it was not read`
              : `import '${spec}' leaves the directory of the entry file (${root})`,
          file: m.path,
          range: imp.decl.path.range,
          hint: 'keep imported specs inside the experiment\'s folder (as files, not links to elsewhere), or use the stdlib with "std/..."',
        });
      } else if (!imp.target) {
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
}

let stdlibListing: string[] | undefined;

function listStdlib(root: string): string[] {
  stdlibListing ??= arlFilesBelow(root).map((f) => `"${importPathBelow(root, f)}"`);
  return stdlibListing;
}
