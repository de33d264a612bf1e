// Lock files: `spec.arl.lock` beside a spec records every variant's plan hash, so that a change
// of meaning that nobody asked for fails `arl check` (and CI). `arl lock` writes it; the
// compiler's plan stage compares it.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import * as z from "zod";
import type { Diagnostic } from "../diagnostics/diagnostic.js";
import type { SemanticModel } from "../semantics/analyze.js";
import { declarationNameRange } from "../semantics/declarations.js";
import { prettyJson } from "./canonical.js";
import { fileStart, loweringContext, lowerModel, type LoweredPlan, type LowerOptions } from "./lower.js";
import { stdlibVersion } from "./version.js";

const LOCK_FORMAT_VERSION = 1;

export const lockSchema = z.strictObject({
  lock_version: z.literal(LOCK_FORMAT_VERSION),
  spec: z.string(),
  stdlib_version: z.string(),
  /** experiment -> variant -> `sha256:<hex>` */
  experiments: z.record(z.string(), z.record(z.string(), z.string().regex(/^sha256:[0-9a-f]{64}$/))),
});

export type LockFile = z.output<typeof lockSchema>;

export function lockPath(entry: string): string {
  return `${entry}.lock`;
}

export function buildLock(entry: string, plans: readonly LoweredPlan[]): LockFile {
  const experiments: Record<string, Record<string, string>> = {};
  for (const p of [...plans].sort((a, b) => cmp(a.experiment, b.experiment) || cmp(a.variant, b.variant))) {
    (experiments[p.experiment] ??= {})[p.variant] = p.plan.hash;
  }
  return { lock_version: LOCK_FORMAT_VERSION, spec: path.basename(entry), stdlib_version: stdlibVersion(), experiments };
}

/** Pretty JSON, stable order (experiments and variants sorted). */
export function renderLock(lock: LockFile): string {
  return prettyJson(lock);
}

type ReadLock = { readonly lock: LockFile } | { readonly error: string } | undefined;

/** The lock beside `entry`: undefined when there is none. */
function readLock(entry: string): ReadLock {
  const file = lockPath(entry);
  if (!existsSync(file)) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    return { error: `cannot read it as JSON (${(error as Error).message})` };
  }
  const parsed = lockSchema.safeParse(json);
  if (!parsed.success) return { error: `it is not an arl lock file (${parsed.error.issues[0]?.path.join(".") || "top level"}: ${parsed.error.issues[0]?.message})` };
  return { lock: parsed.data };
}

/**
 * The compiler's plan stage, run when the spec has no errors: every variant must lower (data
 * files exist, resources split evenly), and an existing lock file must match the variants' hashes.
 */
export function planStage(model: SemanticModel, options: LowerOptions = {}): Diagnostic[] {
  const entry = model.program.entry;
  const lock = readLock(entry);
  // Without a lock only lowering's own diagnostics matter: data files are looked for, not read,
  // and no plan is built or hashed.
  if (lock === undefined) return lowerModel(model, { ...loweringContext(model.program), hashData: false, plans: false }, options).diagnostics;
  const lockName = path.basename(lockPath(entry));
  const hint = `run 'arl lock ${path.basename(entry)}' if the change is intended`;
  if ("error" in lock) {
    const message = `the lock file '${lockName}' is unusable: ${lock.error}`;
    return [{ code: "invalid-lock-file", severity: "error", message, file: entry, range: fileStart(), hint: `run 'arl lock ${path.basename(entry)}' to write it again` }];
  }
  const lowered = lowerModel(model, loweringContext(model.program), options);
  if (lowered.diagnostics.some((d) => d.severity === "error")) return lowered.diagnostics;
  return [...lowered.diagnostics, ...compareLock(model, lock.lock, lowered.plans, lockName, hint)];
}

function compareLock(model: SemanticModel, lock: LockFile, plans: readonly LoweredPlan[], lockName: string, hint: string): Diagnostic[] {
  const out: Diagnostic[] = [];
  const current = new Map<string, Map<string, string>>();
  for (const p of plans) {
    let m = current.get(p.experiment);
    if (!m) current.set(p.experiment, (m = new Map<string, string>()));
    m.set(p.variant, p.plan.hash);
  }
  const stdlibNote = lock.stdlib_version !== stdlibVersion() ? ` (locked with stdlib ${lock.stdlib_version}, compiled with ${stdlibVersion()})` : "";
  for (const experiment of model.experiments) {
    const now = current.get(experiment.name) ?? new Map<string, string>();
    const locked = lock.experiments[experiment.name];
    const changed: string[] = [];
    const added: string[] = [];
    const removed: string[] = [];
    for (const [variant, hash] of now) {
      const before = locked?.[variant];
      if (before === undefined) added.push(variant);
      else if (before !== hash) changed.push(variant);
    }
    for (const variant of Object.keys(locked ?? {})) if (!now.has(variant)) removed.push(variant);
    if (changed.length + added.length + removed.length === 0) continue;
    const parts = [
      changed.length ? `changed ${list(changed)}` : "",
      added.length ? `added ${list(added)}` : "",
      removed.length ? `removed ${list(removed)}` : "",
    ].filter(Boolean);
    const what = locked === undefined ? `experiment '${experiment.name}' is not in the lock file '${lockName}'` : `experiment '${experiment.name}' does not match the lock file '${lockName}'`;
    out.push({
      code: "lock-mismatch",
      severity: "error",
      message: `${what}: ${parts.join("; ")}${stdlibNote}`,
      file: experiment.declaration.module.path,
      range: declarationNameRange(experiment.declaration),
      hint,
    });
  }
  const known = new Set(model.experiments.map((e) => e.name));
  for (const [name, variants] of Object.entries(lock.experiments)) {
    if (known.has(name)) continue;
    out.push({
      code: "lock-mismatch",
      severity: "error",
      message: `the lock file '${lockName}' has experiment '${name}', which the spec no longer declares: removed ${list(Object.keys(variants))}`,
      file: model.program.entry,
      range: fileStart(),
      hint,
    });
  }
  return out;
}

function list(names: readonly string[]): string {
  return names.map((n) => `'${n}'`).join(", ");
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
