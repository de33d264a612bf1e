// Shared by the plan and CLI plan/lock/diff suites: temp workspaces, compiling and lowering a
// spec, and the published plan JSON Schema compiled with ajv.
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import { Compiler } from "../../src/compiler.js";
import { hasErrors } from "../../src/diagnostics/diagnostic.js";
import { lowerModel, type LoweredPlan } from "../../src/plan/lower.js";
import { renderPlanSchema } from "../../src/plan/write-schema.js";

/** The example specs the plan, CLI and env suites lower (test/fixtures/examples/README.md). */
export const examplesDir = fileURLToPath(new URL("../fixtures/examples/", import.meta.url));

export function workspace(files: Record<string, string | Buffer>, prefix = "arl-plan-"): string {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), text);
  }
  return dir;
}

/** Lowers a spec that must have no errors; the diagnostics are in the message when it has. */
export function lower(file: string): LoweredPlan[] {
  const result = new Compiler().check(file, { plan: false });
  const lowered = result.model && !hasErrors(result.diagnostics) ? lowerModel(result.model) : undefined;
  const problems = [...result.diagnostics, ...(lowered?.diagnostics ?? [])].filter((d) => d.severity === "error");
  if (!lowered || problems.length > 0)
    throw new Error(
      `${file} does not lower:\n${problems.map((d) => `${d.range.start.line}:${d.range.start.column} ${d.code}: ${d.message}`).join("\n")}`,
    );
  return lowered.plans;
}

/** The hash of the only plan of the only variant of a one-file spec written into a fresh workspace. */
export function hashesOf(files: Record<string, string>, entry = "spec.arl"): Record<string, string> {
  const dir = workspace(files);
  return Object.fromEntries(lower(path.join(dir, entry)).map((p) => [`${p.experiment}/${p.variant}`, p.plan.hash]));
}

let validator: ValidateFunction | undefined;

/** The published schema (what the build writes to dist/plan.schema.json), compiled by ajv in strict mode (type unions allowed: a constant is a number, string or boolean). */
export function validatePlan(plan: unknown): string[] {
  validator ??= new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true }).compile(
    JSON.parse(renderPlanSchema()) as object,
  );
  return validator(plan) ? [] : (validator.errors ?? []).map((e) => `${e.instancePath} ${e.message ?? ""}`);
}
