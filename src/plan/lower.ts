// Lowering: one typed experiment variant -> one plan, every default explicit. Values the spec
// leaves to "the usual" (batch size, eval samples, eval temperature, tool time limits) are
// resolved here so that the runtime decides nothing. Representation choices that do not change
// meaning (declaration order of envs, tools expanded from a whole env, parameter order, override
// order, -0.2 written as an expression) are normalised so that they do not change the hash.
import { readFileSync, statSync } from "node:fs";
import path from "node:path";
import { STDLIB_ROOT } from "../contracts/paths.js";
import type { Range } from "../contracts/source-range.js";
import type { Diagnostic } from "../diagnostics/diagnostic.js";
import { isInside, refusalReason, resolveConfined, type Confined } from "../language/confine.js";
import type { Program } from "../language/imports.js";
import { BlockIndex, locatePath } from "../lint/locate.js";
import type { ExperimentModel, ResolvedTool, SemanticModel, VariantModel } from "../semantics/analyze.js";
import type { RewardExpr } from "../semantics/expressions.js";
import { pathKey } from "../semantics/plain.js";
import { isPlainCall, isPlainExpression, isPlainName } from "../semantics/schema/common.js";
import type { Env } from "../semantics/schema/env.js";
import type { ExperimentConfig } from "../semantics/schema/experiment.js";
import { getPath, type Origin, type Value } from "../semantics/values.js";
import { sortedKeys } from "./canonical.js";
import { planHash, sha256Hex } from "./hash.js";
import { PLAN_FORMAT_VERSION, type JsonValue, type Plan, type PlanEnv, type PlanExpr, type PlanProvenance, type PlanReduction, type PlanStage, type PlanTool } from "./schema.js";
import { planRefusals } from "./runnable.js";
import { arlVersion, stdlibVersion } from "./version.js";

export interface LoweredPlan {
  readonly experiment: string;
  readonly variant: string;
  readonly plan: Plan;
}

export interface LoweringResult {
  readonly plans: LoweredPlan[];
  readonly diagnostics: Diagnostic[];
}

/** Per-program facts every variant's plan shares. */
export interface LoweringContext {
  readonly entry: string;
  readonly entryDir: string;
  readonly provenance: PlanProvenance;
  /** Read and hash data files (the default); false only checks that they exist (`arl check` without a lock). */
  readonly hashData?: boolean;
  /** The entry's blocks, to show a refusal on the field the user wrote. */
  readonly blocks?: BlockIndex;
}

export function loweringContext(program: Program): LoweringContext {
  const entryDir = path.dirname(program.entry);
  const sources = [...program.modules.values()]
    .map((m) => ({ path: displayPath(m.path, entryDir), sha256: sha256Hex(m.parsed.text) }))
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return {
    entry: program.entry,
    entryDir,
    blocks: new BlockIndex(program.modules.get(program.entry)),
    provenance: { arl_version: arlVersion(), stdlib_version: stdlibVersion(), entry: path.basename(program.entry), sources },
  };
}

/** Every variant of every experiment of the entry file. Variants with type errors are skipped (they were reported). */
export function lowerModel(model: SemanticModel, context: LoweringContext = loweringContext(model.program)): LoweringResult {
  const plans: LoweredPlan[] = [];
  const diagnostics: Diagnostic[] = [];
  for (const experiment of model.experiments) {
    for (const variant of experiment.variants) {
      const lowered = lowerVariant(experiment, variant, context);
      diagnostics.push(...lowered.diagnostics);
      if (lowered.plan) plans.push({ experiment: experiment.name, variant: variant.name, plan: lowered.plan });
    }
  }
  // Variants share most of their values: one problem is reported once.
  const seen = new Set<string>();
  const unique = diagnostics.filter((d) => {
    const key = `${d.file}\0${d.range.start.offset}\0${d.code}\0${d.message}`;
    return seen.has(key) ? false : (seen.add(key), true);
  });
  return { plans, diagnostics: unique };
}

