// Incremental parsing (src/language/incremental-parse.ts) against the full parse: after every one
// of many random edits (typed snippets, deletions, undos that repair what an edit broke), the
// parse computed from the previous one has the same AST, diagnostics, comments and line index as
// `parse` of the new text; and edits inside one block are in fact parsed incrementally.
import { describe, expect, it } from "vitest";
import type { IToken } from "chevrotain";
import { generatedSpec } from "../../src/bench/lsp.js";
import { incrementalParseStats, reparse } from "../../src/language/incremental-parse.js";
import { parse, type ParseResult } from "../../src/language/parse.js";
import { TextDocument } from "vscode-languageserver-textdocument";
import { Workspace } from "../../src/lsp/workspace.js";
import { mutationSpellings } from "../helpers/mutations.js";
import { shippedSpecs } from "../helpers/specs.js";

const FILE = "/virtual/spec.arl";

/** A small deterministic generator (mulberry32): the same edits on every run. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function token(c: IToken) {
  return {
    type: c.tokenType.name,
    image: c.image,
    start: [c.startOffset, c.startLine, c.startColumn],
    end: [c.endOffset, c.endLine, c.endColumn],
  };
}

function expectSameParse(actual: ParseResult, text: string, file = FILE): void {
  const full = parse(text, file);
  expect(actual.text).toBe(text);
  expect(actual.document).toEqual(full.document);
  expect(actual.diagnostics).toEqual(full.diagnostics);
  expect(actual.comments.map(token)).toEqual(full.comments.map(token));
  expect(actual.lines.lineCount).toBe(full.lines.lineCount);
}

interface Edit {
  readonly at: number;
  readonly remove: number;
  readonly insert: string;
}

function apply(text: string, e: Edit): string {
  return text.slice(0, e.at) + e.insert + text.slice(e.at + e.remove);
}

/** What typing does: mostly edits that keep the text valid (a digit, a line), else any snippet or deletion. */
function randomEdit(text: string, next: () => number): Edit {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)] as T;
  const anywhere = Math.floor(next() * (text.length + 1));
  /** A random place just after `pattern`, or anywhere when it does not occur. */
  const after = (pattern: RegExp): number => {
    const places = [...text.matchAll(pattern)].map((m) => (m.index ?? 0) + m[0].length);
    return places.length > 0 ? pick(places) : anywhere;
  };
  const kind = next();
  if (kind < 0.2) return { at: after(/\d/g), remove: 0, insert: pick(["0", "7", "_5"]) };
  if (kind < 0.4)
    return {
      at: after(/\n/g),
      remove: 0,
      insert: pick(["\n", "  note: 1\n", "  // c\n", "  /// d\n", "tool t {}\n", "  "]),
    };
  if (kind < 0.5) {
    const at = after(/\n/g);
    const end = text.indexOf("\n", at);
    return { at, remove: (end < 0 ? text.length : end + 1) - at, insert: "" };
  }
  const typed = pick(["1", "x", " ", "\n", "{", "}", ...mutationSpellings]);
  if (kind < 0.7) return { at: anywhere, remove: 0, insert: typed };
  const remove = Math.min(text.length - anywhere, 1 + Math.floor(next() * 12));
  return { at: anywhere, remove, insert: kind < 0.85 ? "" : typed };
}

describe("incremental parsing", () => {
  const specs = [
    { name: "generated", text: generatedSpec(120).text },
    ...shippedSpecs()
      .filter((s) => s.text.length < 20_000)
      .slice(0, 4),
  ];

  it.each(specs.map((s) => [s.name, s.text] as const))(
    "equals a full parse after random edits, undos and repairs (%s)",
    (_name, original) => {
      const next = random(original.length);
      let text = original;
      let parsed = parse(text, FILE);
      const before = { ...incrementalParseStats };
      for (let step = 0; step < 30; step++) {
        const edit = randomEdit(text, next);
        const edited = apply(text, edit);
        parsed = reparse(parsed, edited, FILE);
        expectSameParse(parsed, edited);
        // Undo half of the edits (often a repair of what the edit broke), else keep them.
        if (next() < 0.5) {
          parsed = reparse(parsed, text, FILE);
          expectSameParse(parsed, text);
        } else text = edited;
        // Drift back to a clean text now and then, so that later edits start from one.
        if (step % 10 === 9) {
          text = original;
          parsed = reparse(parsed, text, FILE);
          expectSameParse(parsed, text);
        }
      }
      expect(incrementalParseStats.incremental - before.incremental).toBeGreaterThan(5);
    },
  );

  it("re-parses only the edited block, and moves the later blocks' locations exactly", () => {
    const text = generatedSpec(180).text;
    const first = parse(text, FILE);
    const edited = text.replace("  seed: 0\n", "  seed: 10\n\n  // a longer note\n");
    const before = incrementalParseStats.incremental;
    const second = reparse(first, edited, FILE);
    expect(incrementalParseStats.incremental).toBe(before + 1);
    expectSameParse(second, edited);
    // Blocks before the edit are the same objects; the edited one and those after are new.
    const edit = first.document.blocks.findIndex((b) => b.name?.name === "exp_0");
    expect(second.document.blocks[edit - 1]).toBe(first.document.blocks[edit - 1]);
    expect(second.document.blocks[edit + 1]).not.toBe(first.document.blocks[edit + 1]);
    expect(second.document.blocks[edit + 1]?.range.start.line).toBe(
      (first.document.blocks[edit + 1]?.range.start.line ?? 0) + 2,
    );
  });

  it("parses the whole text when an edit touches the imports or spans two blocks", () => {
    const text = generatedSpec(180).text;
    const first = parse(text, FILE);
    for (const edited of [
      text.replace('import "std/algorithms" as algo', 'import "std/algorithms" as algos'),
      text.replace(/\n}\n\n\/\/\/ Looks/, "\n/// Looks"),
    ]) {
      const before = incrementalParseStats.full;
      expectSameParse(reparse(first, edited, FILE), edited);
      expect(incrementalParseStats.full).toBe(before + 1);
    }
  });

  it("is how the language server's workspace parses an edited document", () => {
    const workspace = new Workspace();
    const uri = "file:///virtual/workspace-spec.arl";
    const text = generatedSpec(120).text;
    const file = workspace.opened(TextDocument.create(uri, "arl", 1, text));
    workspace.program(file);
    const before = { ...incrementalParseStats };
    const edited = text.replace("  seed: 1\n", "  seed: 12\n");
    workspace.changed(TextDocument.create(uri, "arl", 2, edited));
    expectSameParse(workspace.program(file).modules.get(file)!.parsed, edited, file);
    expect(incrementalParseStats.incremental).toBe(before.incremental + 1);
    // The imported stdlib files, unchanged, are not parsed again.
    expect(incrementalParseStats.full).toBe(before.full);
    expect(incrementalParseStats.reused).toBeGreaterThan(before.reused);
  });
});
