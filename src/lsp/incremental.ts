// Incremental checking for the language server: an edit re-checks only the experiments it
// touches. The entry file is cut into segments that tile it: the imports (header), one span per
// top-level block (from the end of the previous block to the end of its own, so comments and
// blank lines above a block belong to it) and what follows the last block (trailer). Experiments
// that name one another (`extends`, or any mention of another experiment's name) form one
// component, checked together; everything else in the program (the other blocks, the imported
// files) is the base. The base alone is analysed once (the tools' own checks, unknown blocks);
// a component is analysed, linted and lowered on the program restricted to its experiments and
// the base blocks they name (transitively), and again with the whole base when that finds an
// error (an error's "did you mean" draws on every declaration). Results are memoised under the
// content that produced them: the base's text and the component's experiments' texts. An unchanged component is not
// checked again; its diagnostics are moved to where their segments now lie (offsets shifted per
// segment, lines and columns read again from the new text), so their locations stay exact.
//
// The union over components equals `checkProgram` (the same stages on the whole program, as
// `arl check` runs them): every per-experiment stage sees the same declarations, lint merges its
// `allow` entries only within experiments that extend one another, and the plan stage runs only
// when no component (nor the loader) reported an error. A lock file beside the entry is read once
// per check; each component compares its own experiments' plans with their entries in the lock
// (which are part of its memo key), and what concerns the lock as a whole is done over the
// components' results: the comparisons count only when no component's lowering failed (as
// `planStage` skips them then), and the lock's experiments that the entry no longer declares are
// reported from the layout's names. Where that equality could not be
// promised, the whole program is checked instead: syntax errors (no analysis at all), a name declared twice at the top
// level, an experiment extending a name that is not an experiment of the entry file ("did you
// mean" would be drawn from the restricted program), or an entry without experiments.
import { createHash } from "node:crypto";
import { checkProgram, syntaxBroken, type CheckResult } from "../compiler.js";
import { compareDiagnostics, type Diagnostic } from "../diagnostics/diagnostic.js";
import type { Block } from "../language/ast.js";
import type { Module, Program } from "../language/imports.js";
import type { LineIndex, Range } from "../contracts/source-range.js";
import { lint } from "../lint/index.js";
import { lockedButUndeclared, planStageOf, readLock, type ReadLock } from "../plan/lock.js";
import { analyze } from "../semantics/analyze.js";

/** A piece of the entry file, by offsets in the text it was cut from. */
interface Segment {
  readonly start: number;
  readonly end: number;
}

interface Span extends Segment {
  readonly block: Block;
}

/** The entry file cut into segments. */
interface Layout {
  readonly entry: Module;
  readonly header: Segment;
  readonly trailer: Segment;
  /** Blocks other than named experiments, in file order. */
  readonly base: readonly Span[];
  /** Named experiments, in file order. */
  readonly experiments: readonly Span[];
  /** Hash of everything but the experiments: header, base spans, trailer, imported files. */
  readonly baseHash: string;
}

/** One component's memoised result, located in the text it was computed on. */
interface ComponentResult {
  /** The component's segments in canonical order (header, base spans, trailer, its experiments). */
  readonly segments: readonly Segment[];
  /** Analysis and lint. */
  readonly earlier: readonly Diagnostic[];
  /** Lowering's (the plan stage's); empty when `earlier` has errors (the stage does not run then). */
  readonly plan: readonly Diagnostic[];
  /** The comparison of the component's experiments with the lock file (none without one). */
  readonly locked: readonly Diagnostic[];
}

/** A component's diagnostics, located in the current text. */
interface Located {
  earlier: Diagnostic[];
  plan: Diagnostic[];
  locked: Diagnostic[];
}

export class IncrementalChecker {
  /** Memoised components by entry file, then by content key. */
  private readonly memo = new Map<string, Map<string, ComponentResult>>();
  /** Experiments analysed, linted and lowered so far (reused ones are not counted): for tests. */
  experimentsChecked = 0;

  /** Forgets every memoised result (files on disk changed: data files, lock files). */
  clear(): void {
    this.memo.clear();
  }

