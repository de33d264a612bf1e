// Golden fixtures: test/fixtures/<construct>/<case>/input.arl with the expected AST (ranges
// left out, as S-expressions) in expected.ast, or, under _error_/, the expected diagnostics in
// expected.diagnostics. Set UPDATE_GOLDEN=1 to write missing or changed files, then review them.
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parse } from "../../src/language/parse.js";
import { sexpr } from "../helpers/sexpr.js";

const root = fileURLToPath(new URL("../fixtures", import.meta.url));
const update = process.env.UPDATE_GOLDEN === "1";

function cases(): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, e.name);
      if (e.isDirectory()) walk(full);
      else if (e.name === "input.arl") out.push(dir);
    }
  };
  walk(root);
  return out.sort();
}

function golden(file: string, actual: string): void {
  if (update && (!existsSync(file) || readFileSync(file, "utf8") !== actual)) writeFileSync(file, actual);
  expect(existsSync(file), `${path.relative(root, file)} is missing (run with UPDATE_GOLDEN=1 and review it)`).toBe(
    true,
  );
  expect(actual).toBe(readFileSync(file, "utf8"));
}

describe("golden fixtures", () => {
  for (const dir of cases()) {
    const name = path.relative(root, dir);
    const isError = name.split(path.sep).includes("_error_");
    it(name, () => {
      const text = readFileSync(path.join(dir, "input.arl"), "utf8");
      const result = parse(text, "input.arl");
      const rendered = result.diagnostics
        .map(
          (d) =>
            `${d.range.start.line}:${d.range.start.column}-${d.range.end.line}:${d.range.end.column} ${d.severity}[${d.code}] ${d.message}\n`,
        )
        .join("");
      if (isError) {
        expect(result.diagnostics.length).toBeGreaterThan(0);
        golden(path.join(dir, "expected.diagnostics"), rendered);
      } else {
        expect(rendered).toBe("");
        golden(path.join(dir, "expected.ast"), `${sexpr(result.document)}\n`);
      }
    });
  }
});
