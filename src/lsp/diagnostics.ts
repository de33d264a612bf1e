// Diagnostics for open documents: each open document is checked as an entry, exactly as
// `arl check FILE` checks it, after a quiet period (debounce) following the last edit. Only the
// documents an edit can affect are checked again: the edited one and the open documents whose
// last compilation read it (or looked for it and did not find it). A file's published list is
// the union, over the open entries, of the diagnostics located in it, which is what
// `arl check` prints for the same set of files.
import type { Diagnostic as LspDiagnostic } from "vscode-languageserver/node";
import { Compiler, uniqueDiagnostics, type CheckResult } from "../compiler.js";
import { compareDiagnostics, type Diagnostic } from "../diagnostics/diagnostic.js";
import { importFile, type Program } from "../language/imports.js";
import { toLspDiagnostic } from "./convert.js";
import type { Workspace } from "./workspace.js";

export interface PublishTarget {
  publish(uri: string, version: number | undefined, diagnostics: LspDiagnostic[]): void;
}

interface EntryState {
  /** Files the last compilation read or looked for. */
  readonly dependencies: ReadonlySet<string>;
  /** Its diagnostics by the file they are located in. */
  readonly byFile: ReadonlyMap<string, readonly Diagnostic[]>;
}

export class DiagnosticsManager {
  private readonly entries = new Map<string, EntryState>();
  /** Files with a non-empty published list (so that they are cleared when it empties). */
  private readonly nonEmpty = new Set<string>();
  private readonly dirty = new Set<string>();
  /** Files whose list must be published again even if no entry reading them is checked. */
  private readonly republish = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  /** Number of check runs so far (for tests and the benchmark). */
  runs = 0;

  constructor(
    private readonly workspace: Workspace,
    private readonly target: PublishTarget,
    public debounceMs: number,
    private readonly onError: (entry: string, error: unknown) => void = () => {},
  ) {}

  /** `files` changed (edited, opened, closed, or changed on disk): check what they affect, soon. */
  invalidate(files: readonly string[]): void {
    for (const f of files) this.dirty.add(f);
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.flush();
    }, this.debounceMs);
  }

  /** A document was closed: it is no longer an entry. */
  closed(file: string): void {
    for (const f of this.entries.get(file)?.byFile.keys() ?? []) this.republish.add(f);
    this.entries.delete(file);
    this.republish.add(file);
    this.invalidate([file]);
  }

  /** The current diagnostics located in `file` (what was last published for it). */
  diagnosticsIn(file: string): Diagnostic[] {
    const all: Diagnostic[] = [];
    for (const e of this.entries.values()) for (const d of e.byFile.get(file) ?? []) all.push(d);
    return dedupe(all);
  }

  /** Checks every entry affected by the files changed since the last run, and publishes. */
  flush(): void {
    if (this.running || this.dirty.size === 0) return;
    this.running = true;
    try {
      const changed = [...this.dirty];
      this.dirty.clear();
      const affected = new Set<string>();
      for (const file of this.workspace.openFiles()) {
        const state = this.entries.get(file);
        if (changed.includes(file) || (state && changed.some((c) => state.dependencies.has(c)))) affected.add(file);
      }
      const touched = new Set<string>([...this.republish, ...changed.filter((f) => !this.workspace.isOpen(f))]);
      this.republish.clear();
      const compiler = new Compiler(this.workspace.host);
      for (const entry of affected) {
        const before = this.entries.get(entry);
        for (const f of before?.byFile.keys() ?? []) touched.add(f);
        let state: EntryState;
        try {
          state = entryState(this.checkEntry(compiler, entry));
        } catch (error) {
          // A clean-looking file would hide the failure: the entry shows it instead.
          this.onError(entry, error);
          state = { dependencies: before?.dependencies ?? new Set([entry]), byFile: new Map([[entry, [internalError(entry, error)]]]) };
        }
        this.entries.set(entry, state);
        for (const f of state.byFile.keys()) touched.add(f);
        touched.add(entry);
      }
      this.runs++;
      for (const file of touched) this.publish(file);
    } finally {
      this.running = false;
    }
    if (this.dirty.size > 0) this.invalidate([]);
  }

  /** One entry's check (a seam for the tests that inject a failure). */
  protected checkEntry(compiler: Compiler, entry: string): CheckResult {
    return compiler.check(entry);
  }

  private publish(file: string): void {
    try {
      this.publishList(file, this.diagnosticsIn(file));
    } catch (error) {
      this.onError(file, error);
      try {
        this.publishList(file, [internalError(file, error)]);
      } catch (again) {
        this.onError(file, again); // the connection itself failed: nothing more to send
      }
    }
  }

  private publishList(file: string, diagnostics: Diagnostic[]): void {
    if (diagnostics.length === 0 && !this.nonEmpty.has(file) && !this.workspace.isOpen(file)) return;
    if (diagnostics.length > 0) this.nonEmpty.add(file);
    else this.nonEmpty.delete(file);
    const doc = this.workspace.document(file);
    const uriOf = (f: string) => this.workspace.uriOf(f);
    this.target.publish(
      this.workspace.uriOf(file),
      doc?.version,
      diagnostics.map((d) => toLspDiagnostic(d, uriOf)),
    );
  }
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** What the user sees when checking a file failed inside the server: the failure, at the top. */
function internalError(file: string, error: unknown): Diagnostic {
  const at = { line: 1, column: 1, offset: 0 };
  const detail = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return {
    code: "lsp-internal-error",
    severity: "error",
    // A message can quote the input (a lone surrogate, 150k characters): keep it short and well-formed.
    message: `arl could not check this file: ${detail.length > 300 ? `${detail.slice(0, 300)}...` : detail}`.replace(LONE_SURROGATE, "\uFFFD"),
    file,
    range: { start: at, end: at },
    hint: "this is a bug in arl, not necessarily in your spec; the server's log has the stack trace; please report it with this file",
  };
}

function entryState(result: CheckResult): EntryState {
  const byFile = new Map<string, Diagnostic[]>();
  for (const d of uniqueDiagnostics([result])) {
    let list = byFile.get(d.file);
    if (!list) byFile.set(d.file, (list = []));
    list.push(d);
  }
  return { dependencies: dependencies(result.program), byFile };
}

/** The files a program read (its lock file included), and those its imports looked for without finding. */
function dependencies(program: Program): Set<string> {
  const out = new Set<string>(program.modules.keys());
  out.add(program.entry);
  // The plan stage compares the spec with the lock file beside it.
  out.add(`${program.entry}.lock`);
  for (const m of program.modules.values()) {
    for (const imp of m.imports) {
      if (imp.target) continue;
      const file = importFile(imp.decl.path.value, m.path);
      if (file !== undefined) out.add(file);
    }
  }
  return out;
}

function dedupe(diagnostics: Diagnostic[]): Diagnostic[] {
  const seen = new Set<string>();
  const out: Diagnostic[] = [];
  for (const d of diagnostics) {
    const key = `${d.file}\0${d.range.start.offset}\0${d.range.end.offset}\0${d.code}\0${d.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(d);
  }
  return out.sort(compareDiagnostics);
}
