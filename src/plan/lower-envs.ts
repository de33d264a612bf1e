// Lowering envs: every field explicit, signals sorted, and the data files an env names (sql's
// database and questions, an agent's task file) located inside the experiment's folder or the
// stdlib and recorded by their content hash (rollout.sft.data is lowered with the same
// dataFile, lower-rollout.ts). An agent env's `tasks` is its task file's line count.
import { readFileSync, statSync } from "node:fs";
import path from "node:path";
import type { Diagnostic } from "../diagnostics/diagnostic.js";
import { isInside, refusalReason, resolveConfined, type Confined } from "../language/confine.js";
import { STDLIB_ROOT } from "../contracts/paths.js";
import type { VariantModel } from "../semantics/analyze.js";
import { pathKey } from "../semantics/plain.js";
import type { Env } from "../semantics/schema/env.js";
import type { Origin } from "../semantics/values.js";
import { jsonObjectLines } from "../contracts/json-lines.js";
import { sha256File } from "./hash.js";
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
  if (common.kind === "agent") return lowerAgentEnv(name, env, common, variant, context, diagnostics);
  if (common.kind !== "sql") return common as PlanEnv;
  const sql = common as typeof common & { kind: "sql"; database: string | null; questions: string | null };
  return {
    ...sql,
    database: sql.database === null ? null : dataFile(sql.database, ["env", name, "database"], variant, context, diagnostics),
    questions: sql.questions === null ? null : dataFile(sql.questions, ["env", name, "questions"], variant, context, diagnostics),
  } as PlanEnv;
}

/** The origin of the value at `at` (the env's block when that field was not written). */
function originOf(at: readonly string[], variant: VariantModel): Origin {
  return variant.valuesByPath.get(pathKey(at))?.origin ?? variant.valuesByPath.get(pathKey(at.slice(0, 2)))?.origin ?? variant.value.origin;
}

/**
 * An agent env: its task file hashed, `tasks` its count of non-blank lines (each a JSON object;
 * a smaller `tasks` written in the spec uses the first ones), and no tools of its own (the
 * program brings them).
 */
function lowerAgentEnv(name: string, env: Env, common: Record<string, unknown>, variant: VariantModel, context: LoweringContext, diagnostics: Diagnostic[]): PlanEnv {
  if (env.kind !== "agent") throw new Error("not an agent env");
  const report = (code: string, at: string[], message: string, hint: string) => {
    const origin = originOf(at, variant);
    diagnostics.push({ code, severity: "error", message, file: origin.file, range: origin.range, hint });
  };
  if (Object.keys(env.tool).length > 0) {
    report(
      "agent-env-tools",
      ["env", name, "tool", Object.keys(env.tool)[0] ?? ""],
      `env '${name}' is of kind agent and declares tool ${Object.keys(env.tool).map((t) => `'${t}'`).join(", ")}: an agent program brings its own tools and runs them itself`,
      "remove the tool blocks; the program's tools are whatever it sends in its chat requests (docs/gateway.md#agent-programs)",
    );
  }
  const at = ["env", name, "task_file"];
  const taskFile = dataFile(env.task_file, at, variant, context, diagnostics);
  const lines = taskLines(env.task_file, at, variant, context);
  let tasks = env.tasks;
  if (typeof lines === "string") report("agent-task-file-invalid", at, `env '${name}': the task file '${env.task_file}' ${lines}`, "write one task a line as a JSON object, e.g. {\"question\": \"...\"}");
  else if (lines !== undefined) {
    const written = variant.valuesByPath.has(pathKey(["env", name, "tasks"]));
    if (written && env.tasks > lines) {
      report("agent-tasks-beyond-file", ["env", name, "tasks"], `env '${name}': tasks is ${env.tasks}, but the task file '${env.task_file}' has ${lines} task${lines === 1 ? "" : "s"}`, `remove tasks (it is the file's line count, ${lines}), or write at most ${lines}`);
    } else if (!written) tasks = lines;
  }
  return { ...common, tasks, task_file: taskFile } as PlanEnv;
}

/** The task file's count of non-blank lines; a string says what is wrong with it; undefined: unreadable (dataFile reported it). */
function taskLines(written: string, at: readonly string[], variant: VariantModel, context: LoweringContext): number | string | undefined {
  const { confined } = locateDataFile(written, at, variant, context);
  if (!confined.ok) return undefined;
  let text: string;
  try {
    text = readFileSync(confined.real, "utf8");
  } catch {
    return undefined;
  }
  const read = jsonObjectLines(text);
  if ("problem" in read) return `has a line that is ${read.problem} (line ${read.line})`;
  return read.objects.length === 0 ? "has no task (no non-blank line)" : read.objects.length;
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

/** The largest a data file may be, and the field that declares it (named in the hint). */
export interface DataFileLimit {
  readonly maxBytes: number;
  readonly field: string;
  /** The field's own bound: how far it may be raised. */
  readonly ceiling: number;
}

function dataFileTooLarge(written: string, at: readonly string[], size: number, limit: DataFileLimit, origin: Origin): Diagnostic {
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
 * A data file named in the spec, hashed as it is read (a file seen before with the same size and
 * mtime is not read again); one larger than `limit` is reported and not read.
 */
export function dataFile(written: string, at: string[], variant: VariantModel, context: LoweringContext, diagnostics: Diagnostic[], limit?: DataFileLimit): { path: string; sha256: string } {
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
