// The findmax task family: a task id (with the env's version) picks one function of the env's
// `functions`, one seeded bug of that function and one way of writing it (names, loop form),
// and draws visible and hidden tests. Task t takes function t mod F, then cycles through that
// function's bugs, then through its ways of writing them in an order seeded by the version, so
// neighbouring ids never share a (function, bug) and a (function, bug, style) repeats only after
// F x bugs x styles ids (thousands); the tests are drawn from a PRNG seeded by (version, id), so
// two ids never give the same problem (checked over 2,000 ids by the tests).
// Visible tests are small arrays (at least one fails on the buggy code); hidden tests, which
// decide the outcome, use inputs unlike them (long arrays, large or all-negative values, empty
// arrays where the function defines them, duplicates, the answer at either end), and at least one
// of them fails on the buggy code. Task 0 is the findMax example of seed 003 (best = 0; visible
// tests [3, 1, 2] -> 3, [-2, -5, -8] -> -2, [0] -> 0) whenever find_max is the first function.
import { keyWords, seededSfc32, shuffled, type Sfc32 } from "../../contracts/random.js";

export const FUNCTION_IDS = ["find_max", "find_min", "sum", "index_of", "count_if", "reverse"] as const;
export type FunctionId = (typeof FUNCTION_IDS)[number];

/** What a test expects: an integer or an array of integers. */
export type Expected = number | readonly number[];

export interface TestCase {
  /** The arguments of the call (arrays of integers and integers). */
  readonly args: readonly (number | readonly number[])[];
  readonly expected: Expected;
}

export interface Task {
  readonly id: number;
  readonly fn: FunctionId;
  /** The JavaScript name of the function (findMax, ...). */
  readonly name: string;
  /** The call shape shown to the model, e.g. findMax(arr). */
  readonly signature: string;
  /** What the function must do. */
  readonly description: string;
  /** The seeded bug's id (zero_init, skip_last, ...). */
  readonly bug: string;
  /** The code the episode starts from, and the same code with the bug fixed. */
  readonly buggy: string;
  readonly fixed: string;
  readonly visible: readonly TestCase[];
  readonly hidden: readonly TestCase[];
}

export interface TaskParams {
  readonly version: string;
  readonly functions: readonly FunctionId[];
  readonly visible_tests: number;
  readonly hidden_tests: number;
}

// --- deterministic randomness ---------------------------------------------------------------

class Rng {
  private readonly generator: Sfc32;

  constructor(key: string) {
    this.generator = seededSfc32(keyWords(key));
  }

  /** An integer in [lo, hi]. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.generator.next() * (hi - lo + 1));
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(0, items.length - 1)]!;
  }

  ints(n: number, lo: number, hi: number): number[] {
    return Array.from({ length: n }, () => this.int(lo, hi));
  }

  shuffle<T>(items: readonly T[]): T[] {
    return shuffled(items, () => this.generator.next());
  }
}

// --- the ways of writing the code -------------------------------------------------------------

type Loop = "index" | "of" | "while";

interface Style {
  readonly loop: Loop;
  /** The array parameter. */
  readonly a: string;
  /** The accumulator / result variable. */
  readonly v: string;
  /** The second parameter (indexOf's target, countIf's limit) or reverse's temporary; "" if none. */
  readonly x: string;
  /** The element variable of a for-of loop; "" for the other loops. */
  readonly e: string;
}

const ARRAY_NAMES = ["arr", "nums", "values", "xs"];
const ELEMENT_NAMES = ["x", "v", "n", "item"];

interface Bug {
  readonly id: string;
  readonly loops: readonly Loop[];
  /** The source, with the bug (buggy = true) or without it. */
  readonly code: (s: Style, buggy: boolean) => string;
}

interface FunctionSpec {
  readonly name: string;
  readonly signature: string;
  readonly description: string;
  /** Names of the result variable. */
  readonly results: readonly string[];
  /** Names of the second parameter (indexOf, countIf) or of reverse's temporary. */
  readonly seconds?: readonly string[];
  readonly bugs: readonly Bug[];
  readonly reference: (args: readonly (number | readonly number[])[]) => Expected;
  /** Small inputs for visible tests; large or unusual inputs for hidden tests, by category. */
  readonly small: (r: Rng) => TestArgs;
  readonly hidden: readonly ((r: Rng) => TestArgs)[];
}

type TestArgs = (number | number[])[];

const lines = (...ls: string[]) => `${ls.join("\n")}\n`;

