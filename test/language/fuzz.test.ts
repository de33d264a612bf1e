// Property and fuzz tests of the front end and the formatter: the parser never throws and its
// diagnostics point inside the file, whatever the input; the formatter is idempotent and keeps
// the syntax tree and every comment of any input that parses cleanly.
//
// ARL_FUZZ_RUNS=100000 adds a long hunt: that many mutated shipped specs through parse, format
// and Compiler.check, collecting every crash instead of stopping at the first; the crashing
// inputs are written to ARL_FUZZ_OUT (default: a temporary folder) and the test fails if any.
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { skipTitle } from "../helpers/skip-reporter.js";
import { Compiler } from "../../src/compiler.js";
import { diskHost } from "../../src/language/imports.js";
import { lex } from "../../src/language/lexer.js";
import { parse } from "../../src/language/parse.js";
import { DocComment } from "../../src/language/tokens.js";
import { commentText, format, stripRanges } from "../../src/language/printer.js";
import { mutate, mutationOf, mutationSpellings } from "../helpers/mutations.js";
import { shippedSpecs } from "../helpers/specs.js";

const examples = shippedSpecs();

/** ARL_FUZZ_SCALE=20 runs every property twenty times as often (for a longer hunt). */
const scale = Number(process.env.ARL_FUZZ_SCALE ?? "1") || 1;
const runs = (n: number) => ({ numRuns: Math.round(n * scale) });

// --- properties --------------------------------------------------------------------------------

/** 1-based line and column of an offset, counting \n, \r\n and \r as line breaks. */
function expectedPosition(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset; i++) {
    const ch = text.charCodeAt(i);
    if (ch === 10 || (ch === 13 && text.charCodeAt(i + 1) !== 10)) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: offset - lineStart + 1 };
}

/** `parse` does not throw, and every diagnostic's range lies inside the text and is consistent. */
function checkParse(text: string): void {
  const result = parse(text, "fuzz.arl");
  for (const d of result.diagnostics) {
    const { start, end } = d.range;
    expect(d.file).toBe("fuzz.arl");
    expect(d.message.length).toBeGreaterThan(0);
    expect(
      0 <= start.offset && start.offset <= end.offset && end.offset <= text.length,
      `${d.code} ${JSON.stringify(d.range)} in ${text.length} chars`,
    ).toBe(true);
    expect({ line: start.line, column: start.column }).toEqual(expectedPosition(text, start.offset));
    expect({ line: end.line, column: end.column }).toEqual(expectedPosition(text, end.offset));
  }
}

const commentsOf = (text: string) => parse(text, "f.arl").comments.map(commentText);

/** For a cleanly parsing input: format is idempotent, keeps the tree and the comments, and parses. */
function checkFormat(text: string): void {
  const first = format(text, "f.arl");
  if (!("output" in first))
    throw new Error(`format refused: ${JSON.stringify(first.diagnostics.map((d) => d.message))}`);
  const reparsed = parse(first.output, "f.arl");
  expect(reparsed.diagnostics).toEqual([]);
  expect(stripRanges(reparsed.document)).toEqual(stripRanges(parse(text, "f.arl").document));
  expect(commentsOf(first.output)).toEqual(commentsOf(text));
  const second = format(first.output, "f.arl");
  expect(second).toEqual({ output: first.output });
}

/** Formats when the input parses cleanly; a refusal of a clean input is a formatter bug. */
function checkFormatIfClean(text: string): void {
  const parsed = parse(text, "f.arl");
  const result = format(text, "f.arl");
  if (parsed.diagnostics.some((d) => d.severity === "error")) {
    expect("diagnostics" in result).toBe(true);
    return;
  }
  checkFormat(text);
}

/** The file a mutated spec is compiled as, beside the spec it came from (so its imports resolve). */
function compileAs(file: string, text: string) {
  const host = { readFile: (p: string) => (p === file ? text : diskHost.readFile(p)) };
  return new Compiler(host).check(file);
}

/**
 * Compiles many mutated specs, each under a name of its own beside the spec it came from, with
 * one compiler for a batch of them: the stdlib is parsed once per batch, not once per input.
 */
class BatchCompiler {
  private compiler: Compiler | undefined;
  private count = 0;
  private readonly texts = new Map<string, string>();

