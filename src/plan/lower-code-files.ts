// The user's code behind an env, hashed into the plan like its data files (lower-data-files.ts), so
// that editing it changes the plan's hash and a lock file then reports lock-mismatch: an agent
// program's files (each word of its command that names a file or folder in the spec's folder), a
// verifiers taskset's module (a task line's `taskset`) and a gymnasium env's module (its
// `entry_point`, or an `id` written "module:EnvId"), when they lie in the spec's folder. Code found
// elsewhere (the stdlib's programs, installed packages, interpreters) is not the spec's.
import { readdirSync, statSync } from "node:fs";
import path from "node:path";
import { resolveConfined } from "../contracts/confine.js";
import { jsonObjectLines } from "../contracts/json-lines.js";
import type { VariantModel } from "../semantics/analyze.js";
import type { Env } from "../semantics/schema/env.js";
import { sha256File } from "./hash.js";
import { readDataText } from "./lower-data-files.js";
import { displayPath, type LoweringContext } from "./lower-context.js";

const ZERO = "0".repeat(64);

/** Folders a program folder's walk skips: tools' caches and version control, not the program. */
const SKIPPED = new Set(["__pycache__", "node_modules"]);

/** The files below `folder` (real path), sorted, skipping hidden entries and caches. */
function filesBelow(folder: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(folder).sort()) {
    if (name.startsWith(".") || SKIPPED.has(name)) continue;
    const full = path.join(folder, name);
    const stat = statSync(full);
    if (stat.isDirectory()) out.push(...filesBelow(full));
    else if (stat.isFile()) out.push(full);
  }
  return out;
}

/** The files a written path names inside the spec's folder (a file, or a folder's files); none when it names nothing there. */
function namedFiles(written: string, context: LoweringContext): string[] {
  if (written === "" || written.startsWith("-")) return [];
  const confined = resolveConfined(written, context.entryDir, [context.entryDir]);
  if (!confined.ok || confined.real === context.entryDir) return [];
  try {
    const stat = statSync(confined.real);
    if (stat.isFile()) return [confined.path];
    return stat.isDirectory() ? filesBelow(confined.path) : [];
  } catch {
    return [];
  }
}

/** A Python module's file in the spec's folder (`a.b`: `a/b.py` or `a/b/__init__.py`), or a `.py` path as written. */
function moduleFiles(module: string, context: LoweringContext): string[] {
  if (module.endsWith(".py") || module.includes("/")) return namedFiles(module, context);
  if (!/^[\w.]+$/.test(module)) return [];
  const base = module.split(".").join("/");
  const file = namedFiles(`${base}.py`, context);
  return file.length > 0 ? file : namedFiles(`${base}/__init__.py`, context);
}

/** The verifiers tasksets the task file's lines name (`taskset`), distinct. */
function tasksets(
  env: Extract<Env, { kind: "agent" }>,
  at: readonly string[],
  variant: VariantModel,
  context: LoweringContext,
): string[] {
  const text = readDataText(env.task_file, at, variant, context);
  const read = text === undefined ? undefined : jsonObjectLines(text);
  if (read === undefined || "problem" in read) return [];
  const named = read.objects
    .map((o) => (o as { taskset?: unknown }).taskset)
    .filter((t): t is string => typeof t === "string");
  return [...new Set(named)];
}

/**
 * The user's code files of env `name`, each with its sha256, in path order; undefined when the env
 * names none in the spec's folder (the plan then has no `code`, and its hash is what it was).
 */
export function envCodeFiles(
  name: string,
  env: Env,
  variant: VariantModel,
  context: LoweringContext,
): { path: string; sha256: string }[] | undefined {
  const found: string[] = [];
  if (env.kind === "agent") {
    env.command.forEach((word, i) => {
      if (word.startsWith("std:") || (i === 0 && word.startsWith("python:"))) return;
      found.push(...namedFiles(word, context));
    });
    for (const taskset of tasksets(env, ["env", name, "task_file"], variant, context))
      found.push(...moduleFiles(taskset, context));
  }
  if (env.kind === "gymnasium") {
    const config = env as unknown as { id: string | null; entry_point: string | null };
    for (const written of [config.entry_point, config.id]) {
      if (written?.includes(":")) found.push(...moduleFiles(written.slice(0, written.indexOf(":")), context));
    }
  }
  const files = new Map<string, { path: string; sha256: string }>();
  for (const file of found) {
    const written = displayPath(file, context.entryDir);
    // Found on disk a moment ago; `arl check` without a lock only needs to know they exist.
    if (!files.has(written))
      files.set(written, { path: written, sha256: context.hashData === false ? ZERO : sha256File(file) });
  }
  if (files.size === 0) return undefined;
  return [...files.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
