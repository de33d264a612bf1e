// Lowering envs: every field explicit, signals sorted, and the data files an env names (sql)
// located inside the experiment's folder or the stdlib and recorded by their content hash
// (rollout.sft.data is lowered with the same dataFile, lower-rollout.ts).
import { readFileSync, statSync } from "node:fs";
import path from "node:path";
import type { Diagnostic } from "../diagnostics/diagnostic.js";
import { isInside, refusalReason, resolveConfined, type Confined } from "../language/confine.js";
import { STDLIB_ROOT } from "../contracts/paths.js";
import type { VariantModel } from "../semantics/analyze.js";
import { pathKey } from "../semantics/plain.js";
import type { Env } from "../semantics/schema/env.js";
import type { Origin } from "../semantics/values.js";
import { sha256Hex } from "./hash.js";
import { displayPath, type LoweringContext, sortedRecord } from "./lower-context.js";
import type { PlanEnv } from "./schema.js";

export function lowerEnv(name: string, env: Env, variant: VariantModel, context: LoweringContext, diagnostics: Diagnostic[]): PlanEnv {
  const { tool: _tool, signals, description, kind, ...rest } = env;
  const common = {
    kind,
    description: description ?? null,
    ...rest,
    signals: sortedRecord(new Map(Object.entries(signals)), (s) => ({ scope: s.scope, type: s.type, min: s.min ?? null, max: s.max ?? null, violation: s.violation })),
  };
  if (common.kind !== "sql") return common as PlanEnv;
  const sql = common as typeof common & { kind: "sql"; database: string | null; questions: string | null };
  return {
    ...sql,
    database: sql.database === null ? null : dataFile(sql.database, ["env", name, "database"], variant, context, diagnostics),
    questions: sql.questions === null ? null : dataFile(sql.questions, ["env", name, "questions"], variant, context, diagnostics),
  } as PlanEnv;
}

const fileHashes = new Map<string, { mtimeMs: number; size: number; sha256: string }>();

/**
 * Where a data file named at `at` lives: relative to the spec file that named it, confined to
 * the entry's folder (the root imports are confined to) and the stdlib, on real paths.
 */
function locateDataFile(written: string, at: readonly string[], variant: VariantModel, context: LoweringContext): { confined: Confined; root: string; origin: Origin } {
  const origin: Origin = variant.valuesByPath.get(pathKey(at))?.origin ?? variant.value.origin;
  const fromStdlib = isInside(origin.file, STDLIB_ROOT);
  const root = fromStdlib ? STDLIB_ROOT : context.entryDir;
  return { confined: resolveConfined(written, path.dirname(origin.file), fromStdlib ? [STDLIB_ROOT] : [context.entryDir, STDLIB_ROOT]), root, origin };
}

function dataFileNotFound(written: string, at: readonly string[], absolute: string, origin: Origin): Diagnostic {
  return {
    code: "data-file-not-found",
    severity: "error",
    message: `'${at.join(".")}': cannot read the data file '${written}' (looked for ${absolute})`,
    file: origin.file,
    range: origin.range,
    hint: "the path is relative to the spec file that names it; the plan records the file's sha256, so it must exist when compiling",
  };
}

function dataFileOutsideRoot(written: string, at: readonly string[], reason: "absolute" | "outside" | "link", root: string, origin: Origin): Diagnostic {
  return {
    code: "data-file-outside-root",
    severity: "error",
    message: `'${at.join(".")}': the data file '${written}' is refused: ${refusalReason(reason, root)}; it was not read`,
    file: origin.file,
    range: origin.range,
    hint: "data files must lie inside the experiment's folder (the entry spec's folder): move or copy the file there and name it with a relative path such as \"./data/questions.jsonl\"",
  };
}

/** A data file named in the spec, hashed (a file seen before with the same size and mtime is not read again). */
export function dataFile(written: string, at: string[], variant: VariantModel, context: LoweringContext, diagnostics: Diagnostic[]): { path: string; sha256: string } {
  const { confined, root, origin } = locateDataFile(written, at, variant, context);
  const absolute = confined.path;
  let sha256 = "0".repeat(64);
  // A refused path is never opened, not even to see whether it exists.
  if (!confined.ok) {
    diagnostics.push(dataFileOutsideRoot(written, at, confined.reason, root, origin));
    return { path: displayPath(absolute, context.entryDir), sha256 };
  }
  try {
    const stat = statSync(confined.real);
    if (!stat.isFile()) throw new Error("not a file");
    if (context.hashData === false) return { path: displayPath(absolute, context.entryDir), sha256 };
    const cached = fileHashes.get(confined.real);
    if (cached && cached.mtimeMs === stat.mtimeMs && cached.size === stat.size) sha256 = cached.sha256;
    else {
      sha256 = sha256Hex(readFileSync(confined.real));
      fileHashes.set(confined.real, { mtimeMs: stat.mtimeMs, size: stat.size, sha256 });
    }
  } catch {
    diagnostics.push(dataFileNotFound(written, at, absolute, origin));
  }
  return { path: displayPath(absolute, context.entryDir), sha256 };
}
