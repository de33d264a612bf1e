// Data files named in a spec (sql's database and questions, an agent's task file, a dataset's rows
// and verifier, rollout.sft.data): located inside the experiment's folder or the stdlib and
// recorded by their content hash.
import { readFileSync, statSync } from "node:fs";
import path from "node:path";
import type { Diagnostic } from "../diagnostics/diagnostic.js";
import { isInside, refusalReason, resolveConfined, type Confined } from "../contracts/confine.js";
import { STDLIB_ROOT } from "../contracts/paths.js";
import type { VariantModel } from "../semantics/analyze.js";
import type { Origin } from "../semantics/values.js";
import { sha256File } from "./hash.js";
import { displayPath, type LoweringContext } from "./lower-context.js";

/** The origin of the value at `at` (the env's block when that field was not written). */
export function originOf(at: readonly string[], variant: VariantModel): Origin {
  // The value itself, else the closest written value above it (a block's field, then the block).
  for (let n = at.length; n >= 2; n--) {
    const origin = variant.valuesByPath.get(at.slice(0, n))?.origin;
    if (origin) return origin;
  }
  return variant.value.origin;
}

const fileHashes = new Map<string, { mtimeMs: number; size: number; sha256: string }>();

/**
 * Where a data file named at `at` lives: relative to the spec file that named it, confined to
 * the entry's folder (the root imports are confined to) and the stdlib, on real paths.
 */
function locateDataFile(
  written: string,
  at: readonly string[],
  variant: VariantModel,
  context: LoweringContext,
): { confined: Confined; root: string; origin: Origin } {
  const origin: Origin = variant.valuesByPath.get(at)?.origin ?? variant.value.origin;
  const fromStdlib = isInside(origin.file, STDLIB_ROOT);
  const root = fromStdlib ? STDLIB_ROOT : context.entryDir;
  return {
    confined: resolveConfined(
      written,
      path.dirname(origin.file),
      fromStdlib ? [STDLIB_ROOT] : [context.entryDir, STDLIB_ROOT],
    ),
    root,
    origin,
  };
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

function dataFileOutsideRoot(
  written: string,
  at: readonly string[],
  reason: "absolute" | "outside" | "link",
  root: string,
  origin: Origin,
): Diagnostic {
  return {
    code: "data-file-outside-root",
    severity: "error",
    message: `'${at.join(".")}': the data file '${written}' is refused: ${refusalReason(reason, root)}; it was not read`,
    file: origin.file,
    range: origin.range,
    hint: "data files must lie inside the experiment's folder (the entry spec's folder): move or copy the file there and name it with a relative path such as \"./data/questions.jsonl\"",
  };
}

/** The largest a data file may be, and the field that declares it (named in the hint). */
export interface DataFileLimit {
  readonly maxBytes: number;
  readonly field: string;
  /** The field's own bound: how far it may be raised. */
  readonly ceiling: number;
}

function dataFileTooLarge(
  written: string,
  at: readonly string[],
  size: number,
  limit: DataFileLimit,
  origin: Origin,
): Diagnostic {
  return {
    code: "data-file-too-large",
    severity: "error",
    message: `'${at.join(".")}': the data file '${written}' holds ${size} bytes, more than ${limit.field} (${limit.maxBytes}); it was not read`,
    file: origin.file,
    range: origin.range,
    hint:
      size <= limit.ceiling
        ? `raise ${limit.field} to at least ${size} (at most ${limit.ceiling}), or cut the file`
        : `the file is larger than ${limit.field} may be raised to (${limit.ceiling}): cut or split it`,
  };
}

/**
 * A data file named in the spec, hashed as it is read in chunks (a file seen before with the same
 * size and mtime is not read again); one larger than `limit` is reported and not read.
 */
export function dataFile(
  written: string,
  at: string[],
  variant: VariantModel,
  context: LoweringContext,
  diagnostics: Diagnostic[],
  limit?: DataFileLimit,
): { path: string; sha256: string } {
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
    if (limit && stat.size > limit.maxBytes) {
      diagnostics.push(dataFileTooLarge(written, at, stat.size, limit, origin));
      return { path: displayPath(absolute, context.entryDir), sha256 };
    }
    if (context.hashData === false) return { path: displayPath(absolute, context.entryDir), sha256 };
    const cached = fileHashes.get(confined.real);
    if (cached && cached.mtimeMs === stat.mtimeMs && cached.size === stat.size) sha256 = cached.sha256;
    else {
      sha256 = sha256File(confined.real);
      fileHashes.set(confined.real, { mtimeMs: stat.mtimeMs, size: stat.size, sha256 });
    }
  } catch {
    diagnostics.push(dataFileNotFound(written, at, absolute, origin));
  }
  return { path: displayPath(absolute, context.entryDir), sha256 };
}

/** Where a data file lies, on its real path; undefined when it is refused (dataFile reports why). */
export function dataFilePath(
  written: string,
  at: readonly string[],
  variant: VariantModel,
  context: LoweringContext,
): string | undefined {
  const { confined } = locateDataFile(written, at, variant, context);
  return confined.ok ? confined.real : undefined;
}

/** A data file's text; undefined when it cannot be read (dataFile reports why). */
export function readDataText(
  written: string,
  at: readonly string[],
  variant: VariantModel,
  context: LoweringContext,
): string | undefined {
  const file = dataFilePath(written, at, variant, context);
  if (file === undefined) return undefined;
  try {
    return readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
}
