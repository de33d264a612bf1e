// Golden tests of the canonical formatter's comments: where each kind of comment goes and stays,
// every output a fixed point that keeps the input's syntax tree and comments (as in
// printer.test.ts).
import { describe, expect, it } from "vitest";
import { parse } from "../../src/language/parse.js";
import { fmt, lines } from "../helpers/format-golden.js";

describe("comments", () => {
  it("keeps comments in every position between declarations, entries and items", () => {
    const input = [
      "// File header.",
      "// Second line.",
      "",
      "/// Documented import.",
      'import "std/algorithms" as algo // trailing on import',
      "// Between imports.",
      'import "std/envs/sql" as sql',
      "// Before the first block.",
      "/// The experiment.",
      "experiment x extends algo.grpo { // after the brace",
      "  // Leading comment of a.",
      "  /// Doc of a.",
      "  a: 1 // trailing of a",
      "",
      "  /* block comment */ b: 2 /* trailing block */",
      "  c: [ // after the bracket",
      "    1, // trailing of 1",
      "    // leading of 2",
      "    2,",
      "    /* dangling in list */",
      "  ]",
      "  d: f( // after paren",
      "    x, // x",
      "    name: y /* y */",
      "  )",
      "  e: { /* inside record */ }",
      "  f: { r: 1 /* trailing r */ }",
      "  /*",
      "   * A multi-line",
      "   * block comment.",
      "   */",
      "  j: 6",
      "  // Dangling at the end of the block.",
      "} // trailing after the block",
      "// Leading of y, right after x.",
      "experiment y {}",
      "/// A doc comment at the end documents nothing.",
      "// Last words.",
    ].join("\n");
    expect(fmt(input)).toBe(
      lines(
        "// File header.",
        "// Second line.",
        "",
        "/// Documented import.",
        'import "std/algorithms" as algo // trailing on import',
        "// Between imports.",
        'import "std/envs/sql" as sql',
        "",
        "// Before the first block.",
        "/// The experiment.",
        "experiment x extends algo.grpo {",
        "  // after the brace",
        "  // Leading comment of a.",
        "  /// Doc of a.",
        "  a: 1 // trailing of a",
        "",
        "  /* block comment */",
        "  b: 2 /* trailing block */",
        "  c: [",
        "    // after the bracket",
        "    1, // trailing of 1",
        "    // leading of 2",
        "    2,",
        "    /* dangling in list */",
        "  ]",
        "  d: f(",
        "    // after paren",
        "    x, // x",
        "    name: y, /* y */",
        "  )",
        "  e: {",
        "    /* inside record */",
        "  }",
        "  f: {",
        "    r: 1 /* trailing r */",
        "  }",
        "  /*",
        "   * A multi-line",
        "   * block comment.",
        "   */",
        "  j: 6",
        "  // Dangling at the end of the block.",
        "} // trailing after the block",
        "",
        "// Leading of y, right after x.",
        "experiment y {}",
        "/// A doc comment at the end documents nothing.",
        "// Last words.",
      ),
    );
  });

  it("prints comments inside expressions and headers before the token that followed them", () => {
    const input = [
      "e /* h */ extends /* i */ base {",
      "  g: 1 + /* inline */ 2 * // line inside expression",
      "    3",
      "  h /* between key and colon */ : 4",
      "  i: /* before value */ 5",
      "  m: - /* after minus */ 1",
      "  n: a. /* after dot */ b",
      "  c: g /* before paren */ (1)",
      "  k: [(/* in parens */ 1), (2 /* before paren */)]",
      "  z: (1 // before paren",
      "  )",
      "}",
      "f // before brace",
      "{",
      "}",
    ].join("\n");
    expect(fmt(input)).toBe(
      lines(
        "e extends /* h */ /* i */ base {",
        "  g: 1 + /* inline */ 2 * // line inside expression",
        "    3",
        "  h: /* between key and colon */ 4",
        "  i: /* before value */ 5",
        "  m: -/* after minus */ 1",
        "  n: a./* after dot */ b",
        "  c: g /* before paren */ (1)",
        "  k: [",
        "    /* in parens */",
        "    1,",
        "    2, /* before paren */",
        "  ]",
        "  z: 1 // before paren",
        "}",
        "",
        "f // before brace",
        "{}",
      ),
    );
  });

  it("keeps doc comments directly above what they document", () => {
    const input =
      "/// Doc of x,\n/// two lines.\nexperiment x {\n  /// Doc of a.\n\n  a: 1\n  b { /// Doc of c.\n    c: 2 }\n}";
    const output = fmt(input);
    expect(output).toBe(
      lines(
        "/// Doc of x,",
        "/// two lines.",
        "experiment x {",
        "  /// Doc of a.",
        "",
        "  a: 1",
        "  b {",
        "    /// Doc of c.",
        "    c: 2",
        "  }",
        "}",
      ),
    );
    const x = parse(output, "t.arl").document.blocks[0]!;
    expect(x.doc).toBe("Doc of x,\ntwo lines.");
    expect(x.entries[0]!.doc).toBe("Doc of a.");
    const b = x.entries[1]!;
    expect(b.kind === "Block" && b.entries[0]!.doc).toBe("Doc of c.");
  });

  it("keeps a doc comment that documents nothing apart from the next entry", () => {
    // In the input, a comma or a parenthesis sits between each `///` and the next entry.
    const input = "a {\n  x: 1 /// t\n  , y: 2\n  z: (1 /// v\n  )\n  w: 3\n}";
    const output = fmt(input);
    expect(output).toBe(lines("a {", "  x: 1 /// t", "  ,", "  y: 2", "  z: 1 /// v", "  ,", "  w: 3", "}"));
    const entries = parse(output, "t.arl").document.blocks[0]!.entries;
    expect(entries.map((e) => e.doc)).toEqual([undefined, undefined, undefined, undefined]);
  });

  it("keeps a doc comment after an entry, documenting the next one, where it is", () => {
    const output = fmt("a {\n  x: 1 /// of y\n  y: 2\n}");
    expect(output).toBe(lines("a {", "  x: 1 /// of y", "  y: 2", "}"));
    expect(parse(output, "t.arl").document.blocks[0]!.entries[1]!.doc).toBe("of y");
  });

  it("puts comments after a line comment that ended an entry's line on their own lines", () => {
    // `// b` sat inside the parentheses; `/* c */` and `// d` followed the closing one.
    const input = 'r {\n  o: (/* a */ "" // b\n  ) /* c */ // d\n  p: 1\n}';
    expect(fmt(input)).toBe(lines("r {", '  o: /* a */ "" // b', "  /* c */", "  // d", "  p: 1", "}"));
  });

  it("keeps a file of comments only", () => {
    expect(fmt("// one\n\n\n/* two */\n// three")).toBe(lines("// one", "", "/* two */", "// three"));
  });

  it("removes trailing blanks from comments", () => {
    expect(fmt("a {} // note   \n")).toBe(lines("a {} // note"));
  });
});
