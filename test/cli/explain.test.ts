import { readdirSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { compilerCodes } from "../../src/diagnostics/codes/index.js";
import { lintRules } from "../../src/lint/index.js";
import { runArl } from "../helpers/cli.js";

const cwd = tmpdir();
const src = fileURLToPath(new URL("../../src/", import.meta.url));

function tsFilesBelow(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? tsFilesBelow(full) : full.endsWith(".ts") ? [full] : [];
  });
}

/**
 * Every diagnostic code the compiler's stages write outside the lint rules: `code: "x"` (or
 * `code: cond ? "x" : "y"`) in a diagnostic literal, and the code argument of the stages'
 * `at(origin, "x", ...)` / `error(origin, "x", ...)` helpers.
 */
function compilerCodesInSource(): Set<string> {
  const stages = ["language", "semantics", "plan", "lint"]
    .flatMap((d) => tsFilesBelow(path.join(src, d)))
    .filter((f) => !f.includes(`${path.sep}rules${path.sep}`));
  const kebab = String.raw`"([a-z]+(?:-[a-z0-9]+)+)"`;
  const patterns = [
    new RegExp(String.raw`\bcode: ${kebab}`, "g"),
    new RegExp(String.raw`\bcode: [^\n"]*\? ${kebab} : ${kebab}`, "g"),
    new RegExp(String.raw`\b(?:at|error)\([^"\n]*?, ${kebab}`, "g"),
  ];
  const found = new Set<string>();
  for (const file of stages) {
    const text = readFileSync(file, "utf8");
    for (const pattern of patterns)
      for (const m of text.matchAll(pattern)) for (const code of m.slice(1)) if (code) found.add(code);
  }
  return found;
}

describe("arl explain", () => {
  it("prints a lint rule's explanation, severity and how to allow it", async () => {
    const run = await runArl(["explain", "group-size-one"], { cwd });
    expect(run.code).toBe(0);
    expect(run.stderr).toBe("");
    const rule = lintRules.find((r) => r.code === "group-size-one")!;
    expect(run.stdout).toBe(
      `group-size-one (lint rule, error): ${rule.title}\n\n${rule.explanation}\n\nSilence it for one experiment with allow { group-size-one: "why it does not apply" }.\n`,
    );
  });

  it("explains every lint rule", async () => {
    for (const rule of lintRules) {
      const run = await runArl(["explain", rule.code], { cwd });
      expect(run.code, rule.code).toBe(0);
      expect(run.stdout).toContain(rule.explanation);
    }
  });

  it("explains the compiler's own codes, saying which stage reports them", async () => {
    const run = await runArl(["explain", "lock-mismatch"], { cwd });
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^lock-mismatch \(lock file, not a lint rule\): /);
    expect(run.stdout).toContain("arl lock FILE");
  });

  it("has an explanation for every diagnostic code the compiler's stages report", () => {
    const found = compilerCodesInSource();
    // The scan must see the codes it is meant to see, or it would pass on nothing.
    for (const code of [
      "syntax-error",
      "type-mismatch",
      "invalid-enum",
      "import-not-found",
      "invalid-import-path",
      "unknown-signal",
      "lock-mismatch",
    ])
      expect(found).toContain(code);
    const ruleCodes = new Set(lintRules.map((r) => r.code));
    const missing = [...found].filter((code) => !Object.hasOwn(compilerCodes, code) && !ruleCodes.has(code));
    expect(missing).toEqual([]);
    // A lint rule's code is explained by the rule; the table must not shadow one.
    expect(Object.keys(compilerCodes).filter((code) => ruleCodes.has(code))).toEqual([]);
  });

  it("suggests the closest codes for an unknown one and exits 2", async () => {
    const typo = await runArl(["explain", "group-size-on"], { cwd });
    expect(typo.code).toBe(2);
    expect(typo.stdout).toBe("");
    expect(typo.stderr).toContain("unknown code 'group-size-on'; did you mean 'group-size-one'");
    expect(typo.stderr).toContain("arl explain --list");

    const word = await runArl(["explain", "baseline"], { cwd });
    expect(word.code).toBe(2);
    expect(word.stderr).toContain("did you mean 'self-inclusive-baseline'?");

    const far = await runArl(["explain", "frobnicate-the-widget"], { cwd });
    expect(far.code).toBe(2);
    expect(far.stderr).toContain("unknown code 'frobnicate-the-widget'; it is not close to any code");
  });

  it("lists every code with --list", async () => {
    const run = await runArl(["explain", "--list"], { cwd });
    expect(run.code).toBe(0);
    for (const code of [...lintRules.map((r) => r.code), ...Object.keys(compilerCodes)])
      expect(run.stdout).toMatch(new RegExp(`^  ${code} `, "m"));
  });

  it("exits 2 with its usage when no code is given", async () => {
    const run = await runArl(["explain"], { cwd });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("give one diagnostic code");
    expect(run.stderr).toContain("Usage: arl explain CODE");
  });

  it("is listed in arl --help", async () => {
    const run = await runArl(["--help"], { cwd });
    expect(run.stdout).toMatch(/^ {2}explain +explain a diagnostic code/m);
  });
});