/** findMax / findMin: one comparison loop over the array. */
function extremum(name: string, better: ">" | "<", worse: ">" | "<"): readonly Bug[] {
  const body = (s: Style, init: string, cmp: string, bound: string): string => {
    const { a, v } = s;
    const head = `function ${name}(${a}) {`;
    if (s.loop === "of")
      return lines(head, `  let ${v} = ${init};`, `  for (const ${s.e} of ${a}) {`, `    if (${s.e} ${cmp} ${v}) {`, `      ${v} = ${s.e};`, "    }", "  }", `  return ${v};`, "}");
    if (s.loop === "while")
      return lines(head, `  let ${v} = ${init};`, "  let i = 0;", `  while (i < ${bound}) {`, `    if (${a}[i] ${cmp} ${v}) {`, `      ${v} = ${a}[i];`, "    }", "    i++;", "  }", `  return ${v};`, "}");
    return lines(head, `  let ${v} = ${init};`, `  for (let i = 0; i < ${bound}; i++) {`, `    if (${a}[i] ${cmp} ${v}) {`, `      ${v} = ${a}[i];`, "    }", "  }", `  return ${v};`, "}");
  };
  return [
    { id: "zero_init", loops: ["index", "of", "while"], code: (s, b) => body(s, b ? "0" : `${s.a}[0]`, better, `${s.a}.length`) },
    { id: "skip_last", loops: ["index", "while"], code: (s, b) => body(s, `${s.a}[0]`, better, b ? `${s.a}.length - 1` : `${s.a}.length`) },
    { id: "wrong_compare", loops: ["index", "of", "while"], code: (s, b) => body(s, `${s.a}[0]`, b ? worse : better, `${s.a}.length`) },
  ];
}

/** A loop that adds (sum) or counts (countIf) over arr[start..bound). */
function accumulate(
  head: (s: Style) => string,
  init: (buggy: boolean) => string,
  stmt: (s: Style, elem: string) => string[],
  s: Style,
  b: { init?: boolean; start?: boolean; bound?: boolean },
): string {
  const { a, v } = s;
  const start = b.start ? "1" : "0";
  const bound = b.bound ? `${a}.length - 1` : `${a}.length`;
  const indent = (ls: string[], n: number) => ls.map((l) => " ".repeat(n) + l);
  if (s.loop === "of") return lines(head(s), `  let ${v} = ${init(b.init ?? false)};`, `  for (const ${s.e} of ${a}) {`, ...indent(stmt(s, s.e), 4), "  }", `  return ${v};`, "}");
  if (s.loop === "while")
    return lines(head(s), `  let ${v} = ${init(b.init ?? false)};`, `  let i = ${start};`, `  while (i < ${bound}) {`, ...indent(stmt(s, `${a}[i]`), 4), "    i++;", "  }", `  return ${v};`, "}");
  return lines(head(s), `  let ${v} = ${init(b.init ?? false)};`, `  for (let i = ${start}; i < ${bound}; i++) {`, ...indent(stmt(s, `${a}[i]`), 4), "  }", `  return ${v};`, "}");
}

const sumHead = (s: Style) => `function sum(${s.a}) {`;
const sumStmt = (s: Style, e: string) => [`${s.v} += ${e};`];
const countHead = (s: Style) => `function countIf(${s.a}, ${s.x}) {`;
const countStmt = (op: string) => (s: Style, e: string) => [`if (${e} ${op} ${s.x}) {`, `  ${s.v}++;`, "}"];

function indexOfCode(s: Style, bug: "last_match" | "off_by_one" | "not_found_zero" | null): string {
  const { a, x, v } = s;
  const head = `function indexOf(${a}, ${x}) {`;
  const loopOpen = s.loop === "while" ? ["  let i = 0;", `  while (i < ${a}.length) {`] : [`  for (let i = 0; i < ${a}.length; i++) {`];
  const loopClose = s.loop === "while" ? ["    i++;", "  }"] : ["  }"];
  if (bug === "last_match")
    return lines(head, `  let ${v} = -1;`, ...loopOpen, `    if (${a}[i] === ${x}) {`, `      ${v} = i;`, "    }", ...loopClose, `  return ${v};`, "}");
  const found = bug === "off_by_one" ? "i + 1" : "i";
  const missing = bug === "not_found_zero" ? "0" : "-1";
  return lines(head, ...loopOpen, `    if (${a}[i] === ${x}) {`, `      return ${found};`, "    }", ...loopClose, `  return ${missing};`, "}");
}

