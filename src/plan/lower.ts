// Lowering: one typed experiment variant -> one plan, every default explicit. Values the spec
// leaves to "the usual" (batch size, eval samples, eval temperature, tool time limits) are
// resolved here so that the runtime decides nothing. Representation choices that do not change
// meaning (declaration order of envs, tools expanded from a whole env, parameter order, override
// order, -0.2 written as an expression) are normalised so that they do not change the hash.
// This file is the sequence: envs (lower-envs.ts), tools (lower-tools.ts), expressions
// (lower-expr.ts), rollout (lower-rollout.ts), overrides (lower-overrides.ts), stages (stages.ts), then the hash.
import type { Diagnostic } from "../diagnostics/diagnostic.js";
import { at, defined, last } from "../contracts/checked.js";
import type { Range } from "../contracts/source-range.js";
import { BlockIndex, locatePath } from "../lint/locate.js";
import type { ExperimentModel, SemanticModel, VariantModel } from "../semantics/analyze.js";
import type { ExperimentConfig } from "../semantics/schema/experiment.js";
import { canonicalFields, canonicalize, sortedKeys } from "./canonical.js";
import { planHash, planHashOfFields } from "./hash.js";
import { type LoweringContext, loweringContext, sortedRecord } from "./lower-context.js";
import { lowerEnv } from "./lower-envs.js";
import { lowerExpr } from "./lower-expr.js";
import { lowerOverrides } from "./lower-overrides.js";
import { lowerResources, lowerRollout } from "./lower-rollout.js";
import { lowerTool, orderTools } from "./lower-tools.js";
import { planRefusals } from "./runnable.js";
import { PLAN_FORMAT_VERSION, type Plan, type PlanEnv, type PlanExpr } from "./schema.js";
import { lowerStages } from "./stages.js";

// The parts of lowering live in lower-*.ts and stages.ts; these stay importable from here.
export { loweringContext } from "./lower-context.js";
export { withBackend } from "./stages.js";

export interface LoweredPlan {
  readonly experiment: string;
  readonly variant: string;
  readonly plan: Plan;
}

export interface LoweringResult {
  readonly plans: LoweredPlan[];
  readonly diagnostics: Diagnostic[];
}

type PlanBody = Omit<Plan, "hash" | "provenance">;

export interface LowerOptions {
  /** Lower each distinct variant content once (the default); false lowers every variant afresh (the tests' reference). */
  readonly memoise?: boolean;
}

/** Every variant of every experiment of the entry file. Variants with type errors are skipped (they were reported). */
export function lowerModel(
  model: SemanticModel,
  context: LoweringContext = loweringContext(model.program),
  options: LowerOptions = {},
): LoweringResult {
  const plans: LoweredPlan[] = [];
  const diagnostics = lowerEach(model, context, options, {
    reused: (experiment, variant, memo, overrides) => {
      if (context.plans !== false)
        plans.push({ experiment, variant, plan: finishedAgain(memo, experiment, variant, overrides, context) });
    },
    lowered: (experiment, variant, plan) => plans.push({ experiment, variant, plan }),
  });
  return { plans, diagnostics };
}

/** A variant's plan hash, the one its plan would carry. */
export interface LoweredHash {
  readonly experiment: string;
  readonly variant: string;
  readonly hash: string;
}

/**
 * Every variant's plan hash (what a lock file records) and lowering's diagnostics, as
 * lowerModel would give them, without building the plan of a variant whose content was
 * lowered before: its hash comes from the memoised body's field texts and its own three
 * fields (on a 700-variant spec with a lock, copying every plan was most of the lock's cost).
 */
export function lowerHashes(
  model: SemanticModel,
  context: LoweringContext = loweringContext(model.program),
  options: LowerOptions = {},
): { hashes: LoweredHash[]; diagnostics: Diagnostic[] } {
  const hashes: LoweredHash[] = [];
  const diagnostics = lowerEach(model, { ...context, plans: true }, options, {
    reused: (experiment, variant, memo, overrides) =>
      hashes.push({
        experiment,
        variant,
        hash: hashAgain(memo, { experiment, variant, overrides: plainCopy(overrides) }),
      }),
    lowered: (experiment, variant, plan) => hashes.push({ experiment, variant, hash: plan.hash }),
  });
  return { hashes, diagnostics };
}

