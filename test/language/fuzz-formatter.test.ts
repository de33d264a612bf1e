// Property tests of the formatter and the lexers: the formatter is idempotent and keeps the
// syntax tree and every comment of any input that parses cleanly, and the check's lexer agrees
// with the comment-keeping one.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { lex } from "../../src/language/lexer.js";
import { parse } from "../../src/language/parse.js";
import { DocComment } from "../../src/language/tokens.js";
import { mutate } from "../helpers/mutations.js";
import { examples, runs, checkFormat, tokenStream, mutation, trivia } from "../helpers/fuzz-inputs.js";

// --- (c) structurally valid specs ----------------------------------------------------------------
// Token lists from the grammar (so they parse), joined with the trivia of test/helpers/fuzz-inputs.ts.

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
