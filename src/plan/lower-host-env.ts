// Lowering an env of a host library (docs/env-host.md, "Adding a library"): its knobs as written
// or defaulted, a folder knob's files confined and hashed (each like a data file), `tasks` the
// count the knobs give (a seed list, the folder's games), and the library's checks that need no
// Python, each a diagnostic at the knob with a hint.
import { readdirSync, statSync } from "node:fs";
import path from "node:path";
import type { Diagnostic } from "../diagnostics/diagnostic.js";
import { resolveConfined } from "../language/confine.js";
import type { VariantModel } from "../semantics/analyze.js";
import { pathKey } from "../semantics/plain.js";
import type { Env } from "../semantics/schema/env.js";
import { hostLibraries } from "../semantics/schema/libraries/index.js";
import type { HostLibrary } from "../semantics/schema/libraries/library.js";
import { dataFile, originOf } from "./lower-data-files.js";
import { displayPath, type LoweringContext } from "./lower-context.js";
import type { PlanEnv } from "./schema.js";

/** The library declaration of a host library kind; undefined for the built-in kinds. */
export function hostLibraryOf(kind: string): HostLibrary | undefined {
  return hostLibraries.find((l) => l.kind === kind);
}

export function lowerHostEnv(name: string, env: Env, library: HostLibrary, common: Record<string, unknown>, variant: VariantModel, context: LoweringContext, diagnostics: Diagnostic[]): PlanEnv {
  const report = (at: string[], message: string, hint: string) => {
    const origin = originOf(at, variant);
    diagnostics.push({ code: "env-knob-invalid", severity: "error", message, file: origin.file, range: origin.range, hint });
  };
  const config = env as unknown as Record<string, unknown>;
  const lowered: Record<string, unknown> = { ...common };
  let counted: number | undefined = library.taskCount?.(config);
  for (const [knob, extensions] of Object.entries(library.folders ?? {})) {
    const written = config[knob];
    if (typeof written !== "string") continue;
    const folder = dataFolder(written, extensions, ["env", name, knob], variant, context, diagnostics);
    lowered[knob] = folder;
    if (folder) counted = folder.files.filter((f) => !f.path.endsWith(".json")).length;
  }
  for (const problem of library.check?.(config) ?? []) report(["env", name, problem.knob], `env '${name}' (${library.kind}): ${problem.knob}: ${problem.message}`, problem.hint);
  if (counted !== undefined) {
    const written = variant.valuesByPath.has(pathKey(["env", name, "tasks"]));
    if (written && env.tasks !== counted) report(["env", name, "tasks"], `env '${name}': tasks is ${env.tasks}, but its knobs give ${counted} task${counted === 1 ? "" : "s"}`, `remove tasks (it is ${counted}), or change the seeds or the folder`);
    lowered.tasks = counted;
  }
  return lowered as PlanEnv;
}

/** A folder of the user's files: confined like a data file, each file with one of `extensions` hashed, in name order; undefined when it cannot be read (reported). */
function dataFolder(written: string, extensions: readonly string[], at: string[], variant: VariantModel, context: LoweringContext, diagnostics: Diagnostic[]): { path: string; files: { path: string; sha256: string }[] } | undefined {
  const origin = originOf(at, variant);
  const confined = resolveConfined(written, path.dirname(origin.file), [context.entryDir]);
  const fail = (message: string, hint: string) => {
    diagnostics.push({ code: "data-folder-invalid", severity: "error", message: `'${at.join(".")}': ${message}`, file: origin.file, range: origin.range, hint });
    return undefined;
  };
  if (!confined.ok) return fail(`the folder '${written}' lies outside the experiment's folder (${confined.reason}); it was not read`, "put the games inside the spec's folder and name them with a relative path such as \"./games\"");
  let names: string[];
  try {
    if (!statSync(confined.real).isDirectory()) return fail(`'${written}' is not a folder`, "name a folder holding the game files");
    names = readdirSync(confined.real).filter((n) => extensions.some((e) => n.endsWith(e))).sort();
  } catch {
    return fail(`cannot read the folder '${written}' (looked for ${confined.path})`, "the path is relative to the spec file that names it");
  }
  if (names.filter((n) => !n.endsWith(".json")).length === 0) return fail(`the folder '${written}' holds no game file (${extensions.filter((e) => e !== ".json").join(", ")})`, "generate games with tw-make, or leave the knob out to have them generated from the seeds");
  const base = path.relative(path.dirname(origin.file), confined.path);
  const files = names.map((n) => dataFile(path.posix.join(base.split(path.sep).join("/") || ".", n), at, variant, context, diagnostics));
  return { path: displayPath(confined.path, context.entryDir), files };
}
