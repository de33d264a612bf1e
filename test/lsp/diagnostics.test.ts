// Diagnostics over the protocol: on open and on change, equal to `arl check --format json` for
// the same text (converted to 0-based LSP ranges; hints as related information); debounced;
// re-published for open documents that import a changed file, and only for those.
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Diagnostic } from "vscode-languageserver-protocol";
import { checkAllAsLsp, checkAsLsp, comparable, messageOf, LspClient, positionOf, REPO, tempSpecs } from "./client.js";
import { LIB, MAIN } from "./fixtures.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const broken: Record<string, string> = {
  "syntax.arl": `experiment e {\n  policy { model: }\n  algorithm {\n    adv\n  }\n`,
  "lexical.arl": `experiment e {\n  policy { model: "builtin:tiny }\n  seed: 1_\n  harness { max_turns: 3 # 4 }\n}\n`,
  "unclosed.arl": `/// never closed\nexperiment e {\n  description: """multi\n  line\n`,
  "typos.arl": MAIN.replace("max_turns: 8", "max_turn: 8")
    .replace("baseline: mean", "baseline: meen")
    .replace("outcome.tests_passed", "outcome.tests_pased"),
  "imports.arl": `import "./missing" as missing\nimport "std/nothing" as nothing\nimport "./lib" as lib\nimport "./lib" as lib\nexperiment e extends missing.x {}\n`,
  "semantic.arl": `experiment e {\n  policy { model: "builtin:tiny" }\n  env x { kind: findmax, tasks: 0 }\n  algorithm { group_size: 1, advantage { baseline: mean, normalize: std } }\n  widget {}\n}\nwidget w {}\n`,
  "lint.arl": MAIN,
};

describe("diagnostics on open", () => {
  let client: LspClient;
  let specs: ReturnType<typeof tempSpecs>;
  let expected: Map<string, Diagnostic[]>;
  const valid = [
    ...readdirSync(path.join(REPO, "experiments"))
      .filter((f) => f.endsWith(".arl"))
      .map((f) => path.join(REPO, "experiments", f)),
    ...readdirSync(path.join(REPO, "test", "fixtures", "examples"))
      .filter((f) => f.endsWith(".arl"))
      .map((f) => path.join(REPO, "test", "fixtures", "examples", f)),
  ];
  beforeAll(async () => {
    specs = tempSpecs({ "lib.arl": LIB, ...broken });
    client = await LspClient.start({ debounceMs: 0 });
    // One `arl check` run for all of them (none imports another).
    expected = checkAllAsLsp([...Object.keys(broken).map((name) => specs.path(name)), ...valid]);
  });
  afterAll(async () => {
    await client.stop();
    specs.dispose();
  });

  it.each(Object.keys(broken))("%s: the same diagnostics as arl check", async (name) => {
    const published = await client.open(specs.uri(name), broken[name]!);
    const wanted = expected.get(specs.path(name))!;
    expect(wanted.length).toBeGreaterThan(0);
    expect(published.diagnostics.map(comparable)).toEqual(wanted);
    expect(published.version).toBe(1);
    for (const d of published.diagnostics) {
      expect(d.source).toBe("arl");
      expect(typeof d.code).toBe("string");
    }
  });

  it.each(valid)(
    "%s: the same diagnostics as arl check (the repository's experiments and the test suites' example specs)",
    async (file) => {
      const text = readFileSync(file, "utf8");
      const published = await client.open(pathToFileURL(file).href, text);
      expect(published.diagnostics.map(comparable)).toEqual(expected.get(file));
      await client.close(pathToFileURL(file).href);
    },
  );

  it("carries related information and the hint", async () => {
    const published = client.publishedFor(specs.uri("imports.arl")).at(-1)!;
    const duplicate = published.diagnostics.find((d) => d.code === "duplicate-import")!;
    expect(duplicate.relatedInformation?.[0]).toMatchObject({
      location: { uri: specs.uri("imports.arl"), range: { start: { line: 2, character: 0 } } },
      message: "first imported here",
    });
    expect(duplicate.message).toBe("the name 'lib' is imported twice");
    expect(duplicate.relatedInformation?.[1]).toMatchObject({
      location: { uri: specs.uri("imports.arl"), range: duplicate.range },
      message: "hint: give one of them another name with 'as'",
    });
    expect(duplicate.data).toEqual({ hint: "give one of them another name with 'as'" });
    const lint = client
      .publishedFor(specs.uri("lint.arl"))
      .at(-1)!
      .diagnostics.find((d) => d.code === "self-inclusive-baseline")!;
    expect(lint.severity).toBe(2);
  });
});

