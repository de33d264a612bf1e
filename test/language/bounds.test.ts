// Bounds that keep every pass stack-safe and every report short: expression trees deeper than
// MAX_EXPRESSION_DEPTH are reported where the bound is passed and never reach a later pass; the
// deepest allowed tree goes through check, fmt, plan lowering and hover. Lone surrogates are
// reported where they are and replaced; a string's bad escapes are reported a few at a time.
import { readFileSync } from "node:fs";
import path from "node:path";
import { TextDocument } from "vscode-languageserver-textdocument";
import { describe, expect, it } from "vitest";
import { Compiler } from "../../src/compiler.js";
import type * as ast from "../../src/language/ast.js";
import { MAX_EXPRESSION_DEPTH } from "../../src/language/expression-depth.js";
import { diskHost } from "../../src/language/imports.js";
import { MAX_REPEATED_REPORTS } from "../../src/language/lexer.js";
import { parse } from "../../src/language/parse.js";
import { format } from "../../src/language/printer.js";
import { hover } from "../../src/lsp/hover.js";
import { Workspace } from "../../src/lsp/workspace.js";
import { lowerModel } from "../../src/plan/lower.js";

const quickstartFile = path.resolve("experiments/quickstart.arl");
const quickstart = readFileSync(quickstartFile, "utf8");
const successTerm = "success: outcome.success";

/** Quickstart with its reward term's value replaced by `value`. */
const withReward = (value: string) => {
  expect(quickstart).toContain(successTerm);
  return quickstart.replace(successTerm, `success: ${value}`);
};

const compile = (text: string) =>
  new Compiler({ readFile: (p) => (p === quickstartFile ? text : diskHost.readFile(p)) }).check(quickstartFile);

/** The height of an expression tree, counted as MAX_EXPRESSION_DEPTH counts it (iteratively). */
function height(e: ast.Expression): number {
  let best = 0;
  const stack: [ast.Expression, number][] = [[e, 1]];
  while (stack.length > 0) {
    const [n, d] = stack.pop()!;
    best = Math.max(best, d);
    const kids: ast.Expression[] =
      n.kind === "Binary"
        ? [n.left, n.right]
        : n.kind === "When"
          ? [n.value, n.condition]
          : n.kind === "Unary"
            ? [n.operand]
            : n.kind === "Member"
              ? [n.object]
              : n.kind === "Call"
                ? [n.callee, ...n.args.map((a) => a.value)]
                : n.kind === "List"
                  ? [...n.items]
                  : [];
    for (const k of kids) stack.push([k, d + 1]);
  }
  return best;
}

const valueOf = (text: string): ast.Expression => {
  const field = parse(text, "f.arl").document.blocks[0]!.entries[0] as ast.Field;
  return field.value;
};

/** Each kind of chain, as a function of its number of levels (the tree's height). */
const chains: Record<string, (levels: number) => string> = {
  "'and' chain": (n) => Array(n).fill("x").join(" and "),
  "'+' chain": (n) => Array(n).fill("1").join(" + "),
  "'*' chain": (n) => Array(n).fill("2").join(" * "),
  "unary minus": (n) => `${"- ".repeat(n - 1)}1`,
  "'not' prefixes": (n) => `${"not ".repeat(n - 1)}x`,
  "member chain": (n) => `a${".b".repeat(n - 1)}`,
  "call chain": (n) => `f${"(1)".repeat(n - 1)}`,
  "'when' chain": (n) => Array(n).fill("1").join(" when "),
};