  check(file: string, text: string) {
    if (!this.compiler || this.count % 200 === 0) {
      this.texts.clear();
      this.compiler = new Compiler({ readFile: (p: string) => this.texts.get(p) ?? diskHost.readFile(p) });
    }
    const entry = `${file.slice(0, -".arl".length)}.fuzz-${this.count++}.arl`;
    this.texts.set(entry, text);
    return this.compiler.check(entry);
  }
}

// --- (a) random token streams ------------------------------------------------------------------

const randomToken = fc.oneof(
  { weight: 12, arbitrary: fc.constantFrom(...mutationSpellings) },
  { weight: 2, arbitrary: fc.string({ unit: "grapheme", maxLength: 4 }) },
  { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 4 }) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 6 }).map((b) => Buffer.from(b).toString("latin1")) },
);
const tokenStream = fc
  .array(fc.tuple(randomToken, fc.constantFrom("", " ", "\n")), { maxLength: 120 })
  .map((ts) => ts.map(([a, b]) => a + b).join(""));

// --- (b) mutations of the shipped specs (test/helpers/mutations.ts) -----------------------------

const mutation = mutationOf(400);

// --- (c) structurally valid specs ------------------------------------------------------------------
// Specs are generated as token lists from the grammar (so they parse), then joined with random
// trivia: blanks, line breaks, and comments of every kind at every token boundary.

type Tokens = string[];

