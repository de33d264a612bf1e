// The vitest run's closing lines about skipped tests (test/helpers/skip-reporter.ts): grouped by the
// need a test's or its suite's name states, and the files of skips that state none. A scan of the
// test files keeps every skip under test/ stating its need, so the list of those that state none
// stays empty.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { skipSummary, skipTitle } from "../helpers/skip-reporter.js";

const testRoot = path.join(import.meta.dirname, "..");
const TEST_FUNCTIONS = new Set(["describe", "it", "test", "suite"]);

function tsFilesBelow(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === "node_modules" ? [] : tsFilesBelow(full);
    return e.name.endsWith(".ts") ? [full] : [];
  });
}

/** describe, it, test or suite, alone or with modifiers (describe.concurrent). */
function isTestFunction(e: ts.Expression): boolean {
  if (ts.isIdentifier(e)) return TEST_FUNCTIONS.has(e.text);
  return ts.isPropertyAccessExpression(e) && isTestFunction(e.expression);
}

const text = (e: ts.Node, source: ts.SourceFile): string => e.getText(source).replace(/\s+/g, " ");

/**
 * The skips in `file` whose name states no need: a skipIf(c) or runIf(c) whose test is not named
 * skipTitle(title, skip, need) with skip the condition it skips on (c, or !(c) for runIf), a
 * describe.skip/it.skip/test.skip whose name has no "(skipped: needs ...)", and any other .skip()
 * (a test context's skip leaves the name without a reason). One "file:line: what" each, and the
 * number of skips seen.
 */
function unstatedSkips(file: string): { faults: string[]; seen: number } {
  const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
  const faults: string[] = [];
  let seen = 0;
  const at = (node: ts.Node, what: string) =>
    faults.push(
      `${path.relative(path.dirname(testRoot), file)}:${source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1}: ${what}`,
    );
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node)) {
      const callee = node.expression;
      // describe.skipIf(c)(name, ...) and describe.runIf(c)(name, ...)
      if (
        ts.isCallExpression(callee) &&
        ts.isPropertyAccessExpression(callee.expression) &&
        ["skipIf", "runIf"].includes(callee.expression.name.text) &&
        isTestFunction(callee.expression.expression)
      ) {
        seen++;
        const kind = callee.expression.name.text;
        const condition = callee.arguments[0] ? text(callee.arguments[0], source) : "";
        const skipsWhen = kind === "skipIf" ? [condition] : [`!(${condition})`, `!${condition}`];
        const name = node.arguments[0];
        if (
          !name ||
          !ts.isCallExpression(name) ||
          !ts.isIdentifier(name.expression) ||
          name.expression.text !== "skipTitle" ||
          name.arguments.length !== 3
        )
          at(node, `${kind}(${condition}) names its test without skipTitle(title, skip, need)`);
        else if (!skipsWhen.includes(text(name.arguments[1]!, source)))
          at(
            node,
            `${kind}(${condition}) names its test with skipTitle(..., ${text(name.arguments[1]!, source)}, ...), not the condition it skips on (${skipsWhen[0]})`,
          );
      }
      // describe.skip(name, ...), or a test context's skip()
      if (ts.isPropertyAccessExpression(callee) && callee.name.text === "skip") {
        seen++;
        const name = node.arguments[0];
        const stated =
          isTestFunction(callee.expression) &&
          name !== undefined &&
          ts.isStringLiteralLike(name) &&
          /\(skipped: needs [^)]+: [^)]+\)/.test(name.text);
        if (!stated) at(node, `${text(callee, source)}() states no need in its test's name`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return { faults, seen };
}

describe("the skip summary", () => {
  it("gives one line per stated need and lists the files of skips that state none", () => {
    expect(
      skipSummary([
        {
          fullName: "Neovim as the LSP client (skipped: nvim is not installed; apt-get install neovim) > hover",
          file: "test/lsp/neovim.test.ts",
        },
        {
          fullName: "Neovim as the LSP client (skipped: nvim is not installed; apt-get install neovim) > rename",
          file: "test/lsp/neovim.test.ts",
        },
        { fullName: "TextArena through the env host > plays", file: "test/envs/textarena.test.ts" },
      ]),
    ).toEqual([
      "skipped 2 tests: nvim is not installed; apt-get install neovim",
      "skipped without a stated reason: test/envs/textarena.test.ts (1)",
    ]);
    expect(skipSummary([])).toEqual([]);
  });

  it("reads the need skipTitle writes into a skipped test's name, and only when it skips", () => {
    const need = "needs neovim: apt-get install neovim";
    expect(skipTitle("Neovim as the LSP client", false, need)).toBe("Neovim as the LSP client");
    expect(
      skipSummary([
        { fullName: `${skipTitle("Neovim as the LSP client", true, need)} > hover`, file: "test/lsp/neovim.test.ts" },
      ]),
    ).toEqual([`skipped 1 test: ${need}`]);
    // What it needs and how to get it; a ")" would end the reason the summary reads early.
    expect(() => skipTitle("x", true, "nvim is not installed")).toThrow(/needs <what>: <how to get it>/);
    expect(() => skipTitle("x", false, "needs neovim (Debian): apt-get install neovim")).toThrow(/without "\)"/);
  });

  it("has no skip under test/ that states no need", () => {
    const scans = tsFilesBelow(testRoot).map(unstatedSkips);
    expect(scans.flatMap((s) => s.faults)).toEqual([]);
    // The scan sees the skips there are (neovim, chromium, the venvs, the env libraries, SLURM, ...).
    expect(scans.reduce((n, s) => n + s.seen, 0)).toBeGreaterThanOrEqual(25);
  });
});
