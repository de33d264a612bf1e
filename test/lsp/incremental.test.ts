// The language server's incremental check (src/lsp/incremental.ts) against the whole-program
// check that `arl check` runs: the same diagnostics, at exactly the same places, after edits
// that re-check only the experiments they touch; and a check overtaken by a newer edit is
// dropped, never published for the old text.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { TextDocument } from "vscode-languageserver-textdocument";
import { generatedSpec } from "../../src/bench/lsp.js";
import { checkProgram } from "../../src/compiler.js";
import { diskHost, ModuleLoader, type Program } from "../../src/language/imports.js";
import { adaptiveDebounceMs, DiagnosticsManager } from "../../src/lsp/diagnostics.js";
import { IncrementalChecker } from "../../src/lsp/incremental.js";
import { buildLock, lockPath, renderLock } from "../../src/plan/lock.js";
import { lowerModel } from "../../src/plan/lower.js";
import { analyze } from "../../src/semantics/analyze.js";
import { Workspace } from "../../src/lsp/workspace.js";
import { REPO } from "./client.js";

const FILE = path.join(REPO, "experiments", "incremental-test.arl");

/** Three generated experiments (no lock file beside FILE), exp_1 with a lint warning, and a child of exp_0. */
function spec(): string {
  const base = generatedSpec(150);
  expect(base.units).toBe(3);
  const exp1 = base.text.indexOf("experiment exp_1");
  const warned = base.text.slice(0, exp1) + base.text.slice(exp1).replace("group_size: 4", "group_size: 1");
  return `${warned}\nexperiment exp_child extends exp_0 {\n  seed: 99\n}\n`;
}

function load(text: string, file = FILE): Program {
  return new ModuleLoader({ readFile: (f) => (f === file ? text : diskHost.readFile(f)) }).load(file);
}

describe("the incremental check", () => {
  it("equals the whole-program check, and an edit re-checks only its experiment's component", () => {
    const checker = new IncrementalChecker();
    const text = spec();
    const first = checker.check(load(text));
    expect(first.diagnostics).toEqual(checkProgram(load(text)).diagnostics);
    expect(first.diagnostics.map((d) => d.code)).toContain("group-size-one");
    // exp_0 and exp_child form one component; exp_1 and exp_2 one each.
    expect(checker.experimentsChecked).toBe(4);

    const edited = text.replace("seed: 2\n", "seed: 7\n");
    const second = checker.check(load(edited));
    expect(checker.experimentsChecked).toBe(5);
    expect(second.diagnostics).toEqual(checkProgram(load(edited)).diagnostics);

    // The same text again: nothing is checked.
    checker.check(load(edited));
    expect(checker.experimentsChecked).toBe(5);
  });

  it("moves reused diagnostics exactly when an edit above shifts them", () => {
    const checker = new IncrementalChecker();
    const text = spec();
    const before = checker.check(load(text)).diagnostics.find((d) => d.code === "group-size-one")!;
    // Three lines (one of them longer) added inside exp_0, above exp_1: exp_0's component is checked again.
    const edited = text.replace("  seed: 0\n", "  seed: 0\n\n  // a note that is longer than the line it follows\n\n");
    const after = checker.check(load(edited));
    expect(checker.experimentsChecked).toBe(6);
    expect(after.diagnostics).toEqual(checkProgram(load(edited)).diagnostics);
    const moved = after.diagnostics.find((d) => d.code === "group-size-one")!;
    expect(moved.range.start.line).toBe(before.range.start.line + 3);
    expect(moved.range.start.column).toBe(before.range.start.column);
    expect(moved.range.start.offset - before.range.start.offset).toBe(edited.length - text.length);
    expect(edited.slice(moved.range.start.offset, moved.range.end.offset)).toBe(
      text.slice(before.range.start.offset, before.range.end.offset),
    );
  });

  it("errors anywhere keep every component's plan stage from running, as in arl check", () => {
    const checker = new IncrementalChecker();
    const text = spec();
    checker.check(load(text));
    const broken = text.replace("reduction: token_mean", "reduction: token_men");
    const result = checker.check(load(broken));
    expect(result.diagnostics.map((d) => d.code)).toContain("invalid-enum");
    expect(result.diagnostics).toEqual(checkProgram(load(broken)).diagnostics);
  });
});

