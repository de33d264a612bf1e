// The registry itself: unique kebab-case codes, a title and an explanation for each rule, one
// rule a file, and a fixture folder for each code.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { lintRule, lintRules } from "../../src/lint/index.js";
import { FIXTURES } from "./helpers.js";

const RULES_DIR = fileURLToPath(new URL("../../src/lint/rules/", import.meta.url));

describe("the lint rule registry", () => {
  it("has unique kebab-case codes", () => {
    const codes = lintRules.map((r) => r.code);
    expect(new Set(codes).size).toBe(codes.length);
    for (const code of codes) expect(code).toMatch(/^[a-z][a-z0-9]*(-[a-z0-9]+)+$/);
  });

  it("gives every rule a severity, a one-line title and an explanation", () => {
    for (const r of lintRules) {
      expect(["error", "warning", "info"]).toContain(r.severity);
      expect(r.title.length).toBeGreaterThan(10);
      expect(r.title).not.toContain("\n");
      expect(r.explanation.length, r.code).toBeGreaterThan(200);
    }
  });

  it("keeps one rule a file, named by its code, and registers every file", () => {
    const files = readdirSync(RULES_DIR).filter((f) => f.endsWith(".ts") && f !== "index.ts");
    expect(files.map((f) => f.replace(/\.ts$/, "")).sort()).toEqual(lintRules.map((r) => r.code).sort());
    for (const r of lintRules)
      expect(readFileSync(path.join(RULES_DIR, `${r.code}.ts`), "utf8")).toContain(`code: "${r.code}"`);
  });

  it("has a fixture pair for every rule and no fixture folder without a rule", () => {
    for (const r of lintRules) {
      expect(existsSync(path.join(FIXTURES, r.code, "triggers.arl")), r.code).toBe(true);
      expect(existsSync(path.join(FIXTURES, r.code, "clean.arl")), r.code).toBe(true);
    }
    const folders = readdirSync(FIXTURES, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => d.name);
    for (const f of folders)
      expect(
        lintRules.some((r) => r.code === f),
        f,
      ).toBe(true);
  });

  it("finds rules by code", () => {
    expect(lintRule("observation-in-loss")?.severity).toBe("error");
    expect(lintRule("no-such-rule")).toBeUndefined();
  });
});
