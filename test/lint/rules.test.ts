// Every rule of the registry against its fixtures: each triggering fixture yields exactly that
// rule's code at the lines marked `// expect: CODE`, and the clean one checks without findings.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { lintRules } from "../../src/lint/index.js";
import { check, expectedMarkers, FIXTURES } from "./helpers.js";

function fixtures(code: string, kind: "triggers" | "clean"): string[] {
  const dir = path.join(FIXTURES, code);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names.filter((n) => n.startsWith(kind) && n.endsWith(".arl")).map((n) => path.join(dir, n));
}

describe.each(lintRules.map((r) => [r.code, r] as const))("%s", (code, rule) => {
  const triggering = fixtures(code, "triggers");
  const clean = fixtures(code, "clean");

  it("has a triggering and a clean fixture", () => {
    expect(triggering.length).toBeGreaterThan(0);
    expect(clean.length).toBeGreaterThan(0);
  });

  it.each(triggering.map((f) => [path.basename(f), f]))(
    "%s yields exactly this rule at the marked lines",
    (_name, file) => {
      const marked = expectedMarkers(readFileSync(file, "utf8"));
      expect(marked.length).toBeGreaterThan(0);
      expect(marked.every((m) => m.code === code)).toBe(true);
      const diagnostics = check(file);
      expect(diagnostics.map((d) => ({ code: d.code, line: d.range.start.line, file: d.file }))).toEqual(
        marked.map((m) => ({ code, line: m.line, file })),
      );
      for (const d of diagnostics) {
        expect(d.severity === rule.severity || code === "self-inclusive-baseline").toBe(true);
        expect(d.hint, "every finding says what to do").toBeTruthy();
      }
    },
  );

  it.each(clean.map((f) => [path.basename(f), f]))("%s checks clean", (_name, file) => {
    expect(check(file)).toEqual([]);
  });
});

describe("engine-without-mismatch-correction's message", () => {
  it("names the asynchronous rollout and the update's several steps when they apply, and neither when not", () => {
    const dir = path.join(FIXTURES, "engine-without-mismatch-correction");
    const [both] = check(path.join(dir, "triggers-async.arl"));
    expect(both!.message).toContain("rollout is asynchronous");
    expect(both!.message).toContain("each update takes 2 optimizer steps per batch");
    const [plain] = check(path.join(dir, "triggers.arl"));
    expect(plain!.message).not.toMatch(/asynchronous|optimizer steps/);
  });
});
