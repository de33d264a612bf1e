// The embedded trainer names its build in the handshake (versions.code): the sha256 of the
// modules its entry point imports, transitively. The cache of cold starts keys on it, so a
// rewritten kernel (the same TRAINER_VERSION, other floats) never loads another build's weights.
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { codeDigest } from "../../src/trainer/embedded/code-digest.js";
import { TinyTrainer } from "../../src/trainer/embedded/trainer.js";

describe("the embedded trainer's build digest", () => {
  it("changes with any module the entry reaches by import, and with nothing else", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "arl-code-digest-"));
    mkdirSync(path.join(dir, "lib"));
    const write = (name: string, text: string) => writeFileSync(path.join(dir, name), text);
    write("main.js", 'import { f } from "./lib/f.js";\nexport const g = () => import("./lazy.js");\n');
    write("lib/f.js", 'export { h } from "../h.js";\nexport const f = 1;\n');
    write("h.js", "export const h = 2;\n");
    write("lazy.js", "export const lazy = 3;\n");
    write("unrelated.js", "export const u = 4;\n");
    const digest = () => codeDigest(pathToFileURL(path.join(dir, "main.js")));
    const first = digest();
    expect(first).toMatch(/^[0-9a-f]{64}$/);
    write("unrelated.js", "export const u = 5;\n");
    expect(digest()).toBe(first);
    for (const [name, text] of [
      ["h.js", "export const h = 2.0000001;\n"],
      ["lazy.js", "export const lazy = 30;\n"],
    ] as const) {
      const before = digest();
      write(name, text);
      expect(digest(), name).not.toBe(before);
    }
  });

  it("is announced in the handshake with deterministic training", () => {
    const hello = new TinyTrainer().handshake();
    expect(hello.versions.code).toMatch(/^[0-9a-f]{64}$/);
    expect(hello.capabilities.deterministic).toBe(true);
  });
});