  /** Forgets one entry's results (its document was closed). */
  forget(entry: string): void {
    this.memo.delete(entry);
  }

  /** The check of `program` run to completion. */
  check(program: Program): CheckResult {
    const steps = this.steps(program);
    for (;;) {
      const next = steps.next();
      if (next.done) return next.value;
    }
  }

  /**
   * The check of `program`, yielding before each component it has to check: the caller may stop
   * there (a newer edit arrived). Components checked before stopping stay memoised.
   */
  *steps(program: Program): Generator<void, CheckResult> {
    const layout = syntaxBroken(program) ? undefined : layoutOf(program);
    if (!layout) {
      yield;
      return checkProgram(program);
    }
    const memo = this.memo.get(program.entry) ?? new Map<string, ComponentResult>();
    this.memo.set(program.entry, memo);
    const used = new Map<string, ComponentResult>();
    const lock = readLock(program.entry);
    const earlier: Diagnostic[] = [...program.diagnostics];
    const plan: Diagnostic[] = [];
    const locked: Diagnostic[] = [];
    const lines = layout.entry.parsed.lines;
    const names = new Names(layout);
    const pieces: { key: string; component: readonly Span[] | undefined }[] = [
      { key: `base\0${layout.baseHash}`, component: undefined },
      ...components(layout, names).map((component) => ({ key: componentKey(layout, component, lock), component })),
    ];
    for (const { key, component } of pieces) {
      const segments = componentSegments(layout, component ?? []);
      const cached = memo.get(key);
      let result: ComponentResult | undefined;
      let located: Located | undefined;
      if (cached) {
        const move = mover(cached.segments, segments, program.entry, lines);
        const moved = {
          earlier: cached.earlier.map(move),
          plan: cached.plan.map(move),
          locked: cached.locked.map(move),
        };
        // A location outside every segment cannot be moved: check the component again.
        if (
          !moved.earlier.includes(undefined) &&
          !moved.plan.includes(undefined) &&
          !moved.locked.includes(undefined)
        ) {
          result = cached;
          located = moved as Located;
        }
      }
      if (!result || !located) {
        yield;
        result = component
          ? this.checkComponent(program, layout, component, names, segments, lock)
          : {
              segments,
              earlier: analyze(restrict(program, layout, new Set(layout.base.map((b) => b.block)))).diagnostics,
              plan: [],
              locked: [],
            };
        located = { earlier: [...result.earlier], plan: [...result.plan], locked: [...result.locked] };
      }
      used.set(key, result);
      for (const d of located.earlier) earlier.push(d);
      for (const d of located.plan) plan.push(d);
      for (const d of located.locked) locked.push(d);
    }
    // Results of components that no longer exist are dropped; the memo keeps what this text uses.
    this.memo.set(program.entry, used);
    // As `planStage`: lowering's diagnostics alone when one is an error, else the lock's comparisons too.
    if (!plan.some((d) => d.severity === "error")) {
      for (const d of locked) plan.push(d);
      if (lock && "lock" in lock)
        for (const d of lockedButUndeclared(
          program.entry,
          lock.lock,
          new Set(layout.experiments.map((s) => s.block.name?.name ?? "")),
        ))
          plan.push(d);
    }
    const diagnostics = earlier.some((d) => d.severity === "error") ? earlier : [...earlier, ...plan];
    return { entry: program.entry, program, diagnostics: unique(diagnostics).sort(compareDiagnostics) };
  }

  private checkComponent(
    program: Program,
    layout: Layout,
    component: readonly Span[],
    names: Names,
    segments: readonly Segment[],
    lock: ReadLock,
  ): ComponentResult {
    this.experimentsChecked += component.length;
    const own = component.map((s) => s.block);
    const named = this.stages(restrict(program, layout, new Set([...names.baseNamedBy(component), ...own])), lock);
    // A lock mismatch is an error, but draws on no other declaration: no second check for it.
    if (![...named.earlier, ...named.plan].some((d) => d.severity === "error")) return { segments, ...named };
    return {
      segments,
      ...this.stages(restrict(program, layout, new Set([...layout.base.map((s) => s.block), ...own])), lock),
    };
  }

