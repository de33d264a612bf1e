// Lowering an env of a host library (docs/env-host.md, "Adding a library"): its knobs as written
// or defaulted, a file knob's file and a folder knob's files confined and hashed (each like a data
// file), `tasks` the count the knobs give (a seed list, the folder's games, a rows file's lines),
// and the library's checks that need no Python, each a diagnostic at the knob with a hint.
import { readdirSync, statSync } from "node:fs";
import path from "node:path";
import type { Diagnostic } from "../diagnostics/diagnostic.js";
import { resolveConfined } from "../contracts/confine.js";
import type { VariantModel } from "../semantics/analyze.js";
import type { Env } from "../semantics/schema/env.js";
import { hostLibraries } from "../contracts/libraries/index.js";
import type { DataFolderKnob, HostLibrary } from "../contracts/libraries/library.js";
import { jsonObjectLines } from "../contracts/json-lines.js";
import { dataFile, originOf, readDataText } from "./lower-data-files.js";
import { displayPath, type LoweringContext } from "./lower-context.js";
import type { PlanEnv } from "./schema.js";

/** The library declaration of a host library kind; undefined for the built-in kinds. */
export function hostLibraryOf(kind: string): HostLibrary | undefined {
  return hostLibraries.find((l) => l.kind === kind);
}

export function lowerHostEnv(
  name: string,
  env: Env,
  library: HostLibrary,
  common: Record<string, unknown>,
  variant: VariantModel,
  context: LoweringContext,
  diagnostics: Diagnostic[],
): PlanEnv {
  const report = (at: string[], message: string, hint: string) => {
    const origin = originOf(at, variant);
    diagnostics.push({
      code: "env-knob-invalid",
      severity: "error",
      message,
      file: origin.file,
      range: origin.range,
      hint,
    });
  };
  const config = env as unknown as Record<string, unknown>;
  const lowered: Record<string, unknown> = { ...common };
  let counted: number | undefined = library.taskCount?.(config);
  // A rows file bounds `tasks` (the first ones are used); a seed list or a folder of games is the task list.
  let bound: number | undefined;
  for (const [knob, folderKnob] of Object.entries(library.folders ?? {})) {
    const written = config[knob];
    if (typeof written !== "string" || !folderKnob) continue;
    const folder = dataFolder(written, folderKnob, ["env", name, knob], variant, context, diagnostics);
    lowered[knob] = folder ?? null;
    const tasksIn = folderKnob.taskExtensions;
    if (folder && tasksIn) counted = folder.files.filter((f) => tasksIn.some((e) => f.path.endsWith(e))).length;
  }
  for (const [knob, fileKnob] of Object.entries(library.files ?? {})) {
    const written = config[knob];
    if (typeof written !== "string" || !fileKnob) continue;
    const at = ["env", name, knob];
    lowered[knob] = dataFile(written, at, variant, context, diagnostics);
    if (!fileKnob.tasksAreLines) continue;
    const text = readDataText(written, at, variant, context);
    const read = text === undefined ? undefined : jsonObjectLines(text);
    if (read && "problem" in read)
      report(
        at,
        `env '${name}': the file '${written}' has a line that is ${read.problem} (line ${read.line})`,
        "write one task a line as a JSON object",
      );
    else if (read && read.objects.length === 0)
      report(
        at,
        `env '${name}': the file '${written}' has no task (no non-blank line)`,
        "write one task a line as a JSON object",
      );
    else if (read) bound = read.objects.length;
  }
  for (const problem of library.check?.(config) ?? [])
    report(
      ["env", name, ...problem.knob.split(".")],
      `env '${name}' (${library.kind}): ${problem.knob}: ${problem.message}`,
      problem.hint,
    );
  const written = variant.valuesByPath.has(["env", name, "tasks"]);
  if (counted !== undefined) {
    if (written && env.tasks !== counted)
      report(
        ["env", name, "tasks"],
        `env '${name}': tasks is ${env.tasks}, but its knobs give ${counted} task${counted === 1 ? "" : "s"}`,
        `remove tasks (it is ${counted}), or change the knobs that give it`,
      );
    lowered.tasks = counted;
  } else if (bound !== undefined) {
    if (written && env.tasks > bound)
      report(
        ["env", name, "tasks"],
        `env '${name}': tasks is ${env.tasks}, but its file has ${bound} task${bound === 1 ? "" : "s"}`,
        `remove tasks (it is the file's line count, ${bound}), or write at most ${bound}`,
      );
    if (!written) lowered.tasks = bound;
  }
  return lowered as PlanEnv;
}

/** A folder of the user's files: confined like a data file, each file with one of the knob's extensions hashed, in name order; undefined when it cannot be read (reported). */
function dataFolder(
  written: string,
  knob: DataFolderKnob,
  at: string[],
  variant: VariantModel,
  context: LoweringContext,
  diagnostics: Diagnostic[],
): { path: string; files: { path: string; sha256: string }[] } | undefined {
  const origin = originOf(at, variant);
  const confined = resolveConfined(written, path.dirname(origin.file), [context.entryDir]);
  const fail = (message: string, hint: string) => {
    diagnostics.push({
      code: "data-folder-invalid",
      severity: "error",
      message: `'${at.join(".")}': ${message}`,
      file: origin.file,
      range: origin.range,
      hint,
    });
    return undefined;
  };
  if (!confined.ok)
    return fail(
      `the folder '${written}' lies outside the experiment's folder (${confined.reason}); it was not read`,
      'put the files inside the spec\'s folder and name them with a relative path such as "./data"',
    );
  let names: string[];
  try {
    if (!statSync(confined.real).isDirectory())
      return fail(`'${written}' is not a folder`, "name a folder holding the data files");
    const listed = knob.recursive
      ? readdirSync(confined.real, { recursive: true, encoding: "utf8" })
      : readdirSync(confined.real);
    names = listed
      .map((n) => n.split(path.sep).join("/"))
      .filter((n) => knob.extensions.some((e) => n.endsWith(e)))
      .sort();
  } catch {
    return fail(
      `cannot read the folder '${written}' (looked for ${confined.path})`,
      "the path is relative to the spec file that names it",
    );
  }
  const wanted = knob.taskExtensions ?? knob.extensions;
  if (!names.some((n) => wanted.some((e) => n.endsWith(e))))
    return fail(
      `the folder '${written}' holds no file the library reads (${wanted.join(", ")})`,
      "name the folder that holds them, or leave the knob out",
    );
  const base = path.relative(path.dirname(origin.file), confined.path);
  const files = names.map((n) =>
    dataFile(path.posix.join(base.split(path.sep).join("/") || ".", n), at, variant, context, diagnostics),
  );
  return { path: displayPath(confined.path, context.entryDir), files };
}