const reserved = new Set(["import", "as", "extends", "when", "and", "or", "not", "true", "false", "none"]);
const identifier = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.constantFrom(
      "experiment",
      "policy",
      "env",
      "reward",
      "algorithm",
      "x",
      "y",
      "model",
      "group_size",
      "_",
      "k2",
      "harness",
    ),
  },
  { weight: 8, arbitrary: fc.stringMatching(/^[a-z_][a-z0-9_]{0,8}$/).filter((s) => !reserved.has(s)) },
  // Long names push lists, calls and one-line blocks past the line width.
  { weight: 1, arbitrary: fc.stringMatching(/^[a-z][a-z0-9_]{20,40}$/) },
);
const numberSpelling = fc.oneof(
  fc.constantFrom("0", "8", "1_000", "0.2", "5e-7", "1E+3", "3.14159", "007", "1_0.2_5"),
  fc.nat().map(String),
  fc.double({ min: 0, max: 1e6, noNaN: true }).map(String),
);
const stringPiece = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom("a", "B", " ", "é", "日本", "😀", "'", "/", "*", "#", "{", "}") },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      "\\n",
      "\\t",
      "\\r",
      "\\0",
      '\\"',
      "\\\\",
      "\\u0041",
      "\\u{1F600}",
      "\\u0001",
      "\\u00a0",
      "\\uD83D\\uDE00",
    ),
  },
  { weight: 1, arbitrary: fc.string({ unit: "grapheme-ascii", maxLength: 3 }).map((s) => s.replace(/["\\\n\r]/g, "")) },
);
const plainString = fc.array(stringPiece, { maxLength: 6 }).map((ps) => `"${ps.join("")}"`);
const tripleLine = fc
  .tuple(
    fc.constantFrom("", " ", "  ", "    ", "\t", "        "),
    fc.array(fc.oneof(stringPiece, fc.constantFrom('"', '""', '\\"\\"\\"', "x")), { maxLength: 5 }),
    fc.constantFrom("", " ", "  "),
  )
  .map(([lead, body, tail]) => lead + body.join("") + tail);
const tripleString = fc
  .tuple(fc.boolean(), fc.array(tripleLine, { maxLength: 4 }), fc.constantFrom("", "\n", "\n  ", "\n    "))
  .map(([newline, lines, close]) => {
    // Three quotes in a row end the string, also next to the opening or closing quotes.
    let text = lines.join("\n");
    while (text.includes('"""')) text = text.replace('"""', '""x');
    if (!newline && text.startsWith('"')) text = `x${text}`;
    if (close === "" && text.endsWith('"')) text = `${text}x`;
    return `"""${newline ? "\n" : ""}${text}${close}"""`;
  });
// Later segments of a kebab key may start with a digit (`turn-budget-below-2x-optimal`).
// (Not ending in `e`: `1e-2x` lexes as the number `1e-2`, then `x`.)
const kebabSegment = fc.oneof(
  { weight: 3, arbitrary: identifier },
  { weight: 1, arbitrary: fc.stringMatching(/^[0-9][a-z0-9_]{0,3}$/).filter((s) => !/e$/.test(s)) },
);
const kebabKey = fc
  .tuple(identifier, fc.array(kebabSegment, { minLength: 1, maxLength: 2 }))
  .map(([first, rest]) => [first, ...rest].join("-"));
const key = fc.oneof(
  { weight: 6, arbitrary: identifier },
  { weight: 1, arbitrary: kebabKey },
  { weight: 1, arbitrary: plainString },
);

/** `operand (op operand)*`, usually just the operand so that expressions stay small. */
function chain(operand: fc.Arbitrary<Tokens>, ops: string[], max = 2): fc.Arbitrary<Tokens> {
  return fc.oneof(
    { weight: 4, arbitrary: operand },
    {
      weight: 1,
      arbitrary: fc
        .tuple(operand, fc.array(fc.tuple(fc.constantFrom(...ops), operand), { minLength: 1, maxLength: max }))
        .map(([first, rest]) => [...first, ...rest.flatMap(([op, e]) => [op, ...e])]),
    },
  );
}

const separated = (items: Tokens[], trailingComma: boolean): Tokens =>
  items.flatMap((e, i) => [...e, ...(i < items.length - 1 || trailingComma ? [","] : [])]);

const expressionCache = new Map<number, fc.Arbitrary<Tokens>>();
const entriesCache = new Map<number, fc.Arbitrary<Tokens>>();

/** Expressions from the grammar's precedence levels; `depth` bounds the bracket nesting. */
function expression(depth: number): fc.Arbitrary<Tokens> {
  const cached = expressionCache.get(depth);
  if (cached) return cached;
  const terminals: fc.Arbitrary<Tokens>[] = [
    numberSpelling.map((n) => [n]),
    plainString.map((s) => [s]),
    identifier.map((id) => [id]),
    fc.constantFrom(["true"], ["false"], ["none"]),
    tripleString.map((s) => [s]),
  ];
  const nested: fc.Arbitrary<Tokens>[] =
    depth <= 0
      ? []
      : [
          fc
            .tuple(fc.array(expression(depth - 1), { maxLength: 3 }), fc.boolean())
            .map(([items, tc]) => ["[", ...separated(items, tc), "]"]),
          entries(depth - 1).map((es) => ["{", ...es, "}"]),
          expression(depth - 1).map((e) => ["(", ...e, ")"]),
        ];
  const primary = fc.oneof(
    ...terminals.map((arbitrary, i) => ({ weight: i < 3 ? 4 : 1, arbitrary })),
    ...nested.map((arbitrary) => ({ weight: 1, arbitrary })),
  );
  const argument = fc
    .tuple(fc.option(identifier, { nil: undefined }), depth <= 0 ? primary : expression(depth - 1))
    .map(([name, e]) => [...(name ? [name, ":"] : []), ...e]);
  const suffix = fc.oneof(
    identifier.map((id) => [".", id]),
    fc
      .tuple(fc.array(argument, { maxLength: 2 }), fc.boolean())
      .map(([args, tc]) => ["(", ...separated(args, tc), ")"]),
  );
  const postfix = fc
    .tuple(
      primary,
      fc.oneof(
        { weight: 3, arbitrary: fc.constant([] as Tokens[]) },
        { weight: 1, arbitrary: fc.array(suffix, { minLength: 1, maxLength: 2 }) },
      ),
    )
    // A number directly before `.` would lex as one malformed number: parenthesize it.
    .map(([p, suffixes]) => [
      ...(suffixes[0]?.[0] === "." && p.length === 1 && /^\d/.test(p[0]!) ? ["(", ...p, ")"] : p),
      ...suffixes.flat(),
    ]);
  const prefixes = (ops: string[], operand: fc.Arbitrary<Tokens>) =>
    fc.oneof(
      { weight: 4, arbitrary: operand },
      {
        weight: 1,
        arbitrary: fc
          .tuple(fc.array(fc.constantFrom(...ops), { minLength: 1, maxLength: 3 }), operand)
          .map(([o, e]) => [...o, ...e]),
      },
    );
  const unary = prefixes(["-", "+"], postfix);
  const additive = chain(chain(unary, ["*", "/", "%"]), ["+", "-"], 3);
  const comparison = fc.oneof(
    { weight: 4, arbitrary: additive },
    {
      weight: 1,
      arbitrary: fc
        .tuple(additive, fc.constantFrom("==", "!=", "<", "<=", ">", ">="), additive)
        .map(([a, op, b]) => [...a, op, ...b]),
    },
  );
  const result = chain(chain(chain(prefixes(["not"], comparison), ["and"]), ["or"]), ["when"]);
  expressionCache.set(depth, result);
  return result;
}

const pathTokens = fc
  .array(key, { minLength: 1, maxLength: 3 })
  .map((path) => path.flatMap((k, i) => (i > 0 ? [".", k] : [k])));

/** The entries of a block or record, each maybe followed by a comma. */
function entries(depth: number): fc.Arbitrary<Tokens> {
  const cached = entriesCache.get(depth);
  if (cached) return cached;
  // Values nest at most one level more, so that specs stay a few hundred tokens long.
  const field = fc.tuple(pathTokens, expression(Math.min(depth, 1))).map(([path, e]) => [...path, ":", ...e]);
  const entry =
    depth <= 0
      ? field
      : fc.oneof({ weight: 3, arbitrary: field }, { weight: 1, arbitrary: blockTokens(entries(depth - 1)) });
  const result = fc
    .array(fc.tuple(entry, fc.boolean()), { maxLength: 3 })
    .map((es) => es.flatMap(([e, comma]) => (comma ? [...e, ","] : e)));
  entriesCache.set(depth, result);
  return result;
}

function blockTokens(body: fc.Arbitrary<Tokens>): fc.Arbitrary<Tokens> {
  return fc
    .tuple(
      identifier,
      fc.option(identifier, { nil: undefined }),
      fc.option(fc.array(identifier, { minLength: 1, maxLength: 3 }), { nil: undefined }),
      body,
    )
    .map(([type, name, ref, es]) => [
      type,
      ...(name ? [name] : []),
      ...(ref ? ["extends", ...ref.flatMap((p, i) => (i > 0 ? [".", p] : [p]))] : []),
      "{",
      ...es,
      "}",
    ]);
}

const bodyEntries = entries(2);

const documentTokens: fc.Arbitrary<Tokens> = fc
  .tuple(
    fc.array(fc.tuple(plainString, fc.option(identifier, { nil: undefined })), { maxLength: 2 }),
    fc.array(blockTokens(bodyEntries), { maxLength: 3 }),
  )
  .map(([imports, blocks]) => [
    ...imports.flatMap(([p, alias]) => ["import", p, ...(alias ? ["as", alias] : [])]),
    ...blocks.flat(),
  ]);

const commentBody = fc.string({ unit: "grapheme", maxLength: 12 }).map((s) => s.replace(/[\n\r\u2028\u2029]/g, " "));
const trivia = fc.oneof(
  { weight: 20, arbitrary: fc.constantFrom(" ", "\n", "  ", "\n\n", "\n\n\n", "\t", " \r\n", "\r", "\n \t\n") },
  { weight: 2, arbitrary: commentBody.map((c) => ` // ${c}\n`) },
  { weight: 2, arbitrary: commentBody.map((c) => `\n/// ${c}\n`) },
  { weight: 1, arbitrary: commentBody.map((c) => ` ///${c}\n`) },
  { weight: 2, arbitrary: commentBody.map((c) => ` /* ${c.replace(/\*\//g, "")} */ `) },
  { weight: 1, arbitrary: commentBody.map((c) => `\n/* ${c.replace(/\*\//g, "")}\n   more */\n`) },
);

/** Joins tokens with random trivia; kebab keys stay one token (spaces there are an error). */
function withTrivia(tokens: fc.Arbitrary<Tokens>): fc.Arbitrary<string> {
  return tokens.chain((ts) =>
    fc
      .array(trivia, { minLength: ts.length + 1, maxLength: ts.length + 1 })
      .map((gaps) => gaps[0] + ts.map((tok, i) => tok + gaps[i + 1]).join("")),
  );
}

const validSpec = withTrivia(documentTokens);
const plainSpec = documentTokens.map((ts) => ts.join(" "));

// --- tests -------------------------------------------------------------------------------------------

describe("parser robustness", () => {
  it("(a) never throws on random token streams, and diagnostics stay inside the file", () => {
    fc.assert(
      fc.property(tokenStream, (text) => checkParse(text)),
      runs(400),
    );
  });

  it("(a) never throws on arbitrary unicode and bytes", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 200 }), (text) => checkParse(text)),
      runs(300),
    );
  });

  it("(b) never throws on mutated examples, and formats those that still parse", () => {
    const arb = fc.tuple(fc.constantFrom(...examples), fc.array(mutation, { minLength: 1, maxLength: 4 }));
    fc.assert(
      fc.property(arb, ([example, mutations]) => {
        const text = mutate(example.text, mutations);
        checkParse(text);
        checkFormatIfClean(text);
      }),
      runs(300),
    );
  });

  it("(b) Compiler.check never throws on mutated shipped specs (chains, escapes, surrogates, empty files)", () => {
    const arb = fc.tuple(fc.constantFrom(...examples), fc.array(mutation, { minLength: 1, maxLength: 3 }));
    fc.assert(
      fc.property(arb, ([example, mutations]) => {
        const result = compileAs(example.file, mutate(example.text, mutations));
        for (const d of result.diagnostics) expect(d.message).not.toMatch(/internal error|Maximum call stack/i);
      }),
      { ...runs(60), seed: 20261201 },
    );
  }, 60_000);
});