interface Emit {
  /** A variant whose content lowered before without a diagnostic: its memoised body, its own overrides. */
  reused(experiment: string, variant: string, memo: MemoisedBody, overrides: PlanBody["overrides"]): void;
  lowered(experiment: string, variant: string, plan: Plan): void;
}

/** The lowering loop of lowerModel and lowerHashes: each variant lowered, or its memoised content reused. */
function lowerEach(model: SemanticModel, context: LoweringContext, options: LowerOptions, emit: Emit): Diagnostic[] {
  const diagnostics: Diagnostic[] = [];
  // A variant content (in one module) that lowered without any diagnostic lowers so again: its
  // plan body is reused under the next variant's names and overrides, and hashed for it.
  const clean = options.memoise === false ? undefined : new Map<string, MemoisedBody | null>();
  for (const experiment of model.experiments) {
    for (const variant of experiment.variants) {
      const key =
        clean && variant.config && variant.contentKey !== undefined
          ? `${experiment.declaration.module.path}\0${variant.contentKey}`
          : undefined;
      const known = key === undefined ? undefined : clean?.get(key);
      if (known !== undefined && variant.config) {
        if (known) emit.reused(experiment.name, variant.name, known, lowerOverrides(variant, variant.config));
        continue;
      }
      const lowered = lowerVariant(experiment, variant, context);
      diagnostics.push(...lowered.diagnostics);
      if (key !== undefined && lowered.diagnostics.length === 0)
        clean?.set(key, lowered.body ? { body: lowered.body } : null);
      if (lowered.plan) emit.lowered(experiment.name, variant.name, lowered.plan);
    }
  }
  // Variants share most of their values: one problem is reported once.
  const seen = new Set<string>();
  return diagnostics.filter((d) => {
    const key = `${d.file}\0${d.range.start.offset}\0${d.code}\0${d.message}`;
    return seen.has(key) ? false : (seen.add(key), true);
  });
}

/** The plan of a lowered body: a plain copy, its hash, the program's provenance. */
function finished(body: PlanBody, context: LoweringContext): Plan {
  const plain = plainCopy(body);
  return withHash(plain, planHash(plain), context);
}

/** A variant content lowered once: its body, and (at the first reuse) its JSON text and its fields' canonical texts. */
interface MemoisedBody {
  readonly body: PlanBody;
  json?: string;
  fields?: Map<string, string>;
}

/** The fields a reused body takes from its variant; the rest are the memoised body's. */
const VARIANT_FIELDS = ["experiment", "variant", "overrides"] as const;

/**
 * The plan of a memoised body under another variant's names and overrides, equal to `finished`
 * of that body: a fresh copy parsed from the body's JSON text, hashed from the body's
 * canonical field texts with only the variant's own fields canonicalised again (on a 700-variant
 * spec with a lock file, copying and canonicalising every plan whole was a third of the check).
 */
function finishedAgain(
  memo: MemoisedBody,
  experiment: string,
  variant: string,
  overrides: PlanBody["overrides"],
  context: LoweringContext,
): Plan {
  const own = { experiment, variant, overrides: plainCopy(overrides) };
  const plain = { ...(JSON.parse(bodyJson(memo)) as PlanBody), ...own };
  return withHash(plain, hashAgain(memo, own), context);
}

/** Plain data: the config carries zod outputs that may share objects between variants. */
function plainCopy<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

function bodyJson(memo: MemoisedBody): string {
  memo.json ??= JSON.stringify(memo.body);
  return memo.json;
}

/** The hash of the memoised body under a variant's own fields (plain data): the body's field texts, those three canonicalised again. */
function hashAgain(memo: MemoisedBody, own: Pick<PlanBody, (typeof VARIANT_FIELDS)[number]>): string {
  memo.fields ??= canonicalFields(JSON.parse(bodyJson(memo)) as PlanBody);
  const fields = new Map(memo.fields);
  for (const k of VARIANT_FIELDS) {
    if (own[k] === undefined) fields.delete(k);
    else fields.set(k, canonicalize(own[k]));
  }
  return planHashOfFields(fields);
}

