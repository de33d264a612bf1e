// Semantic golden fixtures: test/fixtures/semantics/<case>/main.arl (beside it, any files it
// imports) is checked by the whole pipeline, and every diagnostic, with its range and hint, must
// match expected.diagnostics. Set UPDATE_GOLDEN=1 to write missing or changed files, then review them.
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { Compiler } from "../../src/compiler.js";
import type { Diagnostic } from "../../src/diagnostics/diagnostic.js";

const root = fileURLToPath(new URL("../fixtures/semantics", import.meta.url));
const update = process.env.UPDATE_GOLDEN === "1";

function render(d: Diagnostic, dir: string): string {
  const file = path.relative(dir, d.file);
  const where = `${file === "main.arl" ? "" : `${file}:`}${d.range.start.line}:${d.range.start.column}-${d.range.end.line}:${d.range.end.column}`;
  return `${where} ${d.severity}[${d.code}] ${d.message}\n${d.hint ? `  hint: ${d.hint}\n` : ""}`;
}

describe("semantic fixtures", () => {
  for (const name of readdirSync(root).sort()) {
    const dir = path.join(root, name);
    it(name, () => {
      const result = new Compiler().check(path.join(dir, "main.arl"), { plan: false });
      const actual = result.diagnostics.map((d) => render(d, dir)).join("");
      const file = path.join(dir, "expected.diagnostics");
      if (update && (!existsSync(file) || readFileSync(file, "utf8") !== actual)) writeFileSync(file, actual);
      expect(existsSync(file), `${name}/expected.diagnostics is missing (run with UPDATE_GOLDEN=1 and review it)`).toBe(
        true,
      );
      expect(actual).toBe(readFileSync(file, "utf8"));
    });
  }
});
