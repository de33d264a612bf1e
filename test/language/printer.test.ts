// Golden tests of the canonical formatter: each input's expected output is written out, and
// every output is checked to be a fixed point that keeps the input's syntax tree and comments.
// Layout, keys, numbers, strings, expressions, refusals and the shipped specs; comments are in
// printer-comments.test.ts.
import { describe, expect, it } from "vitest";
import { parse } from "../../src/language/parse.js";
import { format, LINE_WIDTH, sameAst } from "../../src/language/printer.js";
import { shippedSpecs } from "../helpers/specs.js";
import { fmt, lines } from "../helpers/format-golden.js";

describe("layout", () => {
  it("puts imports first, then one blank line, and one blank line between blocks", () => {
    const input =
      'import "a"\n\n\nimport "b" as bb\nexperiment x {\n  a: 1\n\n\n\n  b: 2\n  c {\n    d: 3 }\n}\nexperiment y {}';
    expect(fmt(input)).toBe(
      lines(
        'import "a"',
        "",
        'import "b" as bb',
        "",
        "experiment x {",
        "  a: 1",
        "",
        "  b: 2",
        "  c {",
        "    d: 3",
        "  }",
        "}",
        "",
        "experiment y {}",
      ),
    );
  });

  it("drops blank lines after an opening and before a closing brace", () => {
    expect(fmt("a {\n\n  b: 1\n\n}\n")).toBe(lines("a {", "  b: 1", "}"));
  });

  it("normalizes spacing, commas and indentation", () => {
    const input = 'experiment   x   extends   a . b{\n seed :1,policy{\nmodel:"m",}\n\t\tgroup_size:8 ,}';
    expect(fmt(input)).toBe(
      lines("experiment x extends a.b {", "  seed: 1", "  policy {", '    model: "m"', "  }", "  group_size: 8", "}"),
    );
  });

  it("keeps a block or record on one line only if it was, holds no comment and fits", () => {
    expect(fmt("e { fits { a: 1, b: [1, 2, 3], c: f(x, y: 2), r: { s: 1 } } }")).toBe(
      lines("e { fits { a: 1, b: [1, 2, 3], c: f(x, y: 2), r: { s: 1 } } }"),
    );
    expect(fmt("e { a: 1 b: 2 }")).toBe(lines("e { a: 1, b: 2 }"));
    expect(fmt("e {\n  a: 1 }")).toBe(lines("e {", "  a: 1", "}"));
    expect(fmt("e { r: {\n a: 1 } }")).toBe(lines("e {", "  r: {", "    a: 1", "  }", "}"));
    expect(fmt("e { a: 1 /* c */ }")).toBe(lines("e {", "  a: 1 /* c */", "}"));
  });

  it("breaks a one-line block at exactly more than 100 columns", () => {
    const block = (n: number) => `  r { a: ${"x".repeat(n)}, b: 2 }`;
    const fits = block(LINE_WIDTH - block(0).length);
    expect(fits.length).toBe(LINE_WIDTH);
    expect(fmt(`e {\n${fits}\n}`)).toBe(lines("e {", fits, "}"));
    const long = block(LINE_WIDTH - block(0).length + 1);
    expect(fmt(`e {\n${long}\n}`)).toBe(
      lines("e {", "  r {", `    a: ${"x".repeat(LINE_WIDTH - block(0).length + 1)}`, "    b: 2", "  }", "}"),
    );
  });

  it("prints empty blocks, records, lists and calls closed up", () => {
    expect(fmt("e {\n  empty { }\n  named x extends y {\n  }\n  rec: { }\n  list: [ ]\n  call: f( )\n}")).toBe(
      lines("e {", "  empty {}", "  named x extends y {}", "  rec: {}", "  list: []", "  call: f()", "}"),
    );
  });

  it("keeps lists on one line when they fit, else one item per line with trailing commas", () => {
    const input = [
      "e {",
      "  nested: [[1, 2], [3, [4, 5]], {}]",
      "  wrap: [alpha_alpha_alpha, beta_beta_beta_beta, gamma_gamma_gamma_gamma, delta_delta_delta_delta_delta]",
      "  inner: [[1, 2, 3], [aaaaaaaaaaaaaaaaaaaaaaaaa, bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb, cccccccccccccccccccccccccccccc]]",
      "  was_wrapped: [",
      "    1, 2,",
      "    3,",
      "  ]",
      "  no_commas: [1 2 3]",
      "}",
    ].join("\n");
    expect(fmt(input)).toBe(
      lines(
        "e {",
        "  nested: [[1, 2], [3, [4, 5]], {}]",
        "  wrap: [",
        "    alpha_alpha_alpha,",
        "    beta_beta_beta_beta,",
        "    gamma_gamma_gamma_gamma,",
        "    delta_delta_delta_delta_delta,",
        "  ]",
        "  inner: [",
        "    [1, 2, 3],",
        "    [",
        "      aaaaaaaaaaaaaaaaaaaaaaaaa,",
        "      bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb,",
        "      cccccccccccccccccccccccccccccc,",
        "    ],",
        "  ]",
        "  was_wrapped: [1, 2, 3]",
        "  no_commas: [1, 2, 3]",
        "}",
      ),
    );
  });

  it("wraps a list at exactly more than 100 columns", () => {
    const list = (n: number) => `  k: [a, b, ${"c".repeat(n)}]`;
    const n = LINE_WIDTH - list(0).length;
    expect(fmt(`e {\n${list(n)}\n}`)).toBe(lines("e {", list(n), "}"));
    expect(fmt(`e {\n${list(n + 1)}\n}`)).toBe(
      lines("e {", "  k: [", "    a,", "    b,", `    ${"c".repeat(n + 1)},`, "  ]", "}"),
    );
  });

  it("wraps call arguments like lists, named arguments included", () => {
    const input =
      "r { progress: potential(coefficient: 0.1 * state.progress_fraction, gamma: 0.99, offset: some_long_name) }";
    expect(fmt(input)).toBe(
      lines(
        "r {",
        "  progress: potential(",
        "    coefficient: 0.1 * state.progress_fraction,",
        "    gamma: 0.99,",
        "    offset: some_long_name,",
        "  )",
        "}",
      ),
    );
    expect(fmt("r { p: f(a,b,c:1,) }")).toBe(lines("r { p: f(a, b, c: 1) }"));
  });

  it("formats nested blocks", () => {
    const input =
      "experiment x {\nalgorithm extends algo.ppo {\ncritic { optimizer { lr: 5e-6 } }\nadvantage {\ngamma: 1.0\n}\n}\n}";
    expect(fmt(input)).toBe(
      lines(
        "experiment x {",
        "  algorithm extends algo.ppo {",
        "    critic { optimizer { lr: 5e-6 } }",
        "    advantage {",
        "      gamma: 1.0",
        "    }",
        "  }",
        "}",
      ),
    );
  });

  it("normalizes line ends and drops a byte-order mark", () => {
    expect(fmt("\ufeffa {\r\n  b: 1\r\n\r\n  c: 2\r\n}\r\n")).toBe(lines("a {", "  b: 1", "", "  c: 2", "}"));
  });

  it("prints an empty file as empty", () => {
    expect(fmt("")).toBe("");
    expect(fmt("\n\n  \n")).toBe("");
  });
});