function withHash(plain: PlanBody, hash: string, context: LoweringContext): Plan {
  const { format_version, ...rest } = plain;
  const provenance = { ...context.provenance, sources: context.provenance.sources.map((f) => ({ ...f })) };
  return { format_version, hash, ...rest, provenance };
}

function lowerVariant(
  experiment: ExperimentModel,
  variant: VariantModel,
  context: LoweringContext,
): { plan?: Plan; body?: PlanBody; diagnostics: Diagnostic[] } {
  const config = variant.config;
  const diagnostics: Diagnostic[] = [];
  if (!config) return { diagnostics };

  const envs: Record<string, PlanEnv> = {};
  for (const name of sortedKeys(config.env))
    envs[name] = lowerEnv(name, defined(config.env[name], `env ${name}`), variant, context, diagnostics);
  const stages = lowerStages(config, variant, experiment, diagnostics);
  if (!stages) return { diagnostics };

  const { tool_timeout_s, tools: _tools, ...harness } = config.harness;
  const k = [...new Set(config.eval.k)].sort((a, b) => a - b);
  const body: PlanBody = {
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
    algorithm: {
      ...config.algorithm,
      batch_size: config.algorithm.batch_size ?? config.rollout.tasks_per_batch * config.algorithm.group_size,
    },
    rollout: lowerRollout(config, variant, context, diagnostics),
    eval: {
      ...config.eval,
      k,
      samples_per_task: config.eval.samples_per_task ?? last(k),
      temperature: config.eval.temperature ?? config.policy.sampling.temperature,
      success: successCriterion(config, variant, experiment, context, diagnostics),
    },
    resources: lowerResources(config),
    tracking: config.tracking,
    silenced: sortedKeys(config.allow).map((rule) => ({
      rule,
      reason: defined(config.allow[rule], `the reason of allow ${rule}`),
    })),
    stages,
  };
  if (!diagnostics.some((d) => d.severity === "error"))
    diagnostics.push(...refusalDiagnostics(body as Plan, experiment, variant, context));
  if (diagnostics.some((d) => d.severity === "error")) return { diagnostics };
  if (context.plans === false) return { body, diagnostics };
  return { plan: finished(body, context), body, diagnostics };
}

// --- success and refusals ------------------------------------------------------------------

/**
 * When an episode counts as a success: eval.success as written, else the `success` signal every
 * env declares (a number signal succeeds above 0). Without either there is no criterion, and
 * guessing one (say, "reward > 0") would report a success rate of something else.
 */
function successCriterion(
  config: ExperimentConfig,
  variant: VariantModel,
  experiment: ExperimentModel,
  context: LoweringContext,
  diagnostics: Diagnostic[],
): PlanExpr {
  if (variant.evalSuccess) return lowerExpr(variant.evalSuccess);
  const names = sortedKeys(config.env);
  const declared = names.map((n) => defined(config.env[n], `env ${n}`).signals.success);
  if (declared.every((s) => s !== undefined)) {
    const timing = declared.some((s) => s.scope === "state") ? "state" : "outcome";
    const signal: PlanExpr = { op: "signal", namespace: "env", name: "success", type: at(declared, 0).type, timing };
    return declared.every((s) => s.type === "bool") ? signal : { op: ">", args: [signal, { op: "const", value: 0 }] };
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

function locate(
  at: readonly (string | number)[],
  experiment: ExperimentModel,
  variant: VariantModel,
  context: LoweringContext,
) {
  return locatePath(at, experiment, variant, context.entry, context.blocks ?? new BlockIndex(undefined));
}

/** What `arl run` would refuse in this plan (runnable.ts), at the spec fields that cause it. */
function refusalDiagnostics(
  plan: Plan,
  experiment: ExperimentModel,
  variant: VariantModel,
  context: LoweringContext,
): Diagnostic[] {
  return planRefusals(plan).map((r) => {
    // On the field when the spec writes it, else on the first written field it is computed from.
    const candidates = [r.path, ...(r.from ?? [])].map(specPath);
    const written = candidates.find((p) => variant.valuesByPath.has(p)) ?? at(candidates, 0);
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

/** A zero-width range at the start of a file, for diagnostics about a file as a whole. */
export function fileStart(): Range {
  return { start: { line: 1, column: 1, offset: 0 }, end: { line: 1, column: 1, offset: 0 } };
}
