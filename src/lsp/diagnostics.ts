// Diagnostics for open documents: each open document is checked as an entry, with the same
// diagnostics as `arl check FILE`, after a quiet period (debounce) following the last edit. Only
// the documents an edit can affect are checked again: the edited one and the open documents
// whose last compilation read it (or looked for it and did not find it). A file's published list
// is the union, over the open entries, of the diagnostics located in it, which is what
// `arl check` prints for the same set of files.
//
// One pipeline per edit: the check reads the workspace's program for the entry (the parse its
// snapshot for hover and completion uses too), and the incremental checker (incremental.ts)
// re-checks only the experiments the edit touched. A check yields to the event loop before each
// piece of work; when a newer change has arrived by then, the run is dropped unpublished (what it
// finished stays memoised) and the files it was checking are checked again for the new text.
// Published lists therefore always belong to the documents' current versions.
import type { Diagnostic as LspDiagnostic } from "vscode-languageserver/node";
import { uniqueDiagnostics, type CheckResult } from "../compiler.js";
import { compareDiagnostics, type Diagnostic } from "../diagnostics/diagnostic.js";
import { importFile, type Program } from "../language/imports.js";
import { toLspDiagnostic } from "./convert.js";
import { IncrementalChecker } from "./incremental.js";
import type { Workspace } from "./workspace.js";

/**
 * The quiet period after an edit when none is configured: short for small files (25 ms), longer
 * for large ones (one more millisecond per 20 lines, at most 150 ms), whose checks cost more
 * and are more often overtaken by the next keystroke.
 */
export function adaptiveDebounceMs(lines: number): number {
  return Math.round(Math.min(150, 25 + lines / 20));
}

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
  readonly checker = new IncrementalChecker();
  /** Number of completed check runs so far (for tests and the benchmark). */
  runs = 0;
  /** Number of runs dropped because a newer change arrived while they ran. */
  dropped = 0;

  constructor(
    private readonly workspace: Workspace,
    private readonly target: PublishTarget,
    /** The quiet period in milliseconds; undefined: adaptive (`adaptiveDebounceMs`). */
    public debounceMs: number | undefined,
    private readonly onError: (entry: string, error: unknown) => void = () => {},
  ) {}

  /** `files` changed (edited, opened, closed, or changed on disk): check what they affect, soon. */
  invalidate(files: readonly string[]): void {
    for (const f of files) this.dirty.add(f);
    if (this.timer) clearTimeout(this.timer);
    this.schedule();
  }

  /** Files changed on disk: what was memoised may have read them (data files, lock files). */
  diskChanged(files: readonly string[]): void {
    this.checker.clear();
    this.invalidate(files);
  }

  /** A document was closed: it is no longer an entry. */
  closed(file: string): void {
    for (const f of this.entries.get(file)?.byFile.keys() ?? []) this.republish.add(f);
    this.entries.delete(file);
    this.checker.forget(file);
    this.republish.add(file);
    this.invalidate([file]);
  }

  /** The quiet period for the files waiting to be checked now. */
  currentDebounceMs(): number {
    if (this.debounceMs !== undefined) return this.debounceMs;
    let lines = 0;
    for (const f of this.dirty) lines = Math.max(lines, this.workspace.document(f)?.lineCount ?? 0);
    return adaptiveDebounceMs(lines);
  }

  private schedule(): void {
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, this.currentDebounceMs());
  }

  /** The current diagnostics located in `file` (what was last published for it). */
  diagnosticsIn(file: string): Diagnostic[] {
    const all: Diagnostic[] = [];
    for (const e of this.entries.values()) for (const d of e.byFile.get(file) ?? []) all.push(d);
    return dedupe(all);
  }

  /**
   * Checks every entry affected by the files changed since the last run, and publishes; a run
   * overtaken by a newer change is dropped, and its files wait for the next one.
   */
  async flush(): Promise<void> {
    if (this.running || this.dirty.size === 0) return;
    this.running = true;
    const changed = [...this.dirty];
    this.dirty.clear();
    const republish = [...this.republish];
    this.republish.clear();
    let completed = false;
    try {
      completed = await this.run(changed, republish);
    } finally {
      this.running = false;
      if (!completed) {
        this.dropped++;
        for (const f of changed) this.dirty.add(f);
        for (const f of republish) this.republish.add(f);
      }
    }
    if (this.dirty.size > 0 && !this.timer) this.schedule();
  }

  /** One run at the workspace's current version; false when a newer change overtook it. */
  private async run(changed: readonly string[], republish: readonly string[]): Promise<boolean> {
    const version = this.workspace.version;
    const affected = new Set<string>();
    for (const file of this.workspace.openFiles()) {
      const state = this.entries.get(file);
      if (changed.includes(file) || (state && changed.some((c) => state.dependencies.has(c)))) affected.add(file);
    }
    const touched = new Set<string>([...republish, ...changed.filter((f) => !this.workspace.isOpen(f))]);
    const states = new Map<string, EntryState>();
    for (const entry of affected) {
      let state: EntryState;
      try {
        const steps = this.checkEntry(this.workspace.program(entry));
        let step = steps.next();
        while (!step.done) {
          await new Promise<void>((resolve) => setImmediate(resolve));
          if (this.workspace.version !== version) return false;
          step = steps.next();
        }
        state = entryState(step.value);
      } catch (error) {
        // A clean-looking file would hide the failure: the entry shows it instead.
        this.onError(entry, error);
        state = {
          dependencies: this.entries.get(entry)?.dependencies ?? new Set([entry]),
          byFile: new Map([[entry, [internalError(entry, error)]]]),
        };
      }
      states.set(entry, state);
    }
    if (this.workspace.version !== version) return false;
    for (const [entry, state] of states) {
      for (const f of this.entries.get(entry)?.byFile.keys() ?? []) touched.add(f);
      this.entries.set(entry, state);
      for (const f of state.byFile.keys()) touched.add(f);
      touched.add(entry);
    }
    this.runs++;
    for (const file of touched) this.publish(file);
    return true;
  }

  /** One entry's check, in steps between which a newer change may stop it (a seam for the tests that inject a failure). */
  protected checkEntry(program: Program): Generator<void, CheckResult> {
    return this.checker.steps(program);
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
    message: `arl could not check this file: ${detail.length > 300 ? `${detail.slice(0, 300)}...` : detail}`.replace(
      LONE_SURROGATE,
      "\uFFFD",
    ),
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
