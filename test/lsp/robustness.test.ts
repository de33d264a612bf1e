// The editor features on every prefix and at every position of real specs, cut short or with
// random damage: they never throw (the server would log and answer with nothing).
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { codeActions } from "../../src/lsp/code-actions.js";
import { completions } from "../../src/lsp/completion.js";
import { definition } from "../../src/lsp/definition.js";
import { hover } from "../../src/lsp/hover.js";
import { prepareRename } from "../../src/lsp/rename.js";
import { documentSymbols } from "../../src/lsp/symbols.js";
import { Workspace } from "../../src/lsp/workspace.js";
import { TextDocument } from "vscode-languageserver-textdocument";
import { Compiler } from "../../src/compiler.js";
import { LspClient, REPO } from "./client.js";
import { MAIN } from "./fixtures.js";
import { mulberry32 as rng } from "../../src/contracts/random.js";

function exercise(text: string, name: string, step: number): void {
  const workspace = new Workspace();
  const uri = `file://${path.join(REPO, "experiments", name)}`;
  const doc = TextDocument.create(uri, "arl", 1, text);
  const file = workspace.opened(doc);
  const snapshot = workspace.snapshot(file);
  const entry = snapshot.entry!;
  const diagnostics = new Compiler(workspace.host).check(file).diagnostics.filter((d) => d.file === file);
  documentSymbols(entry.parsed.document);
  for (let offset = 0; offset <= text.length; offset += step) {
    completions(snapshot, text, offset, entry.parsed.lines);
    hover(snapshot, offset, diagnostics);
    definition(snapshot, offset);
    try {
      prepareRename(snapshot, offset);
    } catch (error) {
      expect((error as Error).message).toMatch(/stdlib/);
    }
  }
  const end = doc.positionAt(text.length);
  codeActions({
    uri,
    text,
    lines: entry.parsed.lines,
    document: entry.parsed.document,
    range: { start: { line: 0, character: 0 }, end },
    diagnostics,
    uriOf: (f) => f,
  });
}

const specs = readdirSync(path.join(REPO, "experiments"))
  .filter((f) => f.endsWith(".arl"))
  .map((f) => ({ name: f, text: readFileSync(path.join(REPO, "experiments", f), "utf8") }));

describe("the editor features never throw", () => {
  it.each(specs.map((s) => s.name))("%s, whole and at every third position", (name) => {
    const { text } = specs.find((s) => s.name === name)!;
    exercise(text, name, 3);
  });

  it("on every prefix of a spec (text being typed)", () => {
    for (let cut = 0; cut <= MAIN.length; cut += 7) exercise(MAIN.slice(0, cut), "typed.arl", 5);
  });

  it("on randomly damaged specs", () => {
    const next = rng(7);
    const junk = [
      "{",
      "}",
      "[",
      "]",
      "(",
      ")",
      ":",
      ".",
      ",",
      '"',
      '"""',
      "/*",
      "//",
      "-",
      "when",
      "extends",
      "import",
      "\n",
      " ",
      "x",
      "1_",
      "@",
    ];
    for (let round = 0; round < 30; round++) {
      let text = specs[round % specs.length]!.text;
      for (let k = 0; k < 4; k++) {
        const at = Math.floor(next() * text.length);
        const cut = Math.floor(next() * 6);
        text = text.slice(0, at) + junk[Math.floor(next() * junk.length)]! + text.slice(at + cut);
      }
      exercise(text, `damaged${round}.arl`, 13);
    }
  });
});

// Documents that made the check fail inside the server, which then published nothing (a clean
// file to the user). Until the front end reports each as an ordinary diagnostic, the server's own
// guard must publish an lsp-internal-error: either way, some diagnostic is published.
const spec = (body: string) => `experiment e {\n  policy { model: "builtin:tiny" }\n${body}\n}\n`;
const crashers: Record<string, string> = {
  // ARL has no if/else: its conditional is `v when c`, which groups to the left.
  "300 nested conditionals": spec(`  seed: 1${" when true".repeat(300)}`),
  "5,000 unary minuses": spec(`  seed: ${"- ".repeat(5000)}1`),
  "150k invalid escapes in one string": spec(`  description: "${"\\q".repeat(150_000)}"`),
  // The character itself, not an escape: an editor's buffer can hold one.
  // In a complete experiment, so that the check reaches the plan stage's schema.
  "a lone surrogate in an allow reason": readFileSync(
    path.join(REPO, "experiments", "findmax-ablations.arl"),
    "utf8",
  ).replace("the seed's worked example", "half \uD800 a pair"),
};

describe("the server publishes a diagnostic for documents that break the check", () => {
  let client: LspClient;
  beforeAll(async () => {
    client = await LspClient.start({ debounceMs: 0 });
  }, 90_000);
  afterAll(() => client.stop());

  it.each(Object.keys(crashers))("%s", async (name) => {
    const uri = `file://${path.join(REPO, "experiments", `${name.replace(/[^a-z0-9]+/gi, "-")}.arl`)}`;
    const published = await client.open(uri, crashers[name]!);
    expect(
      published.diagnostics.length,
      `nothing published for ${name}; stderr: ${client.stderr.join("").slice(-1000)}`,
    ).toBeGreaterThan(0);
    expect(published.diagnostics.some((d) => d.severity === 1)).toBe(true);
  });
});
