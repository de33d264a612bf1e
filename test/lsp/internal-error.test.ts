// A failure inside the server while checking a document is shown in the document (an
// lsp-internal-error diagnostic at the top, with the message), never as a clean file.
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { Diagnostic as LspDiagnostic } from "vscode-languageserver/node";
import { TextDocument } from "vscode-languageserver-textdocument";
import type { CheckResult } from "../../src/compiler.js";
import type { Program } from "../../src/language/imports.js";
import { DiagnosticsManager, type PublishTarget } from "../../src/lsp/diagnostics.js";
import { Workspace } from "../../src/lsp/workspace.js";
import { REPO } from "./client.js";

const GOOD = `experiment e {\n  policy { model: "builtin:tiny" }\n  seed: 1_\n}\n`;

/** A manager whose check of the listed entries throws `error`. */
class FailingChecks extends DiagnosticsManager {
  failing = new Map<string, unknown>();
  protected override *checkEntry(program: Program): Generator<void, CheckResult> {
    if (this.failing.has(program.entry)) throw this.failing.get(program.entry);
    return yield* super.checkEntry(program);
  }
}

function setup(target?: PublishTarget) {
  const workspace = new Workspace();
  const published: { uri: string; diagnostics: LspDiagnostic[] }[] = [];
  const logged: string[] = [];
  const manager = new FailingChecks(
    workspace,
    target ?? { publish: (uri, _version, diagnostics) => published.push({ uri, diagnostics }) },
    0,
    (entry, error) => logged.push(`${entry}: ${String(error)}`),
  );
  const open = (name: string, text: string) => {
    const uri = `file://${path.join(REPO, "experiments", name)}`;
    return { uri, file: workspace.opened(TextDocument.create(uri, "arl", 1, text)) };
  };
  return { workspace, manager, published, logged, open };
}

describe("a failure inside the server's check", () => {
  it("publishes an lsp-internal-error diagnostic at the top of the file, with the message", async () => {
    const s = setup();
    const doc = s.open("crashes.arl", GOOD);
    s.manager.failing.set(doc.file, new RangeError("Maximum call stack size exceeded"));
    s.manager.invalidate([doc.file]);
    await s.manager.flush();
    const last = s.published.filter((p) => p.uri === doc.uri).at(-1)!;
    expect(last.diagnostics).toHaveLength(1);
    expect(last.diagnostics[0]).toMatchObject({
      code: "lsp-internal-error",
      severity: 1,
      range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } },
      message: "arl could not check this file: RangeError: Maximum call stack size exceeded",
    });
    expect(s.logged).toEqual([`${doc.file}: RangeError: Maximum call stack size exceeded`]);
  });

  it("replaces the diagnostics of the last good check, and gives way to the next good one", async () => {
    const s = setup();
    const doc = s.open("flaky.arl", GOOD);
    s.manager.invalidate([doc.file]);
    await s.manager.flush();
    expect(s.published.at(-1)!.diagnostics.some((d) => d.code !== "lsp-internal-error")).toBe(true);
    s.manager.failing.set(doc.file, new Error("boom"));
    s.manager.invalidate([doc.file]);
    await s.manager.flush();
    expect(s.published.at(-1)!.diagnostics.map((d) => d.code)).toEqual(["lsp-internal-error"]);
    s.manager.failing.delete(doc.file);
    s.manager.invalidate([doc.file]);
    await s.manager.flush();
    expect(s.published.at(-1)!.diagnostics.map((d) => d.code)).not.toContain("lsp-internal-error");
  });

  it("keeps a message that quotes the input short and free of lone surrogates", async () => {
    const s = setup();
    const doc = s.open("quotes.arl", GOOD);
    s.manager.failing.set(
      doc.file,
      new Error(`$.silenced[0].reason: the string "\uD800${"x".repeat(100_000)}" is not valid`),
    );
    s.manager.invalidate([doc.file]);
    await s.manager.flush();
    const message = String(s.published.at(-1)!.diagnostics[0]!.message);
    expect(message.length).toBeLessThan(400);
    expect(message).toContain("$.silenced[0].reason");
    expect(message).not.toMatch(/[\uD800-\uDFFF]/);
  });

  it("a non-Error thrown is reported too", async () => {
    const s = setup();
    const doc = s.open("string.arl", GOOD);
    s.manager.failing.set(doc.file, "a string");
    s.manager.invalidate([doc.file]);
    await s.manager.flush();
    expect(s.published.at(-1)!.diagnostics[0]!.message).toBe("arl could not check this file: a string");
  });

  it("a failure while publishing a list publishes the internal error in its place", async () => {
    let calls = 0;
    const sent: LspDiagnostic[][] = [];
    const s = setup({
      publish: (_uri, _version, diagnostics) => {
        if (calls++ === 0) throw new TypeError("cannot convert");
        sent.push(diagnostics);
      },
    });
    const doc = s.open("publish.arl", GOOD);
    s.manager.invalidate([doc.file]);
    await s.manager.flush();
    expect(sent.map((list) => list.map((d) => d.code))).toEqual([["lsp-internal-error"]]);
    expect(sent[0]![0]!.message).toContain("TypeError: cannot convert");
  });
});
