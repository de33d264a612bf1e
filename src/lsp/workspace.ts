// The server's view of the files: open documents overlay the disk (a SourceHost for the
// compiler), and a snapshot per document (its program, declarations and evaluated values)
// answers hover, completion, definition and rename until any document changes. One module
// loader serves each generation (the state between two changes), so a file is parsed once per
// change: the snapshots and the diagnostics' checks share its parse. That parse starts from the
// file's previous one (src/language/incremental-parse.ts): an edit inside one top-level block
// re-parses that block only, and an unchanged file (an import) is not parsed again.
import { readdirSync, type Dirent } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { TextDocument } from "vscode-languageserver-textdocument";
import { STDLIB_ROOT } from "../contracts/paths.js";
import { parse, type ParseResult } from "../language/parse.js";
import type { LineIndex } from "../contracts/source-range.js";
import type { Block } from "../language/ast.js";
import { reparse } from "../language/incremental-parse.js";
import { diskHost, ModuleLoader, type Module, type Program, type SourceHost } from "../language/imports.js";
import { DeclarationIndex, type Declaration } from "../semantics/declarations.js";
import { Evaluator } from "../semantics/evaluate.js";
import type { RecordValue } from "../semantics/values.js";
import { pathToUri, uriToPath } from "./convert.js";

export class Workspace {
  private readonly byPath = new Map<string, TextDocument>();
  private readonly uris = new Map<string, string>();
  private generation = 0;
  private readonly snapshots = new Map<string, { generation: number; snapshot: Snapshot }>();
  private loader: { generation: number; loader: ModuleLoader } | undefined;
  /** Each file's latest parse, which the next parse of the file starts from. */
  private readonly parses = new Map<string, ParseResult>();
  private readonly parseText = (text: string, file: string): ParseResult => {
    const previous = this.parses.get(file);
    const parsed = previous ? reparse(previous, text, file) : parse(text, file);
    this.parses.set(file, parsed);
    return parsed;
  };
  /** Workspace folders (absolute paths), searched for files that import a renamed declaration. */
  roots: string[] = [];

  /** Reads open documents from the editor and everything else from the disk. */
  readonly host: SourceHost = {
    readFile: (file) => {
      const doc = this.byPath.get(file);
      return doc ? doc.getText() : diskHost.readFile(file);
    },
  };

  /** The path a document is compiled under (untitled documents get one in the temp folder). */
  pathOf(uri: string): string {
    return uriToPath(uri) ?? path.join(os.tmpdir(), "arl-untitled", `${encodeURIComponent(uri)}.arl`);
  }

  /** The URI to publish for a file: the editor's own spelling for open documents. */
  uriOf(file: string): string {
    return this.uris.get(file) ?? pathToUri(file);
  }

  opened(doc: TextDocument): string {
    const file = this.pathOf(doc.uri);
    this.byPath.set(file, doc);
    this.uris.set(file, doc.uri);
    this.generation++;
    return file;
  }

  changed(doc: TextDocument): string {
    return this.opened(doc);
  }

  closed(uri: string): string {
    const file = this.pathOf(uri);
    this.byPath.delete(file);
    this.uris.delete(file);
    this.snapshots.delete(file);
    this.generation++;
    return file;
  }

  /** Files changed on disk: snapshots must read them again. */
  diskChanged(): void {
    this.generation++;
  }

  isOpen(file: string): boolean {
    return this.byPath.has(file);
  }

  document(file: string): TextDocument | undefined {
    return this.byPath.get(file);
  }

  openFiles(): string[] {
    return [...this.byPath.keys()];
  }

  /** Counts changes: a result computed at one generation is stale at the next. */
  get version(): number {
    return this.generation;
  }

  /** `file` (absolute) and what it imports, as the open documents and the disk have them now. */
  program(file: string): Program {
    return this.snapshot(file).program;
  }

  snapshot(file: string): Snapshot {
    const cached = this.snapshots.get(file);
    if (cached && cached.generation === this.generation) return cached.snapshot;
    if (this.loader?.generation !== this.generation)
      this.loader = { generation: this.generation, loader: new ModuleLoader(this.host, STDLIB_ROOT, this.parseText) };
    const snapshot = new Snapshot(this.loader.loader.load(file), this);
    this.snapshots.set(file, { generation: this.generation, snapshot });
    return snapshot;
  }

  /** Every .arl file below the workspace folders and every open document, for rename. */
  candidateFiles(): string[] {
    const out = new Set<string>(this.byPath.keys());
    let budget = 5000;
    const walk = (dir: string, depth: number) => {
      if (depth > 12 || budget <= 0) return;
      let entries: Dirent[];
      try {
        entries = readdirSync(dir, { withFileTypes: true });
      } catch {
        return;
      }
      for (const e of entries) {
        if (budget-- <= 0) return;
        if (e.name.startsWith(".") || e.name === "node_modules" || e.name === "dist") continue;
        const full = path.join(dir, e.name);
        if (e.isDirectory()) walk(full, depth + 1);
        else if (e.isFile() && e.name.endsWith(".arl")) out.add(full);
      }
    };
    for (const root of this.roots) walk(root, 0);
    return [...out];
  }
}

/** One document's program and what is derived from it, computed on first use. */
export class Snapshot {
  private indexCache: DeclarationIndex | undefined;
  private evaluatorCache: Evaluator | undefined;
  private readonly values = new Map<Declaration, RecordValue | null>();

  constructor(
    readonly program: Program,
    readonly workspace: Workspace,
  ) {}

  get entry(): Module | undefined {
    return this.program.modules.get(this.program.entry);
  }

  get index(): DeclarationIndex {
    return (this.indexCache ??= new DeclarationIndex(this.program));
  }

  private get evaluator(): Evaluator {
    return (this.evaluatorCache ??= new Evaluator(this.index));
  }

  module(file: string): Module | undefined {
    return this.program.modules.get(file);
  }

  lines(file: string): LineIndex | undefined {
    return this.program.modules.get(file)?.parsed.lines;
  }

  /** The top-level declaration `block` of `module`, if it is one with a name. */
  declarationOf(module: Module, block: Block): Declaration | undefined {
    if (!block.name) return undefined;
    const d = this.index.declarationsOf(module).get(block.name.name);
    return d?.block === block ? d : undefined;
  }

  /** A declaration's value with its `extends` chain applied; undefined if evaluation failed. */
  value(decl: Declaration): RecordValue | undefined {
    if (this.values.has(decl)) return this.values.get(decl) ?? undefined;
    let v: RecordValue | null;
    try {
      v = this.evaluator.declaration(decl);
    } catch {
      v = null;
    }
    this.values.set(decl, v);
    return v ?? undefined;
  }

  /** The value of the top-level declaration named `name` in the entry file. */
  entryDeclarationValue(name: string | undefined): { decl: Declaration; value: RecordValue } | undefined {
    const entry = this.entry;
    if (!entry || name === undefined) return undefined;
    const decl = this.index.declarationsOf(entry).get(name);
    if (!decl) return undefined;
    const value = this.value(decl);
    return value ? { decl, value } : undefined;
  }
}

/** How a file is shown in hovers: `std/algorithms.arl` for the stdlib, else relative to `from`'s folder. */
export function displayFile(file: string, from: string): string {
  const std = path.relative(STDLIB_ROOT, file);
  if (!std.startsWith("..") && !path.isAbsolute(std)) return std.split(path.sep).join("/");
  if (file === from) return path.basename(file);
  const rel = path.relative(path.dirname(from), file);
  return rel.startsWith("..") ? file : rel.split(path.sep).join("/");
}
