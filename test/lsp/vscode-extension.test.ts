// The VS Code extension (editors/vscode): its manifest and language configuration, which
// server it starts, and its packaging: `scripts/package.mjs` builds a .vsix (a zip with
// [Content_Types].xml, extension.vsixmanifest and extension/), whose bundled server answers
// over the protocol. Packaging needs editors/vscode/node_modules (`npm ci --prefix
// editors/vscode`, from the npm registry); without it that test is skipped with a notice.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { skipTitle } from "../helpers/skip-reporter.js";
import { resolveServer } from "../../editors/vscode/src/server-path.js";
import { checkAsLsp, comparable, LspClient, REPO, tempSpecs } from "./client.js";
import { MAIN, LIB } from "./fixtures.js";
import { readZip } from "./zip.js";

const EXT = path.join(REPO, "editors", "vscode");
const manifest = JSON.parse(readFileSync(path.join(EXT, "package.json"), "utf8")) as {
  name: string;
  publisher: string;
  version: string;
  main: string;
  engines: { vscode: string };
  contributes: {
    languages: { id: string; extensions: string[]; configuration: string }[];
    grammars: { language: string; scopeName: string; path: string }[];
    configuration: { properties: Record<string, unknown> };
  };
};
const grammarText = readFileSync(path.join(REPO, "grammar", "arl.tmLanguage.json"), "utf8");

describe("the extension's manifest", () => {
  it("contributes the arl language, the generated grammar and a language configuration", () => {
    const [language] = manifest.contributes.languages;
    expect(language).toMatchObject({ id: "arl", extensions: [".arl"], configuration: "./language-configuration.json" });
    const [grammar] = manifest.contributes.grammars;
    expect(grammar).toMatchObject({ language: "arl", path: "./syntaxes/arl.tmLanguage.json" });
    // The grammar is copied from grammar/ at build time, never kept as a second copy in git.
    expect(grammar!.scopeName).toBe((JSON.parse(grammarText) as { scopeName: string }).scopeName);
    expect(readFileSync(path.join(EXT, ".gitignore"), "utf8")).toContain("syntaxes/");
    expect(Object.keys(manifest.contributes.configuration.properties)).toEqual(
      expect.arrayContaining(["arl.server.path", "arl.server.debounceMs", "arl.trace.server"]),
    );
  });

  it("has comments, brackets and auto-closing pairs", () => {
    const config = JSON.parse(readFileSync(path.join(EXT, "language-configuration.json"), "utf8")) as {
      comments: { lineComment: string; blockComment: [string, string] };
      brackets: [string, string][];
      autoClosingPairs: { open: string; close: string }[];
    };
    expect(config.comments).toEqual({ lineComment: "//", blockComment: ["/*", "*/"] });
    expect(config.brackets).toEqual([
      ["{", "}"],
      ["[", "]"],
      ["(", ")"],
    ]);
    expect(config.autoClosingPairs.map((p) => p.open + p.close)).toEqual(
      expect.arrayContaining(["{}", "[]", "()", '""']),
    );
  });
});

describe("which server the extension starts", () => {
  const bundled = "/ext/server/dist/cli/arl.mjs";
  it("prefers the setting, then the workspace's node_modules, then the bundled server, then the PATH", () => {
    const has = (files: string[]) => (f: string) => files.includes(f);
    expect(resolveServer("/opt/arl/bin/arl.js", ["/w"], bundled, has([]))).toEqual({
      kind: "module",
      module: "/opt/arl/bin/arl.js",
    });
    expect(resolveServer("/usr/local/bin/arl", ["/w"], bundled, has([]))).toEqual({
      kind: "command",
      command: "/usr/local/bin/arl",
    });
    expect(resolveServer("tools/arl.js", ["/w"], bundled, has([]))).toEqual({
      kind: "module",
      module: "/w/tools/arl.js",
    });
    expect(resolveServer("", ["/w"], bundled, has(["/w/node_modules/arl/bin/arl.js", bundled]))).toEqual({
      kind: "module",
      module: "/w/node_modules/arl/bin/arl.js",
    });
    expect(resolveServer(undefined, ["/w"], bundled, has([bundled]))).toEqual({ kind: "module", module: bundled });
    expect(resolveServer(undefined, [], bundled, has([]))).toEqual({ kind: "command", command: "arl" });
  });
});