function lastMatchFixed(s: Style): string {
  const { a, x, v } = s;
  const head = `function indexOf(${a}, ${x}) {`;
  const loopOpen = s.loop === "while" ? ["  let i = 0;", `  while (i < ${a}.length) {`] : [`  for (let i = 0; i < ${a}.length; i++) {`];
  const loopClose = s.loop === "while" ? ["    i++;", "  }"] : ["  }"];
  return lines(head, `  let ${v} = -1;`, ...loopOpen, `    if (${a}[i] === ${x}) {`, `      return i;`, "    }", ...loopClose, `  return ${v};`, "}");
}

function reverseSwap(s: Style, buggy: boolean): string {
  const { a, v, x: tmp } = s;
  const cond = buggy ? "i < j - 1" : "i < j";
  const swap = [`    const ${tmp} = ${v}[i];`, `    ${v}[i] = ${v}[j];`, `    ${v}[j] = ${tmp};`];
  if (s.loop === "while")
    return lines(`function reverse(${a}) {`, `  const ${v} = ${a}.slice();`, "  let i = 0;", `  let j = ${v}.length - 1;`, `  while (${cond}) {`, ...swap, "    i++;", "    j--;", "  }", `  return ${v};`, "}");
  return lines(`function reverse(${a}) {`, `  const ${v} = ${a}.slice();`, `  for (let i = 0, j = ${v}.length - 1; ${cond}; i++, j--) {`, ...swap, "  }", `  return ${v};`, "}");
}

function reversePush(s: Style, from: string, stop: string): string {
  const { a, v } = s;
  if (s.loop === "while") return lines(`function reverse(${a}) {`, `  const ${v} = [];`, `  let i = ${from};`, `  while (${stop}) {`, `    ${v}.push(${a}[i]);`, "    i--;", "  }", `  return ${v};`, "}");
  return lines(`function reverse(${a}) {`, `  const ${v} = [];`, `  for (let i = ${from}; ${stop}; i--) {`, `    ${v}.push(${a}[i]);`, "  }", `  return ${v};`, "}");
}

const BIG = 1_000_000;
const HUGE = 1_000_000_000;
const len = (r: Rng, lo = 6, hi = 12) => r.int(lo, hi);
/** A long array of distinct-ish large values with its largest (or smallest) value placed at `at`. */
function withExtremeAt(r: Rng, largest: boolean, at: "start" | "end"): number[] {
  const xs = r.ints(len(r), -BIG, BIG);
  const extreme = largest ? Math.max(...xs) + r.int(1, 1000) : Math.min(...xs) - r.int(1, 1000);
  if (at === "start") xs[0] = extreme;
  else xs[xs.length - 1] = extreme;
  return xs;
}
function withDuplicatesOf(r: Rng, largest: boolean): number[] {
  const xs = r.ints(len(r), -BIG, BIG);
  const extreme = largest ? Math.max(...xs) : Math.min(...xs);
  xs[r.int(0, xs.length - 1)] = extreme;
  xs[r.int(0, xs.length - 1)] = extreme;
  return xs;
}