describe(`expression depth (MAX_EXPRESSION_DEPTH = ${MAX_EXPRESSION_DEPTH})`, () => {
  for (const [name, make] of Object.entries(chains)) {
    it(`${name}: ${MAX_EXPRESSION_DEPTH} levels parse; one more is reported once, as expression-too-deep`, () => {
      const ok = `e { a: ${make(MAX_EXPRESSION_DEPTH)} }`;
      expect(parse(ok, "f.arl").diagnostics).toEqual([]);
      expect(height(valueOf(ok))).toBe(MAX_EXPRESSION_DEPTH);

      const deep = `e { a: ${make(MAX_EXPRESSION_DEPTH + 1)} }`;
      const result = parse(deep, "f.arl");
      expect(result.diagnostics.map((d) => d.code)).toEqual(["expression-too-deep"]);
      expect(result.diagnostics[0]!.message).toContain(String(MAX_EXPRESSION_DEPTH));
      expect(result.diagnostics[0]!.hint).toBeTruthy();
      // No later pass sees the tree: the field's value is an Invalid node.
      expect(valueOf(deep).kind).toBe("Invalid");
    });
  }

  it("reports at the operator where the bound is passed, not at the end of the chain", () => {
    const text = `e { a: ${chains["'and' chain"]!(3000)} }`;
    const [d] = parse(text, "f.arl").diagnostics;
    // The lowest subtree deeper than the bound ends at the 256th 'and' from the left.
    const offset = `e { a: `.length + (MAX_EXPRESSION_DEPTH - 1) * "x and ".length + "x ".length;
    expect(d!.range.start.offset).toBe(offset);
    expect(text.slice(d!.range.start.offset, d!.range.end.offset)).toBe("and");
  });

  it("counts levels through lists, records and calls: shallow pieces nested in brackets add up", () => {
    // Each field's value is within the bound (the innermost, `d`, is 250 levels; `b` is 256),
    // but `a` holds `b` in one more list: 258.
    const piece = chains["'+' chain"]!(250);
    const nested = `e { a: [${piece}, { b: [${piece}, { c: f(${piece} + [${piece}, { d: ${piece} }]) }] }] }`;
    const codes = parse(nested, "f.arl").diagnostics.map((d) => d.code);
    expect(codes).toEqual(["expression-too-deep"]);
  });

  it("thousands of terms (as 20,000 mutated specs had) give a diagnostic through Compiler.check, not a RangeError", () => {
    for (const value of [
      chains["'and' chain"]!(3000),
      chains["unary minus"]!(5000),
      chains["'+' chain"]!(20_000),
      `a${".a".repeat(10_000)}`,
    ]) {
      const result = compile(withReward(value));
      expect(result.diagnostics.map((d) => d.code)).toEqual(["expression-too-deep"]);
    }
  });

  it("a field name of thousands of dotted parts (found by the fuzzer: it overflowed semantics) is reported, not compiled", () => {
    const text = quickstart.replace("max_turns: 8", `max_turns${".a".repeat(3000)}: 8`);
    expect(text).not.toBe(quickstart);
    const result = compile(text);
    expect(result.diagnostics.map((d) => [d.code, d.message])).toEqual([
      ["expression-too-deep", `a field name has more than ${MAX_EXPRESSION_DEPTH} dotted parts`],
    ]);
  });

  it("a dotted field name counts one level per dot, inside records too", () => {
    const name = (dots: number) => `k${".k".repeat(dots)}`;
    expect(parse(`e { ${name(MAX_EXPRESSION_DEPTH - 2)}: -1 }`, "f.arl").diagnostics).toEqual([]);
    expect(parse(`e { ${name(MAX_EXPRESSION_DEPTH - 1)}: -1 }`, "f.arl").diagnostics.map((d) => d.code)).toEqual([
      "expression-too-deep",
    ]);
    // The record adds one level, its field's name 250: 251 + the value's 3 levels is within the bound; 254 + 3 is not.
    expect(parse(`e { a: [{ ${name(250)}: - - 1 }] }`, "f.arl").diagnostics).toEqual([]);
    expect(parse(`e { a: [{ ${name(253)}: - - 1 }] }`, "f.arl").diagnostics.map((d) => d.code)).toEqual([
      "expression-too-deep",
    ]);
  });

  it("300 nested 'if ... then ... else' (not ARL syntax) is a syntax error, not an overflow", () => {
    const text = withReward(`${"if outcome.success then 1 else ".repeat(300)}0`);
    const result = compile(text);
    expect(result.diagnostics.length).toBeGreaterThan(0);
    expect(result.diagnostics.every((d) => d.code === "syntax-error")).toBe(true);
  });

  it("the deepest allowed reward goes through check, fmt, plan lowering and hover", () => {
    // `outcome.success` is two levels: 255 of them joined by 'and' make 256.
    const value = Array(MAX_EXPRESSION_DEPTH - 1)
      .fill("outcome.success")
      .join(" and ");
    expect(height(valueOf(`e { a: ${value} }`))).toBe(MAX_EXPRESSION_DEPTH);
    const text = withReward(value);
    const result = compile(text);
    // The spec changed, so its lock file no longer matches; nothing else is wrong with it.
    expect(result.diagnostics.filter((d) => d.severity === "error" && d.code !== "lock-mismatch")).toEqual([]);
    const lowered = lowerModel(result.model!);
    expect(lowered.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
    expect(lowered.plans.length).toBeGreaterThan(0);

    const formatted = format(text, "quickstart.arl");
    expect("output" in formatted && formatted.output).toContain(value.slice(0, 200));

    const workspace = new Workspace();
    const file = workspace.opened(TextDocument.create(`file://${quickstartFile}`, "arl", 1, text));
    const snapshot = workspace.snapshot(file);
    const at = text.indexOf(value) + value.length - "success".length;
    expect(hover(snapshot, at, result.diagnostics)).not.toBeNull();
  });

  it("the deepest allowed unary chain goes through check and plan lowering", () => {
    const result = compile(withReward(`${"- ".repeat(MAX_EXPRESSION_DEPTH - 2)}(outcome.success)`));
    expect(result.diagnostics.filter((d) => d.severity === "error" && d.code !== "lock-mismatch")).toEqual([]);
    expect(lowerModel(result.model!).plans.length).toBeGreaterThan(0);
  });
});

describe("lone surrogates", () => {
  const places = {
    "a string literal": (s: string) => `experiment e { a: "x${s}y" }`,
    "a comment": (s: string) => `// note ${s}\nexperiment e { a: 1 }`,
    "a doc comment": (s: string) => `/// doc ${s}\nexperiment e { a: 1 }`,
    "a multi-line string": (s: string) => `experiment e { a: """\n  x${s}\n  """ }`,
    "an allow reason": (s: string) => `experiment e { allow { group-size-one: "because ${s}" } }`,
  };
  for (const [where, make] of Object.entries(places)) {
    for (const [name, ch] of [
      ["high", "\ud800"],
      ["low", "\udc00"],
    ] as const) {
      it(`a ${name} surrogate in ${where} is reported at its place, and no string value holds it`, () => {
        const text = make(ch);
        const result = parse(text, "f.arl");
        const at = text.indexOf(ch);
        expect(result.diagnostics.map((d) => [d.code, d.range.start.offset, d.range.end.offset])).toEqual([
          ["invalid-token", at, at + 1],
        ]);
        expect(result.diagnostics[0]!.message).toContain("lone surrogate");
        expect(JSON.stringify(result.document)).not.toMatch(/\\ud[89a-f]/i);
        for (const c of result.comments) expect(c.image).not.toMatch(/[\ud800-\udfff]/);
        // The formatter refuses with that diagnostic, not with an internal error.
        const formatted = format(text, "f.arl");
        expect("diagnostics" in formatted && formatted.diagnostics.map((d) => d.code)).toEqual(["invalid-token"]);
      });
    }
  }

  it("a lone surrogate written as an escape is named as one, with how to write a pair", () => {
    for (const escape of ["\\ud800", "\\uDC00", "\\u{D800}"]) {
      const result = parse(`experiment e { a: "x${escape}y" }`, "f.arl");
      expect(result.diagnostics.map((d) => d.code)).toEqual(["invalid-escape"]);
      expect(result.diagnostics[0]!.message).toBe(
        `'${escape}' is a lone surrogate, not a character (no UTF-8 text can hold it)`,
      );
      expect(result.diagnostics[0]!.hint).toContain("surrogate pair");
    }
    expect(parse('experiment e { a: "\\uD83D\\uDE00" }', "f.arl").diagnostics).toEqual([]);
    expect(parse('experiment e { a: "\\u{110000}" }', "f.arl").diagnostics[0]!.message).toContain("past U+10FFFF");
  });

  it("a surrogate pair is a character, not an error", () => {
    expect(parse('experiment e { a: "😀" } // 😀', "f.arl").diagnostics).toEqual([]);
  });

  it("reaches no plan: Compiler.check stops at it, with no exception", () => {
    const text = quickstart.replace(
      successTerm,
      `${successTerm}\n  }\n  allow { group-size-one: "x\ud800" }\n  reward {`,
    );
    const result = compile(text);
    expect(result.diagnostics.map((d) => d.code)).toEqual(["invalid-token"]);
  });

  it("thousands of them give a bounded number of reports", () => {
    const text = `experiment e { a: "${"\udc00".repeat(50_000)}" }`;
    const result = parse(text, "f.arl");
    expect(result.diagnostics.length).toBe(MAX_REPEATED_REPORTS + 1);
    expect(result.diagnostics.at(-1)!.message).toBe(
      `${50_000 - MAX_REPEATED_REPORTS} more lone surrogates from here on`,
    );
  });
});

describe("invalid escapes", () => {
  it("150,000 in one string: the first few are reported, then a count of the rest", () => {
    const text = withReward(`"${"\\q".repeat(150_000)}"`);
    const result = compile(text);
    expect(result.diagnostics.length).toBe(MAX_REPEATED_REPORTS + 1);
    expect(result.diagnostics.every((d) => d.code === "invalid-escape")).toBe(true);
    expect(result.diagnostics.at(-1)!.message).toBe(
      `${150_000 - MAX_REPEATED_REPORTS} more unknown escape sequences in this string`,
    );
  });
});