const longRuns = Number(process.env.ARL_FUZZ_RUNS ?? "0");

describe.runIf(longRuns > 0)(
  skipTitle(
    `long hunt (ARL_FUZZ_RUNS=${longRuns})`,
    !(longRuns > 0),
    "needs ARL_FUZZ_RUNS, an opt-in hunt: ARL_FUZZ_RUNS=100000 npx vitest run test/language/fuzz.test.ts",
  ),
  () => {
    it(
      "no mutated shipped spec crashes parse, format or Compiler.check",
      () => {
        const out = process.env.ARL_FUZZ_OUT ?? mkdtempSync(path.join(tmpdir(), "arl-fuzz-"));
        mkdirSync(out, { recursive: true });
        const seed = Number(process.env.ARL_FUZZ_SEED ?? "1");
        const crashes: string[] = [];
        let done = 0;
        const started = Date.now();
        const compiler = new BatchCompiler();
        const arb = fc.tuple(fc.constantFrom(...examples), fc.array(mutationOf(5000), { minLength: 1, maxLength: 4 }));
        fc.assert(
          fc.property(arb, ([example, mutations]) => {
            const text = mutate(example.text, mutations);
            let stage = "parse";
            try {
              const parsed = parse(text, "fuzz.arl");
              // An input with errors is refused by the formatter before it prints anything (and
              // that refusal is tested above): only clean inputs are worth formatting here.
              if (!parsed.diagnostics.some((d) => d.severity === "error")) {
                stage = "format";
                const formatted = format(text, "fuzz.arl");
                if (!("output" in formatted))
                  throw new Error(
                    `format refused a clean input: ${formatted.diagnostics.map((d) => d.message).join("; ")}`,
                  );
              }
              stage = "check";
              compiler.check(example.file, text);
            } catch (error) {
              const name = `crash-${crashes.length}.arl`;
              writeFileSync(path.join(out, name), text);
              crashes.push(`${name} (${stage}, from ${example.name}): ${String(error).slice(0, 300)}`);
            }
            done++;
            // Progress in a file: the test runner holds a worker's output until the test ends.
            if (done % 1000 === 0)
              writeFileSync(
                path.join(out, "progress.txt"),
                `${done} inputs, ${crashes.length} crashes, ${Math.round((Date.now() - started) / 1000)} s\n`,
              );
          }),
          { numRuns: longRuns, seed },
        );
        writeFileSync(
          path.join(out, "summary.txt"),
          `${done} inputs, ${crashes.length} crashes (seed ${seed})\n${crashes.join("\n")}\n`,
        );
        expect(crashes, `${done} inputs; crashing inputs in ${out}`).toEqual([]);
      },
      24 * 3600_000,
    );
  },
);