const SPECS: Readonly<Record<FunctionId, FunctionSpec>> = {
  find_max: {
    name: "findMax",
    signature: "findMax(arr)",
    description: "return the largest element of a non-empty array of integers",
    results: ["best", "largest", "top", "result"],
    bugs: extremum("findMax", ">", "<"),
    reference: ([a]) => Math.max(...(a as number[])),
    small: (r) => [r.ints(r.int(1, 4), -9, 9)],
    hidden: [
      (r) => [r.ints(len(r), -BIG, -1)],
      (r) => [withExtremeAt(r, true, "end")],
      (r) => [r.ints(len(r), -HUGE, HUGE)],
      (r) => [[r.int(-HUGE, -BIG)]],
      (r) => [withDuplicatesOf(r, true)],
      (r) => [withExtremeAt(r, true, "start")],
    ],
  },
  find_min: {
    name: "findMin",
    signature: "findMin(arr)",
    description: "return the smallest element of a non-empty array of integers",
    results: ["best", "smallest", "low", "result"],
    bugs: extremum("findMin", "<", ">"),
    reference: ([a]) => Math.min(...(a as number[])),
    small: (r) => [r.ints(r.int(1, 4), -9, 9)],
    hidden: [
      (r) => [r.ints(len(r), 1, BIG)],
      (r) => [withExtremeAt(r, false, "end")],
      (r) => [r.ints(len(r), -HUGE, HUGE)],
      (r) => [[r.int(BIG, HUGE)]],
      (r) => [withDuplicatesOf(r, false)],
      (r) => [withExtremeAt(r, false, "start")],
    ],
  },
  sum: {
    name: "sum",
    signature: "sum(arr)",
    description: "return the sum of an array of integers (0 for an empty array)",
    results: ["total", "acc", "s", "result"],
    bugs: [
      { id: "start_one", loops: ["index", "of", "while"], code: (s, b) => accumulate(sumHead, (bb) => (bb ? "1" : "0"), sumStmt, s, { init: b }) },
      { id: "skip_first", loops: ["index", "while"], code: (s, b) => accumulate(sumHead, () => "0", sumStmt, s, { start: b }) },
      { id: "skip_last", loops: ["index", "while"], code: (s, b) => accumulate(sumHead, () => "0", sumStmt, s, { bound: b }) },
    ],
    reference: ([a]) => (a as number[]).reduce((t, x) => t + x, 0),
    small: (r) => [r.ints(r.int(1, 4), -9, 9)],
    hidden: [
      () => [[]],
      (r) => [r.ints(len(r, 10, 20), -BIG, BIG)],
      (r) => [r.ints(len(r), -HUGE, -1)],
      (r) => [[r.int(BIG, HUGE)]],
      (r) => [[r.int(BIG, HUGE), ...r.ints(len(r), -5, 5), r.int(-HUGE, -BIG)]],
    ],
  },
  index_of: {
    name: "indexOf",
    signature: "indexOf(arr, target)",
    description: "return the index of the first element of arr equal to target, or -1 when there is none",
    results: ["found", "pos", "index", "result"],
    seconds: ["target", "x", "value", "needle"],
    bugs: [
      { id: "last_match", loops: ["index", "while"], code: (s, b) => (b ? indexOfCode(s, "last_match") : lastMatchFixed(s)) },
      { id: "off_by_one", loops: ["index", "while"], code: (s, b) => indexOfCode(s, b ? "off_by_one" : null) },
      { id: "not_found_zero", loops: ["index", "while"], code: (s, b) => indexOfCode(s, b ? "not_found_zero" : null) },
    ],
    reference: ([a, t]) => (a as number[]).indexOf(t as number),
    small: (r) => {
      const xs = r.ints(r.int(2, 5), 0, 9);
      return [xs, r.int(0, 2) === 0 ? r.int(0, 9) : r.pick(xs)];
    },
    hidden: [
      (r) => [[], r.int(-BIG, BIG)],
      (r) => {
        const xs = r.ints(len(r), -BIG, BIG);
        const t = r.pick(xs);
        xs[xs.length - 1] = t;
        return [xs, t];
      },
      (r) => {
        const xs = r.ints(len(r), 1, BIG);
        return [xs, -r.int(1, BIG)];
      },
      (r) => {
        const xs = r.ints(len(r), -HUGE, HUGE);
        const t = xs[r.int(0, 2)]!;
        xs[xs.length - 1 - r.int(0, 2)] = t;
        return [xs, t];
      },
      (r) => {
        const xs = r.ints(len(r), -50, -1);
        return [xs, xs[0]!];
      },
    ],
  },
  count_if: {
    name: "countIf",
    signature: "countIf(arr, limit)",
    description: "return how many elements of arr are strictly less than limit",
    results: ["count", "hits", "n", "result"],
    seconds: ["limit", "bound", "threshold", "cap"],
    bugs: [
      { id: "less_or_equal", loops: ["index", "of", "while"], code: (s, b) => accumulate(countHead, () => "0", countStmt(b ? "<=" : "<"), s, {}) },
      { id: "skip_first", loops: ["index", "while"], code: (s, b) => accumulate(countHead, () => "0", countStmt("<"), s, { start: b }) },
      { id: "skip_last", loops: ["index", "while"], code: (s, b) => accumulate(countHead, () => "0", countStmt("<"), s, { bound: b }) },
    ],
    reference: ([a, lim]) => (a as number[]).filter((x) => x < (lim as number)).length,
    small: (r) => [r.ints(r.int(2, 5), 0, 9), r.int(0, 9)],
    hidden: [
      (r) => [[], r.int(-BIG, BIG)],
      (r) => {
        const lim = r.int(-BIG, BIG);
        return [Array.from({ length: len(r) }, () => (r.int(0, 1) === 0 ? lim : lim + r.int(-BIG, BIG))), lim];
      },
      (r) => [r.ints(len(r), -HUGE, HUGE), HUGE + 1],
      (r) => [r.ints(len(r), -BIG, -1), -BIG],
      (r) => {
        const xs = r.ints(len(r), -100, 100);
        return [xs, xs[0]! + 1];
      },
      (r) => {
        const xs = r.ints(len(r), -100, 100);
        return [xs, xs[xs.length - 1]! + 1];
      },
    ],
  },
  reverse: {
    name: "reverse",
    signature: "reverse(arr)",
    description: "return a new array with the elements of arr in reverse order",
    results: ["out", "result", "copy", "reversed"],
    seconds: ["tmp", "temp", "swap", "t"],
    bugs: [
      { id: "skip_middle", loops: ["index", "while"], code: (s, b) => reverseSwap(s, b) },
      { id: "drop_first", loops: ["index", "while"], code: (s, b) => reversePush(s, `${s.a}.length - 1`, b ? "i > 0" : "i >= 0") },
      { id: "drop_last", loops: ["index", "while"], code: (s, b) => reversePush(s, b ? `${s.a}.length - 2` : `${s.a}.length - 1`, "i >= 0") },
    ],
    reference: ([a]) => [...(a as number[])].reverse(),
    small: (r) => [r.ints(r.int(1, 5), 0, 9)],
    hidden: [
      () => [[]],
      (r) => [r.ints(2 * r.int(4, 8), -BIG, BIG)],
      (r) => [r.ints(2 * r.int(3, 7) + 1, -HUGE, HUGE)],
      (r) => [[r.int(-HUGE, HUGE)]],
      (r) => [r.ints(len(r), -BIG, -1)],
    ],
  },
};

