// The check types, lints and lowers each distinct variant content once (docs/architecture.md,
// "Memoisation"): its diagnostics and plans must be exactly those of the check that does every
// variant afresh, positions, order and counts included, with and without a lock file.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { Compiler } from "../../src/compiler.js";
import { ModuleLoader } from "../../src/language/imports.js";
import { buildLock, lockPath, renderLock } from "../../src/plan/lock.js";
import { loweringContext, lowerHashes, lowerModel } from "../../src/plan/lower.js";
import { analyze } from "../../src/semantics/analyze.js";
import { shippedSpecs } from "../helpers/specs.js";

const dir = mkdtempSync(path.join(tmpdir(), "arl-memo-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** One experiment family, written `copies` times under numbered names. */
function family(i: number): string {
  return `
experiment base_${i} {
  policy { model: "builtin:tiny" }
  env code extends findmax.task {}
  reward {
    success: outcome.tests_passed
    // An expression: keyed by its text's place, so each copy's is its own content.
    cost: -0.01 * episode.tool_calls
  }
  algorithm extends algo.rloo { group_size: 4 }
  allow { critic-missing: "unused here: reported in every copy" }
}

experiment arms_${i} extends base_${i} {
  ablation {
    // Equal to the experiment's own content.
    same { algorithm.group_size: 4 }
    also_same { algorithm.group_size: 4 }
    // A lint finding in one arm only.
    mean { algorithm.advantage.baseline: mean }
    // A type error in one arm only.
    broken { algorithm.group_size: "four" }
  }
}

experiment swept_${i} extends base_${i} {
  sweep { algorithm.group_size: [2, 4, 4, 8] }
}
`;
}

function write(name: string, text: string): string {
  const file = path.join(dir, name);
  writeFileSync(file, text);
  return file;
}

const header = 'import "std/algorithms" as algo\nimport "std/envs/findmax" as findmax\n';

function bothWays(file: string) {
  const memoised = new Compiler().check(file);
  const afresh = new Compiler().check(file, { memoise: false });
  return { memoised: memoised.diagnostics, afresh: afresh.diagnostics };
}

describe("the memoised check", () => {
  it("reports exactly what the check without memos reports, on variants equal, differing, broken and repeated", () => {
    const file = write("families.arl", header + [0, 1, 2].map(family).join(""));
    const { memoised, afresh } = bothWays(file);
    expect(memoised).toEqual(afresh);
    // The spec exercises what it claims: a type error, a lint finding on some variants, an allow.
    const codes = new Set(afresh.map((d) => d.code));
    expect(codes).toContain("type-mismatch");
    expect(codes).toContain("self-inclusive-baseline");
    expect(afresh.filter((d) => d.code === "self-inclusive-baseline").length).toBeGreaterThanOrEqual(3);
  });

  it("types equal variant contents once: equal keys within a family, distinct ones across expression places", () => {
    const file = write("keys.arl", header + [0, 1].map(family).join(""));
    const model = analyze(new ModuleLoader().load(file));
    const keysOf = (name: string) =>
      model.experiments.find((e) => e.name === name)?.variants.map((v) => v.contentKey) ?? [];
    const [same, alsoSame] = keysOf("arms_0");
    expect(same).toBeDefined();
    expect(same).toBe(alsoSame);
    const swept = keysOf("swept_0");
    expect(swept[1]).toBe(swept[2]);
    expect(new Set(swept).size).toBe(3);
    // The copies' reward expressions are written in different places.
    expect(keysOf("arms_1")[0]).not.toBe(same);
  });

  it("lowers to the same plans, hashes included", () => {
    const file = write(
      "clean.arl",
      header +
        [0, 1]
          .map(family)
          .join("")
          .replace(/ +broken \{[^}]*\}\n/g, ""),
    );
    const model = analyze(new ModuleLoader().load(file));
    const context = loweringContext(model.program);
    const memoised = lowerModel(model, context);
    const afresh = lowerModel(analyze(new ModuleLoader().load(file), { memoise: false }), context, { memoise: false });
    expect(memoised.diagnostics).toEqual(afresh.diagnostics);
    expect(memoised.plans.length).toBeGreaterThan(10);
    expect(memoised.plans).toEqual(afresh.plans);
    // The lock's comparison takes the hashes alone, a reused content's without building its plan.
    const hashes = lowerHashes(model, context);
    expect(hashes.diagnostics).toEqual(afresh.diagnostics);
    expect(hashes.hashes).toEqual(
      afresh.plans.map((p) => ({ experiment: p.experiment, variant: p.variant, hash: p.plan.hash })),
    );
  });

  it("compares a lock file the same way: matching, then stale after an edit", () => {
    const text =
      header +
      [0, 1]
        .map(family)
        .join("")
        .replace(/ +broken \{[^}]*\}\n/g, "");
    const file = write("locked.arl", text);
    const model = analyze(new ModuleLoader().load(file), { memoise: false });
    writeFileSync(
      lockPath(file),
      renderLock(buildLock(file, lowerModel(model, loweringContext(model.program), { memoise: false }).plans)),
    );
    const matching = bothWays(file);
    expect(matching.memoised).toEqual(matching.afresh);
    expect(matching.afresh.filter((d) => d.severity === "error")).toEqual([]);
    // One copy's sweep changes: that experiment alone no longer matches.
    writeFileSync(
      file,
      text.replace("sweep { algorithm.group_size: [2, 4, 4, 8] }", "sweep { algorithm.group_size: [2, 4, 4, 16] }"),
    );
    const stale = bothWays(file);
    expect(stale.memoised).toEqual(stale.afresh);
    expect(stale.afresh.filter((d) => d.code === "lock-mismatch").map((d) => d.message)).toEqual([
      expect.stringContaining("experiment 'swept_0' does not match"),
    ]);
  });

  it("reports exactly what the check without memos reports on every shipped spec (their lock files included)", () => {
    const specs = shippedSpecs().filter((s) => s.name.startsWith("experiments/") && !s.name.includes("/agents/"));
    expect(specs.length).toBeGreaterThan(5);
    for (const spec of specs) {
      const { memoised, afresh } = bothWays(spec.file);
      expect({ spec: spec.name, diagnostics: memoised }).toEqual({ spec: spec.name, diagnostics: afresh });
    }
  });
});