describe("the incremental check with a lock file beside the entry", () => {
  it("compares the lock per component, with the diagnostics of arl check after each edit", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "arl-incremental-lock-"));
    try {
      const file = path.join(dir, "spec.arl");
      // The spec without exp_1's lint error (with one, the plan stage does not run).
      const text = `${generatedSpec(150).text}\nexperiment exp_child extends exp_0 {\n  seed: 99\n}\n`;
      writeFileSync(lockPath(file), renderLock(buildLock(file, lowerModel(analyze(load(text, file))).plans)));
      const checker = new IncrementalChecker();
      const expectSame = (t: string) => {
        const got = checker.check(load(t, file)).diagnostics;
        expect(got).toEqual(checkProgram(load(t, file)).diagnostics);
        return got.filter((d) => d.code === "lock-mismatch").map((d) => d.message);
      };
      expect(expectSame(text)).toEqual([]);
      expect(checker.experimentsChecked).toBe(4);
      // A changed plan (the group size): a mismatch for exp_2 alone, found by checking exp_2 alone.
      const exp2 = text.indexOf("experiment exp_2");
      const regrouped = text.slice(0, exp2) + text.slice(exp2).replace("group_size: 4", "group_size: 8");
      expect(expectSame(regrouped)).toEqual([
        expect.stringContaining("experiment 'exp_2' does not match the lock file"),
      ]);
      expect(checker.experimentsChecked).toBe(5);
      // Back to the locked text: exp_2's first result is gone from the memo, it is checked again, and matches.
      expect(expectSame(text)).toEqual([]);
      expect(checker.experimentsChecked).toBe(6);
      // A comment does not change the plan; lines shift below it.
      expect(expectSame(text.replace("  seed: 1\n", "  seed: 1\n  // note\n"))).toEqual([]);
      expect(checker.experimentsChecked).toBe(7);
      // A renamed experiment: not in the lock, and the lock's exp_2 no longer declared.
      expect(expectSame(text.replace("experiment exp_2 {", "experiment exp_9 {"))).toEqual([
        expect.stringContaining("has experiment 'exp_2', which the spec no longer declares"),
        expect.stringContaining("experiment 'exp_9' is not in the lock file"),
      ]);
      // An unusable lock file: the same single error as arl check (the generated spec's lint
      // warnings, e.g. potential-kept-at-truncation, stay as they were).
      writeFileSync(lockPath(file), "{ not json");
      checker.clear();
      expectSame(regrouped);
      expect(
        checker
          .check(load(regrouped, file))
          .diagnostics.filter((d) => d.severity === "error")
          .map((d) => d.code),
      ).toEqual(["invalid-lock-file"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("the diagnostics manager", () => {
  it("drops a check overtaken by a newer edit: one publish, for the last version", async () => {
    const workspace = new Workspace();
    const published: (number | undefined)[] = [];
    const manager = new DiagnosticsManager(workspace, { publish: (_uri, version) => published.push(version) }, 0);
    const uri = `file://${FILE}`;
    const text = spec();
    const file = workspace.opened(TextDocument.create(uri, "arl", 1, text));
    manager.invalidate([file]);
    const running = manager.flush();
    // The check yields before its first component: the next edit arrives then.
    workspace.changed(TextDocument.create(uri, "arl", 2, text.replace("seed: 2\n", "seed: 8\n")));
    manager.invalidate([file]);
    await running;
    expect(manager.dropped).toBe(1);
    while (manager.runs === 0) await new Promise((r) => setTimeout(r, 5));
    expect(published).toEqual([2]);
  });

  it("waits longer on large files than on small ones, unless a debounce is set", async () => {
    expect(adaptiveDebounceMs(40)).toBe(27);
    expect(adaptiveDebounceMs(2002)).toBe(125);
    expect(adaptiveDebounceMs(100_000)).toBe(150);
    const workspace = new Workspace();
    const adaptive = new DiagnosticsManager(workspace, { publish: () => {} }, undefined);
    const file = workspace.opened(TextDocument.create(`file://${FILE}`, "arl", 1, spec()));
    adaptive.invalidate([file]);
    expect(adaptive.currentDebounceMs()).toBe(adaptiveDebounceMs(workspace.document(file)!.lineCount));
    adaptive.debounceMs = 0;
    expect(adaptive.currentDebounceMs()).toBe(0);
    await adaptive.flush();
  });
});