/**
 * The check's lexer drops line and block comments as it goes; what it hands the parser, and its
 * doc comments and diagnostics, are those of the lexer that keeps every comment, and the comments
 * it lexes again on first use are that lexer's, token for token.
 */
function checkLexersAgree(text: string): void {
  const code = lex(text, "f.arl");
  const kept = lex(text, "f.arl", { keepComments: true });
  expect(code.tokens).toEqual(kept.tokens);
  expect(code.diagnostics).toEqual(kept.diagnostics);
  expect(code.docComments).toEqual(kept.comments.filter((c) => c.tokenType === DocComment));
  expect(code.comments).toEqual(kept.comments);
}

describe("the check's lexer and the comment-keeping lexer", () => {
  it("agree on generated specs with comments of every kind between tokens", () => {
    fc.assert(
      fc.property(validSpec, (text) => checkLexersAgree(text)),
      runs(200),
    );
  });

  it("agree on random token streams, mutated examples and arbitrary bytes", () => {
    fc.assert(
      fc.property(tokenStream, (text) => checkLexersAgree(text)),
      runs(200),
    );
    fc.assert(
      fc.property(
        fc.string({ unit: "binary", maxLength: 200 }).map((s) => `${s}/* ${s}`),
        (text) => checkLexersAgree(text),
      ),
      runs(100),
    );
    const arb = fc.tuple(fc.constantFrom(...examples), fc.array(mutation, { minLength: 1, maxLength: 4 }));
    fc.assert(
      fc.property(arb, ([example, mutations]) => checkLexersAgree(mutate(example.text, mutations))),
      runs(100),
    );
  });
});