export function lowerVariant(experiment: ExperimentModel, variant: VariantModel, context: LoweringContext): { plan?: Plan; diagnostics: Diagnostic[] } {
  const config = variant.config;
  const diagnostics: Diagnostic[] = [];
  if (!config) return { diagnostics };

  const envs: Record<string, PlanEnv> = {};
  for (const name of sortedKeys(config.env)) envs[name] = lowerEnv(name, config.env[name]!, variant, context, diagnostics);
  const stages = lowerStages(config, variant, experiment, diagnostics);
  if (!stages) return { diagnostics };

  const { tool_timeout_s, tools: _tools, ...harness } = config.harness;
  const k = [...new Set(config.eval.k)].sort((a, b) => a - b);
  const body: Omit<Plan, "hash" | "provenance"> = {
    format_version: PLAN_FORMAT_VERSION,
    experiment: experiment.name,
    variant: variant.name,
    description: config.description ?? null,
    overrides: lowerOverrides(variant, config),
    seed: config.seed,
    policy: config.policy,
    envs,
    tools: orderTools(config, variant.tools).map((t) => lowerTool(t, tool_timeout_s)),
    harness: { ...harness, tool_timeout_s },
    reward: {
      terms: sortedRecord(variant.rewardTerms, (t) => ({ kind: t.kind, expr: lowerExpr(t.expr) })),
      on_env_error: config.reward.on_env_error,
    },
    constraints: sortedRecord(variant.constraints, (c) => ({ action: "block" as const, condition: lowerExpr(c) })),
    mask: config.mask,
    algorithm: { ...config.algorithm, batch_size: config.algorithm.batch_size ?? config.rollout.tasks_per_batch * config.algorithm.group_size },
    rollout: config.rollout,
    eval: {
      ...config.eval,
      k,
      samples_per_task: config.eval.samples_per_task ?? k[k.length - 1]!,
      temperature: config.eval.temperature ?? config.policy.sampling.temperature,
      success: successCriterion(config, variant, experiment, context, diagnostics),
    },
    resources: config.resources,
    silenced: sortedKeys(config.allow).map((rule) => ({ rule, reason: config.allow[rule]! })),
    stages,
  };
  if (!diagnostics.some((d) => d.severity === "error")) diagnostics.push(...refusalDiagnostics(body as Plan, experiment, variant, context));
  if (diagnostics.some((d) => d.severity === "error")) return { diagnostics };
  // Plain data only: the config carries zod outputs that may share objects between variants.
  const plain = JSON.parse(JSON.stringify(body)) as Omit<Plan, "hash" | "provenance">;
  const { format_version, ...rest } = plain;
  const provenance = { ...context.provenance, sources: context.provenance.sources.map((f) => ({ ...f })) };
  const plan: Plan = { format_version, hash: planHash(plain), ...rest, provenance };
  return { plan, diagnostics };
}

// --- success and refusals ------------------------------------------------------------------

/**
 * When an episode counts as a success: eval.success as written, else the `success` signal every
 * env declares (a number signal succeeds above 0). Without either there is no criterion, and
 * guessing one (say, "reward > 0") would report a success rate of something else.
 */
function successCriterion(config: ExperimentConfig, variant: VariantModel, experiment: ExperimentModel, context: LoweringContext, diagnostics: Diagnostic[]): PlanExpr {
  if (variant.evalSuccess) return lowerExpr(variant.evalSuccess);
  const names = sortedKeys(config.env);
  const declared = names.map((n) => config.env[n]!.signals.success);
  if (declared.every((s) => s !== undefined)) {
    const timing = declared.some((s) => s!.scope === "state") ? "state" : "outcome";
    const signal: PlanExpr = { op: "signal", namespace: "env", name: "success", type: declared[0]!.type, timing };
    return declared.every((s) => s!.type === "bool") ? signal : { op: ">", args: [signal, { op: "const", value: 0 }] };
  }
  const lacking = names.filter((_, i) => declared[i] === undefined);
  const where = locate(["eval", "success"], experiment, variant, context);
  diagnostics.push({
    code: "no-success-criterion",
    severity: "error",
    message: `nothing says when an episode is a success: eval.success is not set and env${lacking.length > 1 ? "s" : ""} ${lacking.map((n) => `'${n}'`).join(", ")} declare${lacking.length > 1 ? "" : "s"} no 'success' signal`,
    file: where.origin.file,
    range: where.origin.range,
    hint: "name the criterion, e.g. eval { success: outcome.correct } (a condition over signals), or declare a success signal in the env",
    ...(where.related.length > 0 ? { related: where.related } : {}),
  });
  return { op: "const", value: false };
}

/** Where a plan field is written in the spec: the plan's `envs` are the spec's `env`. */
function specPath(planPath: readonly (string | number)[]): (string | number)[] {
  const [head, ...rest] = planPath;
  if (head === "envs") return ["env", ...rest];
  if (head === "tools") return ["harness", "tool_timeout_s"];
  return [...planPath];
}