describe("keys, numbers and strings", () => {
  it("prints kebab keys bare and other keys quoted, as written", () => {
    const input =
      'allow {\n  self-inclusive-baseline: "why"\n  "quoted": 1\n  "with space": 2\n  "": 3\n  a.b-c."d e": 4\n}';
    expect(fmt(input)).toBe(
      lines(
        "allow {",
        '  self-inclusive-baseline: "why"',
        '  "quoted": 1',
        '  "with space": 2',
        '  "": 3',
        '  a.b-c."d e": 4',
        "}",
      ),
    );
  });

  it("keeps kebab keys with digit-led segments", () => {
    expect(fmt('allow { turn-budget-below-2x-optimal: "why", a-10: 1 }')).toBe(
      lines('allow { turn-budget-below-2x-optimal: "why", a-10: 1 }'),
    );
    // `below-2x.b` would lex `2x.b` as one (malformed) number: the dot keeps a space before it.
    expect(fmt("a { below-2x . b: 1, c-3 . d: 2 }")).toBe(lines("a { below-2x .b: 1, c-3 .d: 2 }"));
  });

  it("keeps numbers as spelled", () => {
    expect(fmt("n { a: [1_000, 5e-7, 0.20, 1E+3, 007, 1_0.2_5] }")).toBe(
      lines("n { a: [1_000, 5e-7, 0.20, 1E+3, 007, 1_0.2_5] }"),
    );
  });

  it("re-escapes strings canonically, keeping their value", () => {
    const input = String.raw`s { a: "\u0041\u{1F600}\t\n\r\0 \\ \" é", b: "\u0001\u007f\u00a0\u2028\uD83D\uDE00" }`;
    expect(fmt(input)).toBe(lines(String.raw`s { a: "A😀\t\n\r\0 \\ \" é", b: "\u0001\u007F\u00A0\u2028😀" }`));
  });

  it("keeps multi-line strings multi-line, re-indented under their field", () => {
    const input = [
      "s {",
      '  prompt: """',
      "      You are a careful agent.",
      "        - indented bullet",
      String.raw`      Say "hi" and ""quote"" and \"\"\"triple\"\"\".`,
      '      """',
      '  deep { deeper { text: """line one',
      'line two""" } }',
      '  empty: """"""',
      '  blank: """',
      "",
      '  """',
      '  trailing: """',
      "    spaces here   ",
      "    tab\t",
      '    """',
      '  list: ["""',
      "    in a list",
      '    """, 2]',
      '  cond: """',
      "    text",
      '    """ when x',
      "}",
    ].join("\n");
    expect(fmt(input)).toBe(
      lines(
        "s {",
        '  prompt: """',
        "    You are a careful agent.",
        "      - indented bullet",
        String.raw`    Say "hi" and ""quote"" and \"\"\"triple\"\"\".`,
        '  """',
        "  deep {",
        "    deeper {",
        '      text: """',
        "        line one",
        "        line two",
        '      """',
        "    }",
        "  }",
        '  empty: """"""',
        '  blank: """"""',
        '  trailing: """',
        String.raw`    spaces here  \u0020`,
        String.raw`    tab\t`,
        '  """',
        "  list: [",
        '    """',
        "      in a list",
        '    """,',
        "    2,",
        "  ]",
        '  cond: """',
        "    text",
        '  """ when x',
        "}",
      ),
    );
  });

  it("keeps the value of multi-line strings whose every line is indented", () => {
    // Dedent would take the indentation of an all-indented text away: the input escapes it.
    const input = 's {\n  code: """\n\\u0020 if x:\n      y\n"""\n}';
    const before = parse(input, "t.arl").document.blocks[0]!.entries[0]!;
    expect(before.kind === "Field" && before.value.kind === "String" && before.value.value).toBe("  if x:\n      y");
    expect(fmt(input)).toBe(lines("s {", '  code: """', String.raw`    \u0020 if x:`, "          y", '  """', "}"));
  });
});