/** The spec of a function (name, signature, description). */
export function functionSpec(fn: FunctionId): Pick<FunctionSpec, "name" | "signature" | "description"> {
  return SPECS[fn];
}

/** Every way of writing `bug` of `fn`: loop form, then names, all distinct. */
function styles(fn: FunctionId, bug: Bug): Style[] {
  const spec = SPECS[fn];
  const out: Style[] = [];
  for (const loop of bug.loops)
    for (const a of ARRAY_NAMES)
      for (const v of spec.results)
        for (const x of spec.seconds ?? [""])
          for (const e of loop === "of" ? ELEMENT_NAMES : [""]) {
            const names = [a, v, x, e].filter((n) => n !== "");
            if (new Set(names).size === names.length) out.push({ loop, a, v, x, e });
          }
  return out;
}

function permutation(n: number, key: string): number[] {
  const r = new Rng(key);
  return r.shuffle(Array.from({ length: n }, (_, i) => i));
}

const SEED_STYLE: Style = { loop: "index", a: "arr", v: "best", x: "", e: "" };
const SEED_VISIBLE: readonly number[][] = [[3, 1, 2], [-2, -5, -8], [0]];

// --- running our own generated sources (trusted) to check the tests -------------------------

const compiled = new Map<string, (...args: unknown[]) => unknown>();
function compile(source: string, name: string): (...args: unknown[]) => unknown {
  let f = compiled.get(source);
  if (!f) {
    // Our own generated code (never the model's): evaluated here only to choose tests that the
    // seeded bug fails.
    f = new Function(`"use strict";\n${source}\nreturn ${name};`)() as (...args: unknown[]) => unknown;
    if (compiled.size > 2000) compiled.clear();
    compiled.set(source, f);
  }
  return f;
}

const clone = (args: readonly (number | readonly number[])[]) => args.map((x) => (Array.isArray(x) ? [...x] : x));
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
const key = (args: readonly unknown[]) => JSON.stringify(args);

function fails(buggy: (...a: unknown[]) => unknown, spec: FunctionSpec, args: TestArgs): boolean {
  let got: unknown;
  try {
    got = buggy(...clone(args));
  } catch {
    return true;
  }
  return !same(got, spec.reference(args));
}

function makeCase(spec: FunctionSpec, args: TestArgs): TestCase {
  return { args, expected: spec.reference(args) };
}