function locate(at: readonly (string | number)[], experiment: ExperimentModel, variant: VariantModel, context: LoweringContext) {
  return locatePath(at, experiment, variant, context.entry, context.blocks ?? new BlockIndex(undefined));
}

/** What `arl run` would refuse in this plan (runnable.ts), at the spec fields that cause it. */
function refusalDiagnostics(plan: Plan, experiment: ExperimentModel, variant: VariantModel, context: LoweringContext): Diagnostic[] {
  return planRefusals(plan).map((r) => {
    // On the field when the spec writes it, else on the first written field it is computed from.
    const candidates = [r.path, ...(r.from ?? [])].map(specPath);
    const written = candidates.find((p) => variant.valuesByPath.has(pathKey(p))) ?? candidates[0]!;
    const where = locate(written, experiment, variant, context);
    return {
      code: r.code,
      severity: "error" as const,
      message: r.message,
      file: where.origin.file,
      range: where.origin.range,
      hint: r.hint,
      ...(where.related.length > 0 ? { related: where.related } : {}),
    };
  });
}

// --- envs and data files ---------------------------------------------------------------------

function lowerEnv(name: string, env: Env, variant: VariantModel, context: LoweringContext, diagnostics: Diagnostic[]): PlanEnv {
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
function dataFile(written: string, at: string[], variant: VariantModel, context: LoweringContext, diagnostics: Diagnostic[]): { path: string; sha256: string } {
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

/** Paths in plans: relative to the entry's directory, stdlib files as `std/...`, POSIX separators. */
function displayPath(absolute: string, entryDir: string): string {
  const inStdlib = path.relative(STDLIB_ROOT, absolute);
  const rel = inStdlib && !inStdlib.startsWith("..") && !path.isAbsolute(inStdlib) ? inStdlib : path.relative(entryDir, absolute);
  return rel.split(path.sep).join("/");
}

// --- tools -----------------------------------------------------------------------------------

const byEnvThenName = (a: ResolvedTool, b: ResolvedTool) =>
  (a.env ?? "") < (b.env ?? "") ? -1 : (a.env ?? "") > (b.env ?? "") ? 1 : a.name < b.name ? -1 : a.name > b.name ? 1 : 0;

/**
 * The order the model sees the tools in: an explicit list keeps its order; a whole env's set
 * (`bank.tools`, or every env's when the harness names none) is sorted by name, so that
 * reordering declarations does not change the plan.
 */
function orderTools(config: ExperimentConfig, tools: readonly ResolvedTool[]): ResolvedTool[] {
  const refs = config.harness.tools;
  if (refs === null) return [...tools].sort(byEnvThenName);
  const out: ResolvedTool[] = [];
  let i = 0;
  for (const ref of Array.isArray(refs) ? refs : [refs]) {
    const [first, second] = ref.$name;
    const env = first !== undefined && second === "tools" && ref.$name.length === 2 ? config.env[first] : undefined;
    const n = env ? Object.keys(env.tool).length : 1;
    out.push(...tools.slice(i, i + n).sort(byEnvThenName));
    i += n;
  }
  return i === tools.length ? out : [...tools]; // resolution already reported a problem
}

function lowerTool(tool: ResolvedTool, harnessTimeout: number): PlanTool {
  // A tool's own time limit wins when it sets one; otherwise the harness's default applies.
  const timeout_s = tool.definition.timeout_s ?? harnessTimeout;
  const fn = tool.schema.function;
  return {
    name: tool.name,
    env: tool.env,
    timeout_s,
    definition: {
      type: "function",
      function: { name: fn.name, description: fn.description, parameters: normaliseSchema(fn.parameters) as PlanTool["definition"]["function"]["parameters"] },
    },
  };
}

/**
 * Parameter schemas with their keys sorted and `required` (a set) sorted, so that the order
 * parameters were declared in changes neither the hash nor the plan's bytes.
 */
function normaliseSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(normaliseSchema);
  if (schema === null || typeof schema !== "object") return schema;
  const out: Record<string, unknown> = {};
  for (const k of sortedKeys(schema)) {
    const v = (schema as Record<string, unknown>)[k];
    out[k] = k === "required" && Array.isArray(v) ? [...(v as string[])].sort() : normaliseSchema(v);
  }
  return out;
}

// --- expressions -----------------------------------------------------------------------------

/** The IR as plain data, with constant arithmetic folded (`-0.2` inside an expression is the number -0.2). */
export function lowerExpr(e: RewardExpr): PlanExpr {
  switch (e.op) {
    case "const":
      return { op: "const", value: e.value };
    case "signal":
      return { op: "signal", namespace: e.namespace, ...(e.env !== undefined ? { env: e.env } : {}), name: e.name, type: e.type, timing: e.timing };
    default: {
      const args = e.args.map(lowerExpr);
      const nums = args.map((a) => (a.op === "const" && typeof a.value === "number" ? a.value : undefined));
      if (e.op === "neg" && nums[0] !== undefined) return { op: "const", value: nums[0] === 0 ? 0 : -nums[0] };
      if ((e.op === "+" || e.op === "-" || e.op === "*" || e.op === "/" || e.op === "%") && nums[0] !== undefined && nums[1] !== undefined) {
        const a = nums[0];
        const b = nums[1];
        const r = e.op === "+" ? a + b : e.op === "-" ? a - b : e.op === "*" ? a * b : e.op === "/" ? a / b : a % b;
        if (Number.isFinite(r)) return { op: "const", value: Object.is(r, -0) ? 0 : r };
      }
      return { op: e.op, args } as PlanExpr;
    }
  }
}

// --- overrides -------------------------------------------------------------------------------

/** What the variant sets, as typed values (`constant(1024)` is `{mode: "constant", constant: 1024}`), sorted by path. */
function lowerOverrides(variant: VariantModel, config: ExperimentConfig): Plan["overrides"] {
  const byPath = new Map<string, JsonValue>();
  for (const o of variant.overrides) byPath.set(o.path.join("."), overrideValue(o.path, o.value, variant, config));
  return [...byPath.keys()].sort().map((p) => ({ path: p, value: byPath.get(p)! }));
}

function overrideValue(at: readonly string[], written: Value, variant: VariantModel, config: ExperimentConfig): JsonValue {
  const [head, name] = at;
  if (head === "reward" && at.length === 2 && name !== undefined && variant.rewardTerms.has(name)) {
    const t = variant.rewardTerms.get(name)!;
    return { kind: t.kind, expr: lowerExpr(t.expr) } as unknown as JsonValue;
  }
  if (head === "constraints" && at.length === 2 && name !== undefined && variant.constraints.has(name)) {
    return { action: "block", condition: lowerExpr(variant.constraints.get(name)!) } as unknown as JsonValue;
  }
  let typed: unknown = config;
  for (const key of at) typed = typed !== null && typeof typed === "object" ? (typed as Record<string, unknown>)[key] : undefined;
  return typed !== undefined && isPlainJson(typed) ? (JSON.parse(JSON.stringify(typed)) as JsonValue) : writtenValue(written);
}

/** True when a typed value holds no spec-level markers (names, calls, unresolved expressions). */
function isPlainJson(v: unknown): boolean {
  if (v === null || typeof v !== "object") return typeof v !== "function" && v !== undefined;
  if (isPlainName(v) || isPlainCall(v) || isPlainExpression(v)) return false;
  return Object.values(v).every(isPlainJson);
}

/** A value as written, for the few places the typed config keeps references (e.g. harness.tools). */
function writtenValue(v: Value): JsonValue {
  switch (v.kind) {
    case "scalar":
      return v.value;
    case "name":
      return v.path.join(".");
    case "list":
      return v.items.map(writtenValue);
    case "record": {
      const out: Record<string, JsonValue> = {};
      for (const k of [...v.fields.keys()].sort()) out[k] = writtenValue(v.fields.get(k)!);
      return out;
    }
    case "call": {
      const named: Record<string, JsonValue> = {};
      for (const k of [...v.named.keys()].sort()) named[k] = writtenValue(v.named.get(k)!);
      return { call: v.callee, args: v.args.map(writtenValue), named };
    }
    case "expression":
      return { expression: v.origin.file === "" ? "" : sourceText(v.origin) };
  }
}

function sourceText(origin: Origin): string {
  try {
    return readFileSync(origin.file, "utf8").slice(origin.range.start.offset, origin.range.end.offset).replace(/\s+/g, " ");
  } catch {
    return "";
  }
}

// --- resources and stages --------------------------------------------------------------------

const denominators: Record<PlanReduction["mode"], Plan["stages"]["update"]["denominator"]> = {
  token_mean: { scope: "global", divide_by: "target_tokens", inner: "none" },
  seq_mean_token_mean: { scope: "global", divide_by: "sequences", inner: "sequence_target_tokens" },
  seq_mean_token_sum: { scope: "global", divide_by: "sequences", inner: "none" },
  constant: { scope: "global", divide_by: "sequences_times_constant", inner: "none" },
  group_token_mean: { scope: "global", divide_by: "groups", inner: "group_target_tokens" },
};

function lowerStages(config: ExperimentConfig, variant: VariantModel, experiment: ExperimentModel, diagnostics: Diagnostic[]): Plan["stages"] | undefined {
  const r = config.resources;
  const stages = planStages(r, config.algorithm.advantage.estimator, config.algorithm.reduction);
  if (!stages) {
    const nodes = r.backend === "torch" ? r.nodes : 1;
    const origin = variant.valuesByPath.get(pathKey(["resources", "gpus"]))?.origin ?? { file: experiment.declaration.module.path, range: experiment.declaration.block.name!.range };
    diagnostics.push({
      code: "uneven-gpus",
      severity: "error",
      message: `resources.gpus (${r.gpus}) does not split evenly across ${nodes} nodes`,
      file: origin.file,
      range: origin.range,
      hint: `use a multiple of ${nodes} GPUs, or change resources.nodes`,
    });
    return undefined;
  }
  return stages;
}

/** What each stage runs on, from the resources; undefined when the GPUs do not split evenly across the nodes. */
function planStages(r: Plan["resources"], estimator: Plan["algorithm"]["advantage"]["estimator"], reduction: PlanReduction): Plan["stages"] | undefined {
  const torch = r.backend === "torch";
  const nodes = torch ? r.nodes : 1;
  const processes = torch ? Math.max(r.gpus, nodes) : 1;
  if (processes % nodes !== 0) return undefined;
  const launcher = torch && (r.launcher === "torchrun" || (r.launcher === "auto" && processes > 1)) ? "torchrun" : "none";
  const trainer: PlanStage = { runs_on: "trainer", backend: r.backend, processes, nodes, processes_per_node: processes / nodes, launcher };
  const runtime: PlanStage = { runs_on: "runtime", backend: "local", processes: 1, nodes: 1, processes_per_node: 1, launcher: "none" };
  return {
    provision: trainer,
    rollout: trainer,
    reward: runtime,
    // GAE needs the critic's values, which only the trainer can compute.
    advantage: estimator === "gae" ? trainer : runtime,
    update: { ...trainer, reduction, denominator: denominators[reduction.mode] },
    eval: trainer,
    checkpoint: trainer,
  };
}

/**
 * The plan lowered again with another resources.backend (`arl run --backend`): the stages follow
 * the new backend, the change is recorded in the overrides, and the hash is taken again, so the
 * plan a run writes says what it ran. A string when the plan cannot run on that backend's layout.
 */
export function withBackend(plan: Plan, backend: Plan["resources"]["backend"]): Plan | string {
  if (plan.resources.backend === backend) return plan;
  const resources = { ...plan.resources, backend };
  const stages = planStages(resources, plan.algorithm.advantage.estimator, plan.algorithm.reduction);
  if (!stages) return `resources.gpus (${resources.gpus}) does not split evenly across ${resources.nodes} nodes`;
  const overrides = [...plan.overrides.filter((o) => o.path !== "resources.backend"), { path: "resources.backend", value: backend }].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const { hash: _hash, provenance, ...meaning } = plan;
  const next = JSON.parse(JSON.stringify({ ...meaning, overrides, resources, stages })) as Omit<Plan, "hash" | "provenance">;
  const { format_version, ...rest } = next;
  return { format_version, hash: planHash(next), ...rest, provenance };
}

// --- helpers ---------------------------------------------------------------------------------

function sortedRecord<V, W>(map: ReadonlyMap<string, V>, f: (v: V) => W): Record<string, W> {
  const out: Record<string, W> = {};
  for (const k of [...map.keys()].sort()) out[k] = f(map.get(k)!);
  return out;
}

/** A zero-width range at the start of a file, for diagnostics about a file as a whole. */
export function fileStart(): Range {
  return { start: { line: 1, column: 1, offset: 0 }, end: { line: 1, column: 1, offset: 0 } };
}