  /** Analysis, lint and (when they found no error) the plan stage, as `checkProgram` chains them. */
  private stages(program: Program, lock: ReadLock): Located {
    const model = analyze(program);
    const earlier = [...model.diagnostics, ...lint(model)];
    if (earlier.some((d) => d.severity === "error")) return { earlier, plan: [], locked: [] };
    const stage = planStageOf(model, lock);
    return { earlier, plan: stage.lowered, locked: stage.compared };
  }
}

/** `program` with only the `keep` blocks in its entry file. */
function restrict(program: Program, layout: Layout, keep: ReadonlySet<Block>): Program {
  const entry = layout.entry;
  const document = { ...entry.parsed.document, blocks: entry.parsed.document.blocks.filter((b) => keep.has(b)) };
  const modules = new Map(program.modules);
  modules.set(program.entry, { ...entry, parsed: { ...entry.parsed, document } });
  return { ...program, modules };
}

const WORD = /[A-Za-z_][A-Za-z0-9_]*/g;

/** The words of each span of the entry file, and which blocks they name. */
class Names {
  private readonly words = new Map<Span, ReadonlySet<string>>();
  private readonly base = new Map<string, Span>();
  readonly experiments = new Map<string, number>();

  constructor(private readonly layout: Layout) {
    for (const s of layout.base) if (s.block.name) this.base.set(s.block.name.name, s);
    layout.experiments.forEach((s, i) => this.experiments.set(s.block.name?.name ?? "", i));
  }

  wordsOf(span: Span): ReadonlySet<string> {
    let out = this.words.get(span);
    if (!out)
      this.words.set(
        span,
        (out = new Set(this.layout.entry.parsed.text.slice(span.start, span.end).match(WORD) ?? [])),
      );
    return out;
  }

  /** The base blocks that `component` names, and those that they name, and so on; plus the unnamed ones. */
  baseNamedBy(component: readonly Span[]): Block[] {
    const found = new Set<Span>(this.layout.base.filter((s) => !s.block.name));
    const queue = [...component];
    for (let next = queue.pop(); next; next = queue.pop()) {
      for (const word of this.wordsOf(next)) {
        const s = this.base.get(word);
        if (s && !found.has(s)) {
          found.add(s);
          queue.push(s);
        }
      }
    }
    return [...found].map((s) => s.block);
  }
}

/** The entry file's segments, or undefined when the whole program must be checked (see the top). */
function layoutOf(program: Program): Layout | undefined {
  const entry = program.modules.get(program.entry);
  if (!entry) return undefined;
  const text = entry.parsed.text;
  const document = entry.parsed.document;
  const headerEnd = document.imports.reduce((end, i) => Math.max(end, i.range.end.offset), 0);
  const base: Span[] = [];
  const experiments: Span[] = [];
  const names = new Set<string>();
  let previous = headerEnd;
  for (const block of document.blocks) {
    const end = Math.max(previous, block.range.end.offset);
    const span = { start: previous, end, block };
    previous = end;
    if (block.name) {
      if (names.has(block.name.name)) return undefined;
      names.add(block.name.name);
    }
    if (block.type.name === "experiment" && block.name) experiments.push(span);
    else base.push(span);
  }
  if (experiments.length === 0) return undefined;
  const experimentNames = new Set(experiments.map((s) => s.block.name?.name));
  for (const { block } of experiments) {
    const parts = block.extends?.parts;
    if (parts?.length === 1 && !experimentNames.has(parts[0]?.name)) return undefined;
  }
  const header = { start: 0, end: headerEnd };
  const trailer = { start: previous, end: text.length };
  const hash = createHash("sha256");
  const add = (s: string) => hash.update(`${s.length}:`).update(s);
  add(program.entry);
  add(text.slice(header.start, header.end));
  for (const s of base) add(text.slice(s.start, s.end));
  add(text.slice(trailer.start, trailer.end));
  for (const [file, m] of program.modules) {
    if (file === program.entry) continue;
    add(file);
    add(m.parsed.text);
  }
  return { entry, header, trailer, base, experiments, baseHash: hash.digest("hex") };
}