/** Visible tests: small inputs, at least one of which the bug fails. */
function visibleTests(r: Rng, spec: FunctionSpec, buggy: (...a: unknown[]) => unknown, n: number): TestArgs[] {
  const out: TestArgs[] = [];
  const seen = new Set<string>();
  for (let tries = 0; out.length < n && tries < 200; tries++) {
    const args = spec.small(r);
    if (seen.has(key(args))) continue;
    seen.add(key(args));
    out.push(args);
  }
  if (!out.some((a) => fails(buggy, spec, a))) {
    for (let tries = 0; tries < 2000; tries++) {
      const args = spec.small(r);
      if (seen.has(key(args)) || !fails(buggy, spec, args)) continue;
      out[r.int(0, out.length - 1)] = args;
      break;
    }
  }
  return out;
}

/** Hidden tests: one input per category in turn (shuffled), at least one of which the bug fails. */
function hiddenTests(r: Rng, spec: FunctionSpec, buggy: (...a: unknown[]) => unknown, n: number, visible: ReadonlySet<string>): TestArgs[] {
  const order = r.shuffle(spec.hidden.map((_, i) => i));
  const out: TestArgs[] = [];
  const seen = new Set<string>(visible);
  for (let tries = 0; out.length < n && tries < 50 * n; tries++) {
    const args = spec.hidden[order[tries % order.length]!]!(r);
    if (seen.has(key(args))) continue;
    seen.add(key(args));
    out.push(args);
  }
  if (!out.some((a) => fails(buggy, spec, a))) {
    for (let tries = 0; tries < 5000; tries++) {
      const args = spec.hidden[order[tries % order.length]!]!(r);
      if (seen.has(key(args)) || !fails(buggy, spec, args)) continue;
      out[r.int(0, out.length - 1)] = args;
      return out;
    }
    throw new Error(`findmax: no hidden input fails the seeded bug of ${spec.name}`);
  }
  return out;
}

// --- tasks ------------------------------------------------------------------------------------

/** The problem of task `id`: function, bug, code and tests, from the id and the env's version. */
export function generateTask(env: TaskParams, id: number): Task {
  if (env.functions.length === 0) throw new Error("findmax: the env lists no functions");
  const fn = env.functions[id % env.functions.length]!;
  const spec = SPECS[fn];
  const u = Math.floor(id / env.functions.length);
  const bug = spec.bugs[u % spec.bugs.length]!;
  const round = Math.floor(u / spec.bugs.length);
  const seedExample = fn === "find_max" && bug.id === "zero_init" && round === 0;
  const all = styles(fn, bug);
  const style = seedExample ? SEED_STYLE : all[permutation(all.length, `arl/findmax/styles:${env.version}:${fn}:${bug.id}`)[round % all.length]!]!;
  const buggy = bug.code(style, true);
  const fixed = bug.code(style, false);
  const r = new Rng(`arl/findmax/tests:${env.version}:${id}`);
  const buggyFn = compile(buggy, spec.name);

  let visibleArgs: TestArgs[];
  if (seedExample) {
    // The seed's three tests, the failing one first when fewer are asked for; then small ones.
    const wanted = env.visible_tests;
    visibleArgs = wanted >= 3 ? SEED_VISIBLE.map((a) => [[...a]]) : wanted === 2 ? [[[3, 1, 2]], [[-2, -5, -8]]] : [[[-2, -5, -8]]];
    const seen = new Set(visibleArgs.map(key));
    for (let tries = 0; visibleArgs.length < wanted && tries < 500; tries++) {
      const args = spec.small(r);
      if (seen.has(key(args))) continue;
      seen.add(key(args));
      visibleArgs.push(args);
    }
  } else visibleArgs = visibleTests(r, spec, buggyFn, env.visible_tests);
  const hiddenArgs = hiddenTests(r, spec, buggyFn, env.hidden_tests, new Set(visibleArgs.map(key)));
  return {
    id,
    fn,
    name: spec.name,
    signature: spec.signature,
    description: spec.description,
    bug: bug.id,
    buggy,
    fixed,
    visible: visibleArgs.map((a) => makeCase(spec, a)),
    hidden: hiddenArgs.map((a) => makeCase(spec, a)),
  };
}

/** Every source the family can show for these functions (buggy and fixed), for the vocabulary. */
export function allSources(functions: readonly FunctionId[]): string[] {
  const out: string[] = [];
  for (const fn of [...new Set(functions)].sort()) {
    for (const bug of SPECS[fn].bugs) {
      for (const s of styles(fn, bug)) {
        out.push(bug.code(s, true), bug.code(s, false));
      }
    }
  }
  return out;
}