const canPackage =
  existsSync(path.join(EXT, "node_modules", "@vscode", "vsce")) &&
  existsSync(path.join(EXT, "node_modules", "esbuild"));
if (!canPackage)
  console.warn(
    "test/lsp/vscode-extension.test.ts: packaging skipped: run `npm ci --prefix editors/vscode` first (it needs the npm registry)",
  );

describe.skipIf(!canPackage)(
  skipTitle("packaging", !canPackage, "needs the extension's vsce and esbuild: npm ci --prefix editors/vscode"),
  () => {
    const specs = tempSpecs({ "main.arl": MAIN, "lib.arl": LIB });
    afterAll(() => specs.dispose());

    it(
      "builds a .vsix with the client, the bundled server, the stdlib and the grammar, and its server answers",
      { timeout: 180_000 },
      async () => {
        const vsix = specs.path("arl.vsix");
        execFileSync(process.execPath, [path.join(EXT, "scripts", "package.mjs"), "--out", vsix], {
          cwd: EXT,
          stdio: "pipe",
        });
        const entries = readZip(vsix);
        const names = entries.map((e) => e.name);
        expect(names).toEqual(
          expect.arrayContaining([
            "[Content_Types].xml",
            "extension.vsixmanifest",
            "extension/package.json",
            "extension/language-configuration.json",
            "extension/syntaxes/arl.tmLanguage.json",
            "extension/out/extension.js",
            "extension/server/package.json",
            "extension/server/dist/cli/arl.mjs",
            "extension/server/stdlib/std/algorithms.arl",
            "extension/server/stdlib/std/envs/findmax.arl",
          ]),
        );
        // Nothing from node_modules, sources or scripts: everything the extension runs is bundled.
        expect(names.filter((n) => /node_modules|\/src\/|\/scripts\//.test(n))).toEqual([]);
        const file = (name: string) => entries.find((e) => e.name === name)!.data();
        expect(file("extension/syntaxes/arl.tmLanguage.json").toString("utf8")).toBe(grammarText);
        expect(file("extension.vsixmanifest").toString("utf8")).toMatch(
          new RegExp(`<Identity [^>]*Id="${manifest.name}"[^>]*Publisher="${manifest.publisher}"`),
        );
        expect(file("extension/out/extension.js").toString("utf8")).toContain("vscode-languageclient");

        // The bundled server, unpacked on its own, checks a spec that imports the stdlib.
        const unpacked = specs.path("unpacked");
        for (const e of entries) {
          const target = path.join(unpacked, e.name);
          mkdirSync(path.dirname(target), { recursive: true });
          writeFileSync(target, e.data());
        }
        const client = await LspClient.start({
          command: [
            process.execPath,
            path.join(unpacked, "extension", "server", "dist", "cli", "arl.mjs"),
            "lsp",
            "--stdio",
          ],
          debounceMs: 0,
        });
        try {
          const published = await client.open(specs.uri("main.arl"), MAIN);
          const expected = checkAsLsp(specs.path("main.arl")).map((d) => ({
            ...d,
            // The bundled server's stdlib lives in the extension.
            ...(d.relatedInformation
              ? {
                  relatedInformation: d.relatedInformation.map((r) => ({
                    ...r,
                    location: {
                      ...r.location,
                      uri: r.location.uri.replace(
                        pathToFileURL(path.join(REPO, "stdlib")).href,
                        pathToFileURL(path.join(unpacked, "extension", "server", "stdlib")).href,
                      ),
                    },
                  })),
                }
              : {}),
          }));
          expect(published.diagnostics.map(comparable)).toEqual(expected);
          expect(published.diagnostics.map((d) => d.code)).toContain("self-inclusive-baseline");
        } finally {
          await client.stop();
        }
      },
    );
  },
);
