// One compilation: the stages of docs/architecture.md chained in one direction. Each stage adds
// diagnostics; nothing here throws on user input.
import type { LineIndex } from "./contracts/source-range.js";
import { compareDiagnostics, type Diagnostic } from "./diagnostics/diagnostic.js";
import { diskHost, ModuleLoader, type Program, type SourceHost } from "./language/imports.js";
import { lint, lintRules } from "./lint/index.js";
import { planStage } from "./plan/lock.js";
import { analyze, type SemanticModel } from "./semantics/analyze.js";

export interface CheckResult {
  readonly entry: string;
  readonly program: Program;
  /** Absent when the files have syntax errors: meaning is not guessed from broken text. */
  readonly model?: SemanticModel;
  readonly diagnostics: readonly Diagnostic[];
}

export interface CheckOptions {
  /**
   * Run the plan stage (data files exist, the lock file beside the spec matches). On by default;
   * `arl plan` and `arl lock` lower the spec themselves and turn it off.
   */
  readonly plan?: boolean;
  /**
   * Type, lint and lower each distinct variant content once (the default; docs/architecture.md,
   * "Memoisation"). false does every variant afresh: the reference the memoised check is tested against.
   */
  readonly memoise?: boolean;
}

const lexicalOrSyntax: ReadonlySet<string> = new Set([
  "syntax-error",
  "invalid-token",
  "unterminated-string",
  "unterminated-comment",
  "invalid-escape",
  "nesting-too-deep",
  "expression-too-deep",
]);

export class Compiler {
  private readonly loader: ModuleLoader;

  /** `loader` shares its parses with whoever else uses it (the language server's snapshots). */
  constructor(host: SourceHost = diskHost, loader: ModuleLoader = new ModuleLoader(host)) {
    this.loader = loader;
  }

  /** Whether `entry` (absolute) can be read at all; unreadable entries are usage errors. */
  canRead(entry: string): boolean {
    return this.loader.canRead(entry);
  }

  check(entry: string, options: CheckOptions = {}): CheckResult {
    return checkProgram(this.loader.load(entry), options);
  }
}

/** Whether a program's files have lexical or syntax errors (meaning is then not guessed). */
export function syntaxBroken(program: Program): boolean {
  return program.diagnostics.some((d) => d.severity === "error" && lexicalOrSyntax.has(d.code));
}

/** The stages after loading, on a program already loaded. */
export function checkProgram(program: Program, options: CheckOptions = {}): CheckResult {
  const entry = program.entry;
  const memoise = { memoise: options.memoise !== false };
  const model = syntaxBroken(program) ? undefined : analyze(program, memoise);
  const lintDiagnostics = model ? lint(model, lintRules, memoise) : [];
  const earlier = [...program.diagnostics, ...(model?.diagnostics ?? []), ...lintDiagnostics];
  // Lowering needs a spec without errors; its stage compares the lock file (src/plan/lock.ts).
  const planDiagnostics =
    model && options.plan !== false && !earlier.some((d) => d.severity === "error") ? planStage(model, memoise) : [];
  const diagnostics = [...earlier, ...planDiagnostics].sort(compareDiagnostics);
  return { entry, program, ...(model ? { model } : {}), diagnostics };
}

/** Line indexes of every file a set of results read, for code frames. */
export function lineIndexes(results: readonly CheckResult[]): Map<string, LineIndex> {
  const out = new Map<string, LineIndex>();
  for (const r of results) for (const [file, m] of r.program.modules) out.set(file, m.parsed.lines);
  return out;
}

/** The same diagnostic reached through several entries is reported once. */
export function uniqueDiagnostics(results: readonly CheckResult[]): Diagnostic[] {
  const seen = new Set<string>();
  const out: Diagnostic[] = [];
  for (const r of results) {
    for (const d of r.diagnostics) {
      const key = `${d.file}\0${d.range.start.offset}\0${d.range.end.offset}\0${d.code}\0${d.message}`;
      if (seen.has(key)) continue;
      seen.add(key);
      out.push(d);
    }
  }
  return out.sort(compareDiagnostics);
}
