// Property and fuzz tests of the parser: it never throws and its diagnostics point inside the
// file, whatever the input, including pathological ones. The formatter's properties are in
// fuzz-formatter.test.ts.
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
import { parse } from "../../src/language/parse.js";
import { format } from "../../src/language/printer.js";
import { mutate, mutationOf } from "../helpers/mutations.js";
import { examples, runs, checkFormat, tokenStream, mutation } from "../helpers/fuzz-inputs.js";

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

const longRuns = Number(process.env.ARL_FUZZ_RUNS ?? "0");

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