describe("formatter properties", () => {
  it("(c) generated specs parse cleanly", () => {
    fc.assert(
      fc.property(validSpec, (text) => {
        expect(parse(text, "f.arl").diagnostics).toEqual([]);
      }),
      runs(100),
    );
  });

  it("(c) format is idempotent and keeps the tree and the comments of generated specs", () => {
    fc.assert(
      fc.property(validSpec, (text) => checkFormat(text)),
      runs(300),
    );
  });

  it("(c) the same holds for specs without comments (one-line blocks and wrapping lists)", () => {
    fc.assert(
      fc.property(plainSpec, (text) => checkFormat(text)),
      runs(200),
    );
  });

  it("(c) the shared examples are formatted idempotently", () => {
    for (const example of examples) checkFormat(example.text);
  });
});

describe("pathological inputs", () => {
  const deep = {
    "5,000 nested braces": "experiment x " + "{".repeat(5000) + "}".repeat(5000),
    "5,000 nested records": "experiment x { a: " + "{ b: ".repeat(5000) + "1" + " }".repeat(5000) + " }",
    "5,000 nested brackets": "experiment x { a: " + "[".repeat(5000) + "]".repeat(5000) + " }",
    "5,000 nested parentheses": "experiment x { a: " + "(".repeat(5000) + "1" + ")".repeat(5000) + " }",
    "100,000 not prefixes": "experiment x { a: " + "not ".repeat(100_000) + "y }",
    "100,000 minus prefixes": "experiment x { a: " + "-".repeat(100_000) + "1 }",
    "100,000 alternating prefixes": "experiment x { a: " + "- + ".repeat(50_000) + "1 }",
    "20,000 additions": "experiment x { a: 1" + " + 1".repeat(20_000) + " }",
    "20,000 member accesses": "experiment x { a: y" + ".z".repeat(20_000) + " }",
    "unclosed at depth": "experiment x { a: " + "[{(".repeat(3000),
  };
  for (const [name, text] of Object.entries(deep)) {
    it(`${name}: parse and format do not throw`, () => {
      checkParse(text);
      const result = format(text, "f.arl");
      if ("output" in result) expect(format(result.output, "f.arl")).toEqual(result);
    });
  }

  it("1 MB of random bytes parses without throwing", () => {
    const bytes = new Uint8Array(1 << 20);
    let seed = 0x2545f491;
    for (let i = 0; i < bytes.length; i++) {
      seed ^= seed << 13;
      seed ^= seed >>> 17;
      seed ^= seed << 5;
      bytes[i] = seed & 0xff;
    }
    const text = Buffer.from(bytes).toString("utf8");
    const result = parse(text, "bytes.arl");
    expect(result.diagnostics.length).toBeGreaterThan(0);
    for (const d of result.diagnostics.slice(0, 200)) expect(d.range.end.offset).toBeLessThanOrEqual(text.length);
  });
});
