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
import {
  fileStart,
  loweringContext,
  lowerHashes,
  lowerModel,
  type LoweredHash,
  type LoweredPlan,
  type LowerOptions,
} from "./lower.js";
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
  return {
    lock_version: LOCK_FORMAT_VERSION,
    spec: path.basename(entry),
    stdlib_version: stdlibVersion(),
    experiments,
  };
}

/** Pretty JSON, stable order (experiments and variants sorted). */
export function renderLock(lock: LockFile): string {
  return prettyJson(lock);
}

export type ReadLock = { readonly lock: LockFile } | { readonly error: string } | undefined;

/** The lock beside `entry`: undefined when there is none. */
export function readLock(entry: string): ReadLock {
  const file = lockPath(entry);
  if (!existsSync(file)) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    return { error: `cannot read it as JSON (${(error as Error).message})` };
  }
  const parsed = lockSchema.safeParse(json);
  if (!parsed.success)
    return {
      error: `it is not an arl lock file (${parsed.error.issues[0]?.path.join(".") || "top level"}: ${parsed.error.issues[0]?.message})`,
    };
  return { lock: parsed.data };
}

/**
 * The compiler's plan stage, run when the spec has no errors: every variant must lower (data
 * files exist, resources split evenly), and an existing lock file must match the variants' hashes.
 */
export function planStage(model: SemanticModel, options: LowerOptions = {}): Diagnostic[] {
  const lock = readLock(model.program.entry);
  const part = planStageOf(model, lock, options);
  if (part.lowered.some((d) => d.severity === "error")) return part.lowered;
  return [
    ...part.lowered,
    ...part.compared,
    ...(lock && "lock" in lock
      ? lockedButUndeclared(model.program.entry, lock.lock, new Set(model.experiments.map((e) => e.name)))
      : []),
  ];
}

/**
 * The plan stage of the experiments in `model`, which may be some of the entry's (the language
 * server checks them by groups): lowering's diagnostics, and the comparison of those experiments
 * with their entries in the lock. The whole stage is `lowered` when it has an error, else both,
 * plus `lockedButUndeclared` over every experiment of the entry.
 */
export function planStageOf(
  model: SemanticModel,
  lock: ReadLock,
  options: LowerOptions = {},
): { lowered: Diagnostic[]; compared: Diagnostic[] } {
  const entry = model.program.entry;
  // Without a lock only lowering's own diagnostics matter: data files are looked for, not read,
  // and no plan is built or hashed.
  if (lock === undefined)
    return {
      lowered: lowerModel(model, { ...loweringContext(model.program), hashData: false, plans: false }, options)
        .diagnostics,
      compared: [],
    };
  if ("error" in lock) {
    const message = `the lock file '${path.basename(lockPath(entry))}' is unusable: ${lock.error}`;
    return {
      lowered: [
        {
          code: "invalid-lock-file",
          severity: "error",
          message,
          file: entry,
          range: fileStart(),
          hint: `run 'arl lock ${path.basename(entry)}' to write it again`,
        },
      ],
      compared: [],
    };
  }
  // Only the hashes are compared: a reused variant content is hashed, not built into a plan.
  const lowered = lowerHashes(model, loweringContext(model.program), options);
  if (lowered.diagnostics.some((d) => d.severity === "error")) return { lowered: lowered.diagnostics, compared: [] };
  return { lowered: lowered.diagnostics, compared: compareLock(model, lock.lock, lowered.hashes) };
}

function mismatchHint(entry: string): string {
  return `run 'arl lock ${path.basename(entry)}' if the change is intended`;
}

function compareLock(model: SemanticModel, lock: LockFile, hashes: readonly LoweredHash[]): Diagnostic[] {
  const lockName = path.basename(lockPath(model.program.entry));
  const hint = mismatchHint(model.program.entry);
  const out: Diagnostic[] = [];
  const current = new Map<string, Map<string, string>>();
  for (const p of hashes) {
    let m = current.get(p.experiment);
    if (!m) current.set(p.experiment, (m = new Map<string, string>()));
    m.set(p.variant, p.hash);
  }
  const stdlibNote =
    lock.stdlib_version !== stdlibVersion()
      ? ` (locked with stdlib ${lock.stdlib_version}, compiled with ${stdlibVersion()})`
      : "";
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
    const what =
      locked === undefined
        ? `experiment '${experiment.name}' is not in the lock file '${lockName}'`
        : `experiment '${experiment.name}' does not match the lock file '${lockName}'`;
    out.push({
      code: "lock-mismatch",
      severity: "error",
      message: `${what}: ${parts.join("; ")}${stdlibNote}`,
      file: experiment.declaration.module.path,
      range: declarationNameRange(experiment.declaration),
      hint,
    });
  }
  return out;
}

/** The lock's experiments that the entry, declaring `declared`, no longer declares. */
export function lockedButUndeclared(entry: string, lock: LockFile, declared: ReadonlySet<string>): Diagnostic[] {
  const lockName = path.basename(lockPath(entry));
  const out: Diagnostic[] = [];
  for (const [name, variants] of Object.entries(lock.experiments)) {
    if (declared.has(name)) continue;
    out.push({
      code: "lock-mismatch",
      severity: "error",
      message: `the lock file '${lockName}' has experiment '${name}', which the spec no longer declares: removed ${list(Object.keys(variants))}`,
      file: entry,
      range: fileStart(),
      hint: mismatchHint(entry),
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
