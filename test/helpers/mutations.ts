// Mutations of real specs, shared by the in-process fuzzer (test/language/fuzz.test.ts) and the
// CLI fuzzer (test/cli/fuzz.test.ts): edits at random places, and long repetitions (operator
// chains, prefix runs, member chains, deep nesting, bad escapes, lone surrogates, empty files).
import fc from "fast-check";

export const mutationSpellings = [
  "experiment",
  "policy",
  "env",
  "x",
  "a_b",
  "_",
  "Z9",
  "import",
  "as",
  "extends",
  "when",
  "and",
  "or",
  "not",
  "true",
  "false",
  "none",
  "0",
  "8",
  "1_000",
  "0.2",
  "5e-7",
  "1e+3",
  "1_",
  "1.5e",
  "3abc",
  "1.2.3",
  '"s"',
  '"a\\nb"',
  '"\\q"',
  '"\\u{110000}"',
  '"open',
  '"""multi\nline"""',
  '"""never closed',
  '""',
  "{",
  "}",
  "[",
  "]",
  "(",
  ")",
  ",",
  ":",
  ".",
  "==",
  "!=",
  "<=",
  ">=",
  "<",
  ">",
  "+",
  "-",
  "*",
  "/",
  "%",
  "// line",
  "/// doc",
  "/* block */",
  "/* open",
  "\n",
  "\r\n",
  "\r",
  " ",
  "\t",
  "self-inclusive-baseline",
  "@",
  "#",
  "$",
  "\u00a0",
  "\ufeff",
  "\u2028",
  "é",
  "日本",
  "😀",
  "\0",
  "\\",
];

export type Mutation = {
  kind: "delete" | "duplicate" | "insert" | "swap" | "deleteToken" | "duplicateToken" | "empty";
  at: number;
  len: number;
  other: number;
  text: string;
};

/**
 * Long repetitions: operator chains, prefix runs, member chains, nested parentheses and `if`s,
 * strings full of bad escapes, lone surrogates. Up to `max` repetitions, around the expression
 * depth bound (256) so that both sides of it are hit.
 */
function repetition(max: number): fc.Arbitrary<string> {
  const count = fc.oneof(fc.integer({ min: 1, max: 300 }), fc.integer({ min: 1, max }));
  return fc.oneof(
    fc
      .tuple(
        fc.constantFrom(" and ", " or ", " + ", " - ", " * ", " / ", " % ", " when ", " == "),
        fc.constantFrom("outcome.success", "1", "x", "(a)"),
        count,
      )
      .map(([op, term, n]) =>
        Array(n + 1)
          .fill(term)
          .join(op),
      ),
    fc
      .tuple(fc.constantFrom("-", "- ", "+", "not ", "!", "- not "), count)
      .map(([prefix, n]) => `${prefix.repeat(n)}1`),
    count.map((n) => `a${".a".repeat(n)}`),
    count.map((n) => `f${"(x)".repeat(n)}`),
    count.map((n) => `${"(".repeat(n)}1${")".repeat(n)}`),
    count.map((n) => `${"if c then 1 else ".repeat(n)}0`),
    fc.tuple(fc.constantFrom("\\q", "\\u{110000}", "\\uD800", "\\"), count).map(([esc, n]) => `"${esc.repeat(n)}"`),
    fc
      .tuple(fc.constantFrom("\ud800", "\udfff", "\udbff\udbff", "\ud83d"), fc.integer({ min: 1, max: 20 }))
      .map(([ch, n]) => ch.repeat(n)),
    fc
      .tuple(fc.constantFrom("\ud800", "\udc00"), fc.constantFrom('"', "// ", "/// ", "/* ", '"""'))
      .map(([ch, open]) => `${open}x${ch}y${open === "/* " ? " */" : open.startsWith('"') ? open : "\n"}`),
  );
}

export function mutationOf(maxRepetition: number): fc.Arbitrary<Mutation> {
  return fc.record({
    kind: fc.oneof(
      {
        weight: 30,
        arbitrary: fc.constantFrom("delete", "duplicate", "insert", "swap", "deleteToken", "duplicateToken"),
      },
      { weight: 1, arbitrary: fc.constant("empty") },
    ),
    at: fc.nat(),
    len: fc.integer({ min: 1, max: 12 }),
    other: fc.nat(),
    text: fc.oneof(
      { weight: 6, arbitrary: fc.oneof(fc.constantFrom(...mutationSpellings), fc.string({ maxLength: 3 })) },
      { weight: 1, arbitrary: repetition(maxRepetition) },
    ),
  });
}

/** Offsets where a token-ish piece of text starts, to delete or duplicate whole tokens. */
function tokenStarts(text: string): number[] {
  const starts: number[] = [];
  const re = /[A-Za-z_][A-Za-z0-9_]*|\d[\w.]*|"(?:[^"\\\n]|\\.)*"|\/\/[^\n]*|\S/g;
  for (let m = re.exec(text); m; m = re.exec(text)) starts.push(m.index, m.index + m[0].length);
  return starts;
}

export function mutate(text: string, mutations: readonly Mutation[]): string {
  let s = text;
  for (const m of mutations) {
    const at = s.length === 0 ? 0 : m.at % (s.length + 1);
    switch (m.kind) {
      case "delete":
        s = s.slice(0, at) + s.slice(at + m.len);
        break;
      case "duplicate":
        s = s.slice(0, at) + s.slice(at, at + m.len) + s.slice(at);
        break;
      case "insert":
        s = s.slice(0, at) + m.text + s.slice(at);
        break;
      case "swap": {
        const b = s.length === 0 ? 0 : m.other % s.length;
        const [i, j] = at < b ? [at, b] : [b, at];
        if (j < s.length) s = s.slice(0, i) + s[j] + s.slice(i + 1, j) + s[i] + s.slice(j + 1);
        break;
      }
      case "empty":
        s = "";
        break;
      case "deleteToken":
      case "duplicateToken": {
        const starts = tokenStarts(s);
        if (starts.length < 2) break;
        const k = m.at % (starts.length - 1);
        const [i, j] = [starts[k]!, starts[k + 1]!];
        s = m.kind === "deleteToken" ? s.slice(0, i) + s.slice(j) : s.slice(0, j) + s.slice(i, j) + s.slice(j);
        break;
      }
    }
  }
  return s;
}