describe("diagnostics on change", () => {
  let client: LspClient;
  let specs: ReturnType<typeof tempSpecs>;
  beforeAll(async () => {
    specs = tempSpecs({ "main.arl": MAIN, "lib.arl": LIB, "alone.arl": broken["semantic.arl"]! });
    // A fixed debounce of 150 ms (the adaptive default would give these small files 25 ms).
    client = await LspClient.start({ debounceMs: 150 });
  });
  afterAll(async () => {
    await client.stop();
    specs.dispose();
  });

  it("follows incremental edits and reports what arl check reports for the new text", async () => {
    const uri = specs.uri("main.arl");
    await client.open(uri, MAIN);
    // Rename max_turns -> max_turn, then break the file, then mend it again, with range edits.
    const at = positionOf(MAIN, "max_turns", 8);
    let version = await client.change(uri, [
      { range: { start: at, end: { ...at, character: at.character + 1 } }, text: "" },
    ]);
    let published = await client.nextDiagnostics(uri, (p) => p.version === version);
    const edited = MAIN.replace("max_turns", "max_turn");
    writeFileSync(specs.path("main.arl"), edited);
    expect(published.diagnostics.map(comparable)).toEqual(checkAsLsp(specs.path("main.arl")));
    expect(published.diagnostics.map((d) => d.code)).toContain("unknown-field");

    const brace = positionOf(edited, "policy {", 7);
    version = await client.change(uri, [
      { range: { start: brace, end: { ...brace, character: brace.character + 1 } }, text: "" },
    ]);
    published = await client.nextDiagnostics(uri, (p) => p.version === version);
    writeFileSync(specs.path("main.arl"), edited.replace("policy {", "policy "));
    expect(published.diagnostics.map(comparable)).toEqual(checkAsLsp(specs.path("main.arl")));
    expect(published.diagnostics.some((d) => d.code === "syntax-error")).toBe(true);

    version = await client.change(uri, MAIN);
    published = await client.nextDiagnostics(uri, (p) => p.version === version);
    writeFileSync(specs.path("main.arl"), MAIN);
    expect(published.diagnostics.map(comparable)).toEqual(checkAsLsp(specs.path("main.arl")));
  });

  it("debounces: several quick changes give one publish, for the last version", async () => {
    const uri = specs.uri("alone.arl");
    await client.open(uri, broken["semantic.arl"]!);
    const before = client.publishedFor(uri).length;
    let last = 0;
    // Six edits sent back to back, well within the 150 ms quiet period.
    for (let i = 1; i <= 6; i++)
      last = await client.change(uri, broken["semantic.arl"]!.replace("tasks: 0", `tasks: ${i - 1}`));
    const published = await client.nextDiagnostics(uri, (p) => p.version === last);
    await sleep(400);
    const after = client.publishedFor(uri).slice(before);
    expect(after).toHaveLength(1);
    expect(after[0]).toBe(published);
    expect(published.version).toBe(last);
    // The last text has tasks: 5, which is valid: no invalid-value for tasks any more.
    expect(published.diagnostics.some((d) => messageOf(d).includes("'env.x.tasks'"))).toBe(false);
  });

  it("re-publishes an open document when a file it imports changes (open in the editor), and only it", async () => {
    const main = specs.uri("main.arl");
    const lib = specs.uri("lib.arl");
    const alone = specs.uri("alone.arl");
    await client.open(lib, LIB);
    const aloneBefore = client.publishedFor(alone).length;
    const mainRepublished = client.nextDiagnostics(main, (p) =>
      p.diagnostics.some((d) => d.code === "unresolved-reference"),
    );
    const libVersion = await client.change(lib, LIB.replace("env small", "env smaller"));
    const libPublished = await client.nextDiagnostics(lib, (p) => p.version === libVersion);
    const republished = await mainRepublished;
    // The importer's version did not change: it is the same text, checked again.
    expect(republished.version).toBe(client.publishedFor(main).at(-2)!.version);
    const missing = republished.diagnostics.find((d) => d.code === "unresolved-reference")!;
    expect(missing.message).toContain("lib.small");
    expect(missing.relatedInformation?.map((r) => r.message)).toContain("hint: did you mean 'lib.smaller'?");
    expect(libPublished.diagnostics).toEqual([]);
    await sleep(300);
    expect(client.publishedFor(alone).length).toBe(aloneBefore);

    // Back again.
    const fixed = client.nextDiagnostics(main, (p) => !p.diagnostics.some((d) => d.code === "unresolved-reference"));
    await client.change(lib, LIB);
    await fixed;
  });

  it("re-publishes an importer when an imported file changes on disk", async () => {
    const main = specs.uri("main.arl");
    const lib = specs.uri("lib.arl");
    await client.close(lib);
    writeFileSync(specs.path("lib.arl"), LIB.replace("tool lookup", "tool look_up"));
    const republished = client.nextDiagnostics(main, (p) =>
      p.diagnostics.some((d) => messageOf(d).includes("lib.lookup")),
    );
    await client.filesChanged([{ uri: lib, type: 2 }]);
    const p = await republished;
    expect(p.diagnostics.find((d) => messageOf(d).includes("lib.lookup"))?.code).toBe("unresolved-reference");
    writeFileSync(specs.path("lib.arl"), LIB);
  });

  it("clears the diagnostics of a closed document", async () => {
    const uri = specs.uri("alone.arl");
    const cleared = client.nextDiagnostics(uri, (p) => p.diagnostics.length === 0);
    await client.close(uri);
    expect((await cleared).diagnostics).toEqual([]);
  });
});