describe("expressions", () => {
  const cases: [string, string][] = [
    ["(1 + 2) + 3", "1 + 2 + 3"],
    ["1 + (2 + 3)", "1 + (2 + 3)"],
    ["1 - (2 - 3)", "1 - (2 - 3)"],
    ["(1 * 2) + (3 * 4)", "1 * 2 + 3 * 4"],
    ["(1 + 2) * (3 + 4)", "(1 + 2) * (3 + 4)"],
    ["(a + b) % c / (d * e)", "(a + b) % c / (d * e)"],
    ["((a == b))", "a == b"],
    ["(a < b) == (c < d)", "(a < b) == (c < d)"],
    ["(a != b) != c", "(a != b) != c"],
    ["not (a and b)", "not (a and b)"],
    ["(not a) and b", "not a and b"],
    ["not not (not a)", "not not not a"],
    ["not (a == b)", "not a == b"],
    ["(not a) == b", "(not a) == b"],
    ["- (not a)", "-(not a)"],
    ["not -a", "not -a"],
    ["-(-(-x))", "---x"],
    ["+-+x", "+-+x"],
    ["-(a + b)", "-(a + b)"],
    ["a - -b", "a - -b"],
    ["(-a).b", "(-a).b"],
    ["-a.b", "-a.b"],
    ["((a.b)(c)).d", "a.b(c).d"],
    ["(f)(x)", "f(x)"],
    ["(1).x", "(1).x"],
    ["(1.5).x", "(1.5).x"],
    ["(1)(x)", "1(x)"],
    ['("s").length', '"s".length'],
    ["a when (b when c)", "a when (b when c)"],
    ["(a when b) when c", "a when b when c"],
    ["(a when b) + 1", "(a when b) + 1"],
    ["(a or b) and (c or d)", "(a or b) and (c or d)"],
    ["a or (b and c)", "a or b and c"],
    ["(a or b) or c", "a or b or c"],
    ["-0.2 when (episode.aborted)", "-0.2 when episode.aborted"],
    ["[(1), (a when b), (- 2)]", "[1, a when b, -2]"],
    ["f(x: (a when b), (c))", "f(x: a when b, c)"],
    ["{ a: (1) }", "{ a: 1 }"],
  ];
  for (const [input, output] of cases) {
    it(`${input}  ->  ${output}`, () => {
      expect(fmt(`p { v: ${input} }`)).toBe(lines(`p { v: ${output} }`));
    });
  }
});

describe("refusals and helpers", () => {
  it("refuses input with syntax errors, returning the diagnostics", () => {
    const result = format("experiment x {\n  a: \n}\n", "bad.arl");
    expect("diagnostics" in result && result.diagnostics.map((d) => [d.code, d.range.start.line])).toEqual([
      ["syntax-error", 3],
    ]);
    const lexical = format('a { b: "open }', "bad.arl");
    expect("diagnostics" in result && "diagnostics" in lexical).toBe(true);
  });

  it("compares syntax trees without ranges", () => {
    const a = parse("a { b: 1 + 2 }", "f.arl").document;
    const b = parse("a {\n  b: (1) + (2)\n}", "f.arl").document;
    const c = parse("a { b: 1 + 3 }", "f.arl").document;
    expect(sameAst(a, b)).toBe(true);
    expect(sameAst(a, c)).toBe(false);
  });
});

describe("shipped specs", () => {
  const specs = shippedSpecs();

  it("exist", () => {
    expect(specs.length).toBeGreaterThan(0);
  });

  for (const { name, text } of specs) {
    it(`${name}: formatting is idempotent, keeps the tree and comments, and parses cleanly`, () => {
      const output = fmt(text);
      expect(parse(output, name).diagnostics).toEqual([]);
    });
  }
});
