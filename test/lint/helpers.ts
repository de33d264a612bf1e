// Shared by the lint suites: run specs through the real pipeline, and read `// expect: CODE`
// markers from fixtures.
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Compiler } from "../../src/compiler.js";
import type { Diagnostic } from "../../src/diagnostics/diagnostic.js";

export const FIXTURES = fileURLToPath(new URL("../fixtures/lint/", import.meta.url));
export const EXAMPLES = fileURLToPath(new URL("../fixtures/examples/", import.meta.url));

export function check(file: string): readonly Diagnostic[] {
  return new Compiler().check(file).diagnostics;
}

/** Writes `files` into a fresh directory and checks `entry` (default main.arl) in it. */
export function checkProject(
  files: Record<string, string>,
  entry = "main.arl",
): { dir: string; diagnostics: readonly Diagnostic[] } {
  const dir = mkdtempSync(path.join(tmpdir(), "arl-lint-"));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), text);
  }
  return { dir, diagnostics: check(path.join(dir, entry)) };
}

/** `{ code, line }` for every `// expect: CODE` marker (1-based lines). */
export function expectedMarkers(text: string): { code: string; line: number }[] {
  const out: { code: string; line: number }[] = [];
  text.split(/\r?\n/).forEach((line, i) => {
    for (const m of line.matchAll(/\/\/ expect: ([a-z0-9-]+)/g)) out.push({ code: m[1]!, line: i + 1 });
  });
  return out;
}

export const brief = (ds: readonly Diagnostic[]) =>
  ds.map((d) => ({ code: d.code, severity: d.severity, line: d.range.start.line }));

/** A small experiment that checks clean, with `body` added inside it. */
export function experiment(body: string, { name = "e", imports = "" } = {}): string {
  return `import "std/algorithms" as algo
import "std/envs/findmax" as findmax
${imports}
experiment ${name} {
  policy { model: "builtin:tiny" }
  env code extends findmax.task {}
  reward { success: outcome.tests_passed }
${body}
}
`;
}
