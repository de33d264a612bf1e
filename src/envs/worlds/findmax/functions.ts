// The findmax functions: for each one its name, signature and task description, its seeded bugs
// (each a code generator that writes the function with or without the bug, in a given style:
// loop form and names), its reference implementation, and the generators of its visible
// (small) and hidden (unusual) test inputs. Data and code generators only; tasks.ts picks a
// function, bug and style per task id and draws the tests.

import { at, last } from "../../../contracts/checked.js";

export const FUNCTION_IDS = ["find_max", "find_min", "sum", "index_of", "count_if", "reverse"] as const;
export type FunctionId = (typeof FUNCTION_IDS)[number];

/** What a test expects: an integer or an array of integers. */
export type Expected = number | readonly number[];

/** The seeded draws the input generators make (tasks.ts gives them its per-task generator). */
export interface Draws {
  /** An integer in [lo, hi]. */
  int(lo: number, hi: number): number;
  pick<T>(items: readonly T[]): T;
  ints(n: number, lo: number, hi: number): number[];
}

type Loop = "index" | "of" | "while";

export interface Style {
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

export const ARRAY_NAMES = ["arr", "nums", "values", "xs"];
export const ELEMENT_NAMES = ["x", "v", "n", "item"];

export interface Bug {
  readonly id: string;
  readonly loops: readonly Loop[];
  /** The source, with the bug (buggy = true) or without it. */
  readonly code: (s: Style, buggy: boolean) => string;
}

export interface FunctionSpec {
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
  readonly small: (r: Draws) => TestArgs;
  readonly hidden: readonly ((r: Draws) => TestArgs)[];
}

export type TestArgs = (number | number[])[];

const lines = (...ls: string[]) => `${ls.join("\n")}\n`;

/** findMax / findMin: one comparison loop over the array. */
function extremum(name: string, better: ">" | "<", worse: ">" | "<"): readonly Bug[] {
  const body = (s: Style, init: string, cmp: string, bound: string): string => {
    const { a, v } = s;
    const head = `function ${name}(${a}) {`;
    if (s.loop === "of")
      return lines(
        head,
        `  let ${v} = ${init};`,
        `  for (const ${s.e} of ${a}) {`,
        `    if (${s.e} ${cmp} ${v}) {`,
        `      ${v} = ${s.e};`,
        "    }",
        "  }",
        `  return ${v};`,
        "}",
      );
    if (s.loop === "while")
      return lines(
        head,
        `  let ${v} = ${init};`,
        "  let i = 0;",
        `  while (i < ${bound}) {`,
        `    if (${a}[i] ${cmp} ${v}) {`,
        `      ${v} = ${a}[i];`,
        "    }",
        "    i++;",
        "  }",
        `  return ${v};`,
        "}",
      );
    return lines(
      head,
      `  let ${v} = ${init};`,
      `  for (let i = 0; i < ${bound}; i++) {`,
      `    if (${a}[i] ${cmp} ${v}) {`,
      `      ${v} = ${a}[i];`,
      "    }",
      "  }",
      `  return ${v};`,
      "}",
    );
  };
  return [
    {
      id: "zero_init",
      loops: ["index", "of", "while"],
      code: (s, b) => body(s, b ? "0" : `${s.a}[0]`, better, `${s.a}.length`),
    },
    {
      id: "skip_last",
      loops: ["index", "while"],
      code: (s, b) => body(s, `${s.a}[0]`, better, b ? `${s.a}.length - 1` : `${s.a}.length`),
    },
    {
      id: "wrong_compare",
      loops: ["index", "of", "while"],
      code: (s, b) => body(s, `${s.a}[0]`, b ? worse : better, `${s.a}.length`),
    },
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
  if (s.loop === "of")
    return lines(
      head(s),
      `  let ${v} = ${init(b.init ?? false)};`,
      `  for (const ${s.e} of ${a}) {`,
      ...indent(stmt(s, s.e), 4),
      "  }",
      `  return ${v};`,
      "}",
    );
  if (s.loop === "while")
    return lines(
      head(s),
      `  let ${v} = ${init(b.init ?? false)};`,
      `  let i = ${start};`,
      `  while (i < ${bound}) {`,
      ...indent(stmt(s, `${a}[i]`), 4),
      "    i++;",
      "  }",
      `  return ${v};`,
      "}",
    );
  return lines(
    head(s),
    `  let ${v} = ${init(b.init ?? false)};`,
    `  for (let i = ${start}; i < ${bound}; i++) {`,
    ...indent(stmt(s, `${a}[i]`), 4),
    "  }",
    `  return ${v};`,
    "}",
  );
}

const sumHead = (s: Style) => `function sum(${s.a}) {`;
const sumStmt = (s: Style, e: string) => [`${s.v} += ${e};`];
const countHead = (s: Style) => `function countIf(${s.a}, ${s.x}) {`;
const countStmt = (op: string) => (s: Style, e: string) => [`if (${e} ${op} ${s.x}) {`, `  ${s.v}++;`, "}"];

function indexOfCode(s: Style, bug: "last_match" | "off_by_one" | "not_found_zero" | null): string {
  const { a, x, v } = s;
  const head = `function indexOf(${a}, ${x}) {`;
  const loopOpen =
    s.loop === "while"
      ? ["  let i = 0;", `  while (i < ${a}.length) {`]
      : [`  for (let i = 0; i < ${a}.length; i++) {`];
  const loopClose = s.loop === "while" ? ["    i++;", "  }"] : ["  }"];
  if (bug === "last_match")
    return lines(
      head,
      `  let ${v} = -1;`,
      ...loopOpen,
      `    if (${a}[i] === ${x}) {`,
      `      ${v} = i;`,
      "    }",
      ...loopClose,
      `  return ${v};`,
      "}",
    );
  const found = bug === "off_by_one" ? "i + 1" : "i";
  const missing = bug === "not_found_zero" ? "0" : "-1";
  return lines(
    head,
    ...loopOpen,
    `    if (${a}[i] === ${x}) {`,
    `      return ${found};`,
    "    }",
    ...loopClose,
    `  return ${missing};`,
    "}",
  );
}

function lastMatchFixed(s: Style): string {
  const { a, x, v } = s;
  const head = `function indexOf(${a}, ${x}) {`;
  const loopOpen =
    s.loop === "while"
      ? ["  let i = 0;", `  while (i < ${a}.length) {`]
      : [`  for (let i = 0; i < ${a}.length; i++) {`];
  const loopClose = s.loop === "while" ? ["    i++;", "  }"] : ["  }"];
  return lines(
    head,
    `  let ${v} = -1;`,
    ...loopOpen,
    `    if (${a}[i] === ${x}) {`,
    `      return i;`,
    "    }",
    ...loopClose,
    `  return ${v};`,
    "}",
  );
}

function reverseSwap(s: Style, buggy: boolean): string {
  const { a, v, x: tmp } = s;
  const cond = buggy ? "i < j - 1" : "i < j";
  const swap = [`    const ${tmp} = ${v}[i];`, `    ${v}[i] = ${v}[j];`, `    ${v}[j] = ${tmp};`];
  if (s.loop === "while")
    return lines(
      `function reverse(${a}) {`,
      `  const ${v} = ${a}.slice();`,
      "  let i = 0;",
      `  let j = ${v}.length - 1;`,
      `  while (${cond}) {`,
      ...swap,
      "    i++;",
      "    j--;",
      "  }",
      `  return ${v};`,
      "}",
    );
  return lines(
    `function reverse(${a}) {`,
    `  const ${v} = ${a}.slice();`,
    `  for (let i = 0, j = ${v}.length - 1; ${cond}; i++, j--) {`,
    ...swap,
    "  }",
    `  return ${v};`,
    "}",
  );
}

function reversePush(s: Style, from: string, stop: string): string {
  const { a, v } = s;
  if (s.loop === "while")
    return lines(
      `function reverse(${a}) {`,
      `  const ${v} = [];`,
      `  let i = ${from};`,
      `  while (${stop}) {`,
      `    ${v}.push(${a}[i]);`,
      "    i--;",
      "  }",
      `  return ${v};`,
      "}",
    );
  return lines(
    `function reverse(${a}) {`,
    `  const ${v} = [];`,
    `  for (let i = ${from}; ${stop}; i--) {`,
    `    ${v}.push(${a}[i]);`,
    "  }",
    `  return ${v};`,
    "}",
  );
}

const BIG = 1_000_000;
const HUGE = 1_000_000_000;
const len = (r: Draws, lo = 6, hi = 12) => r.int(lo, hi);
/** A long array of distinct-ish large values with its largest (or smallest) value placed at `at`. */
function withExtremeAt(r: Draws, largest: boolean, at: "start" | "end"): number[] {
  const xs = r.ints(len(r), -BIG, BIG);
  const extreme = largest ? Math.max(...xs) + r.int(1, 1000) : Math.min(...xs) - r.int(1, 1000);
  if (at === "start") xs[0] = extreme;
  else xs[xs.length - 1] = extreme;
  return xs;
}
function withDuplicatesOf(r: Draws, largest: boolean): number[] {
  const xs = r.ints(len(r), -BIG, BIG);
  const extreme = largest ? Math.max(...xs) : Math.min(...xs);
  xs[r.int(0, xs.length - 1)] = extreme;
  xs[r.int(0, xs.length - 1)] = extreme;
  return xs;
}

export const SPECS: Readonly<Record<FunctionId, FunctionSpec>> = {
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
      {
        id: "start_one",
        loops: ["index", "of", "while"],
        code: (s, b) => accumulate(sumHead, (bb) => (bb ? "1" : "0"), sumStmt, s, { init: b }),
      },
      {
        id: "skip_first",
        loops: ["index", "while"],
        code: (s, b) => accumulate(sumHead, () => "0", sumStmt, s, { start: b }),
      },
      {
        id: "skip_last",
        loops: ["index", "while"],
        code: (s, b) => accumulate(sumHead, () => "0", sumStmt, s, { bound: b }),
      },
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
      {
        id: "last_match",
        loops: ["index", "while"],
        code: (s, b) => (b ? indexOfCode(s, "last_match") : lastMatchFixed(s)),
      },
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
        const t = at(xs, r.int(0, 2));
        xs[xs.length - 1 - r.int(0, 2)] = t;
        return [xs, t];
      },
      (r) => {
        const xs = r.ints(len(r), -50, -1);
        return [xs, at(xs, 0)];
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
      {
        id: "less_or_equal",
        loops: ["index", "of", "while"],
        code: (s, b) => accumulate(countHead, () => "0", countStmt(b ? "<=" : "<"), s, {}),
      },
      {
        id: "skip_first",
        loops: ["index", "while"],
        code: (s, b) => accumulate(countHead, () => "0", countStmt("<"), s, { start: b }),
      },
      {
        id: "skip_last",
        loops: ["index", "while"],
        code: (s, b) => accumulate(countHead, () => "0", countStmt("<"), s, { bound: b }),
      },
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
        return [xs, at(xs, 0) + 1];
      },
      (r) => {
        const xs = r.ints(len(r), -100, 100);
        return [xs, last(xs) + 1];
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
      {
        id: "drop_first",
        loops: ["index", "while"],
        code: (s, b) => reversePush(s, `${s.a}.length - 1`, b ? "i > 0" : "i >= 0"),
      },
      {
        id: "drop_last",
        loops: ["index", "while"],
        code: (s, b) => reversePush(s, b ? `${s.a}.length - 2` : `${s.a}.length - 1`, "i >= 0"),
      },
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