/** Experiments grouped by mention: one that names another (in `extends` or anywhere) joins its component. */
function components(layout: Layout, names: Names): Span[][] {
  const spans = layout.experiments;
  const parent = spans.map((_, i) => i);
  const root = (i: number): number => {
    let r = i;
    while (parent[r] !== r) r = parent[r] ?? r;
    return r;
  };
  spans.forEach((s, i) => {
    for (const word of names.wordsOf(s)) {
      const j = names.experiments.get(word);
      if (j !== undefined && j !== i) parent[root(j)] = root(i);
    }
  });
  const groups = new Map<number, Span[]>();
  spans.forEach((s, i) => {
    const r = root(i);
    let group = groups.get(r);
    if (!group) groups.set(r, (group = []));
    group.push(s);
  });
  return [...groups.values()];
}

/** The component's texts, and what the lock says of its experiments (its plan stage reads that only). */
function componentKey(layout: Layout, component: readonly Span[], lock: ReadLock): string {
  const hash = createHash("sha256").update(layout.baseHash);
  const lockPart =
    lock === undefined
      ? "none"
      : "error" in lock
        ? `error:${lock.error}`
        : JSON.stringify([
            lock.lock.stdlib_version,
            component.map((s) => lock.lock.experiments[s.block.name?.name ?? ""] ?? null),
          ]);
  hash.update(`${lockPart.length}:`).update(lockPart);
  const text = layout.entry.parsed.text;
  for (const s of component) {
    const t = text.slice(s.start, s.end);
    hash.update(`${t.length}:`).update(t);
  }
  return hash.digest("hex");
}

/** Canonical order: two texts with the same key have segments of the same lengths in this order. */
function componentSegments(layout: Layout, component: readonly Span[]): Segment[] {
  const plain = (s: Segment): Segment => ({ start: s.start, end: s.end });
  return [plain(layout.header), ...layout.base.map(plain), plain(layout.trailer), ...component.map(plain)];
}

/**
 * Moves diagnostics located in `entry` from the old segments to the new ones (lines and columns
 * from the new text); undefined for one with a location in no segment.
 */
function mover(
  old: readonly Segment[],
  now: readonly Segment[],
  entry: string,
  lines: LineIndex,
): (d: Diagnostic) => Diagnostic | undefined {
  const order = old
    .map((s, i) => ({ start: s.start, end: s.end, shift: (now[i]?.start ?? s.start) - s.start }))
    .filter((s) => s.end > s.start);
  order.sort((a, b) => a.start - b.start);
  const shift = (offset: number): number | undefined => {
    let lo = 0;
    let hi = order.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const s = order[mid];
      if (!s) return undefined;
      if (offset < s.start) hi = mid - 1;
      else if (offset >= s.end) lo = mid + 1;
      else return offset + s.shift;
    }
    return undefined;
  };
  const range = (r: Range): Range | undefined => {
    const start = shift(r.start.offset);
    // An end is exclusive: it moves with the last character it covers.
    const end = r.end.offset > r.start.offset ? shift(r.end.offset - 1) : start;
    if (start === undefined || end === undefined) return undefined;
    return lines.range(start, r.end.offset > r.start.offset ? end + 1 : start);
  };
  return (d) => {
    const at = d.file === entry ? range(d.range) : d.range;
    if (!at) return undefined;
    let related = d.related;
    if (related) {
      const moved = related.map((r) => {
        const where = r.file === entry ? range(r.range) : r.range;
        return where ? { ...r, range: where } : undefined;
      });
      if (moved.includes(undefined)) return undefined;
      related = moved as NonNullable<Diagnostic["related"]>;
    }
    return { ...d, range: at, ...(related ? { related } : {}) };
  };
}

function unique(diagnostics: readonly Diagnostic[]): Diagnostic[] {
  const seen = new Set<string>();
  return diagnostics.filter((d) => {
    const key = `${d.file}\0${d.range.start.offset}\0${d.range.end.offset}\0${d.code}\0${d.message}`;
    return seen.has(key) ? false : (seen.add(key), true);
  });
}
