// The semantic stage: a loaded program -> typed experiments, one per variant, with every
// problem as a diagnostic. Lint rules and lowering read the model this builds.
import type { Diagnostic } from "../diagnostics/diagnostic.js";
import { didYouMean } from "../contracts/suggest.js";
import type { Module, Program } from "../language/imports.js";
import { DeclarationIndex, type Declaration } from "./declarations.js";
import { Evaluator } from "./evaluate.js";
import { ExpressionChecker, type RewardExpr, type RewardTerm } from "./expressions.js";
import type { WrittenValues } from "./plain.js";
import { declarationKinds, experimentSchema, type ExperimentConfig } from "./schema/experiment.js";
import { rewardSettingNames } from "./schema/reward.js";
import { toolSchema, type Tool } from "./schema/tool.js";
import { toFunctionTool, toolSchemaProblems, type FunctionTool } from "./tool-schema.js";
import { ParseMemo, validate } from "./validate.js";
import type { Origin, RecordValue } from "./values.js";
import { expandVariants, type Override } from "./variants.js";
import { at, defined } from "../contracts/checked.js";

export interface ResolvedTool {
  /** The name the model calls it by. */
  readonly name: string;
  /** The env that provides and executes it; null for tools declared outside any env. */
  readonly env: string | null;
  readonly definition: Tool;
  readonly schema: FunctionTool;
  readonly origin: Origin;
}

export interface VariantModel {
  readonly name: string;
  readonly overrides: readonly Override[];
  /** The variant as written (with origins), for the editor and for lint locations. */
  readonly value: RecordValue;
  /** The values written in `value`, by config path. */
  readonly valuesByPath: WrittenValues;
  /** Typed, every default filled in. Undefined when the variant has type errors. */
  readonly config?: ExperimentConfig;
  readonly rewardTerms: ReadonlyMap<string, RewardTerm>;
  readonly constraints: ReadonlyMap<string, RewardExpr>;
  /** `eval.success` as written, typed as a condition; undefined when not written (lowering picks the env's `success` signal). */
  readonly evalSuccess?: RewardExpr;
  readonly tools: readonly ResolvedTool[];
  /**
   * The variant's content (an id of its plain value's content key, validate.ts's ParseMemo) when
   * the check memoises: variants with the same key typed the same; lint adds the resolved tools to it (docs/architecture.md, "Memoisation").
   */
  readonly contentKey?: string;
}

export interface ExperimentModel {
  readonly name: string;
  readonly declaration: Declaration;
  readonly variants: readonly VariantModel[];
}

export interface SemanticModel {
  readonly program: Program;
  readonly experiments: readonly ExperimentModel[];
  readonly diagnostics: readonly Diagnostic[];
}

export interface AnalyzeOptions {
  /** Type each distinct variant content once (the default); false types every variant afresh (the tests' reference). */
  readonly memoise?: boolean;
}

export function analyze(program: Program, options: AnalyzeOptions = {}): SemanticModel {
  const index = new DeclarationIndex(program);
  const diagnostics: Diagnostic[] = [...index.diagnostics];
  reportUnknownKinds(program, diagnostics);
  const evaluator = new Evaluator(index);
  const tools = new ToolDeclarations(evaluator, diagnostics);
  const entry = program.modules.get(program.entry);
  const experiments: ExperimentModel[] = [];
  // Sweeps, ablations and repeated experiments give many variants the same content.
  const memo: ParseMemo | undefined = options.memoise === false ? undefined : new ParseMemo();
  if (entry) {
    for (const decl of index.declarationsOf(entry).values()) {
      // Every tool of the file is checked, used or not, and whatever else is wrong: its
      // problems are all reported in the same run as the experiments'.
      if (decl.type === "tool") tools.check(decl);
      if (decl.type !== "experiment") continue;
      experiments.push(analyzeExperiment(decl, evaluator, index, tools, diagnostics, memo));
    }
  }
  append(diagnostics, evaluator.diagnostics);
  return { program, experiments, diagnostics: unique(diagnostics) };
}

function reportUnknownKinds(program: Program, diagnostics: Diagnostic[]): void {
  const kinds: readonly string[] = declarationKinds;
  for (const module of program.modules.values()) {
    for (const block of module.parsed.document.blocks) {
      if (kinds.includes(block.type.name)) continue;
      diagnostics.push({
        code: "unknown-block",
        severity: "error",
        message: `unknown top-level block '${block.type.name}'`,
        file: module.path,
        range: block.type.range,
        hint: didYouMean(block.type.name, kinds) ?? `top-level blocks are: ${kinds.join(", ")}`,
      });
    }
  }
}

/** Top-level `tool` declarations, each checked against the tool schema once. */
class ToolDeclarations {
  private readonly checked = new Map<Declaration, Tool | undefined>();

  constructor(
    private readonly evaluator: Evaluator,
    private readonly diagnostics: Diagnostic[],
  ) {}

  /** The typed tool, or undefined when it has errors (reported the first time). */
  check(decl: Declaration): Tool | undefined {
    if (this.checked.has(decl)) return this.checked.get(decl);
    const result = validate(this.evaluator.declaration(decl), toolSchema, {
      label: `tool '${decl.name}'`,
      origin: { file: decl.module.path, range: defined(decl.block.name, "the tool's name").range },
    });
    append(this.diagnostics, result.diagnostics);
    this.checked.set(decl, result.data);
    return result.data;
  }
}

function analyzeExperiment(
  decl: Declaration,
  evaluator: Evaluator,
  index: DeclarationIndex,
  toolDeclarations: ToolDeclarations,
  diagnostics: Diagnostic[],
  memo: ParseMemo | undefined,
): ExperimentModel {
  const value = evaluator.declaration(decl);
  const subject = {
    label: `experiment '${decl.name}'`,
    origin: { file: decl.module.path, range: defined(decl.block.name, "the experiment's name").range },
  };
  const variants: VariantModel[] = [];
  for (const variant of expandVariants(value, diagnostics)) {
    const result = validate(variant.value, experimentSchema, subject, memo);
    append(diagnostics, result.diagnostics);
    const config = result.data;
    const rewardTerms = new Map<string, RewardTerm>();
    const constraints = new Map<string, RewardExpr>();
    let tools: ResolvedTool[] = [];
    let evalSuccess: RewardExpr | undefined;
    if (config) {
      const scope = {
        envs: new Map(Object.entries(config.env).map(([name, env]) => [name, env.signals])),
        allowTool: false,
      };
      const checker = new ExpressionChecker(scope, diagnostics);
      const reward = variant.value.fields.get("reward");
      if (reward?.kind === "record") {
        for (const [name, term] of reward.fields) {
          if ((rewardSettingNames as readonly string[]).includes(name)) continue;
          // `on_env_eror: exclude` is a misspelt setting, not a term reading a signal `exclude`.
          const setting =
            term.kind === "name" && term.path.length === 1 ? didYouMean(name, rewardSettingNames) : undefined;
          if (setting) {
            const origin = reward.keyOrigins.get(name) ?? term.origin;
            diagnostics.push({
              code: "unknown-field",
              severity: "error",
              message: `unknown reward setting '${name}'`,
              file: origin.file,
              range: origin.range,
              hint: setting,
            });
            continue;
          }
          const typed = checker.rewardTerm(name, term);
          if (typed) rewardTerms.set(name, typed);
        }
      }
      tools = resolveTools(config, variant.value, decl.module, index, toolDeclarations, diagnostics);
      // Constraints judge the call itself: `call.tool` and `call.args.*` are checked against the
      // experiment's tools; one an ablation arm does not offer is still a name, not a typo.
      const declaredTools = [
        ...tools,
        ...Object.entries(config.env).flatMap(([env, e]) =>
          Object.entries(e.tool).map(([name, definition]) => ({ name, env, definition })),
        ),
        ...Object.entries(config.tool).map(([name, definition]) => ({ name, env: null, definition })),
      ];
      const constraintChecker = new ExpressionChecker({ ...scope, allowTool: true, tools: declaredTools }, diagnostics);
      const declared = variant.value.fields.get("constraints");
      if (declared?.kind === "record") {
        for (const [name, c] of declared.fields) {
          if (c.kind !== "call" || c.callee !== "block" || c.args.length !== 1) continue; // the schema reported it
          const cond = constraintChecker.condition(at(c.args, 0));
          if (cond) constraints.set(name, cond);
        }
      }
      const evaluation = variant.value.fields.get("eval");
      const success = evaluation?.kind === "record" ? evaluation.fields.get("success") : undefined;
      if (success && !(success.kind === "scalar" && success.value === null)) evalSuccess = checker.condition(success);
    }
    variants.push({
      name: variant.name,
      overrides: variant.overrides,
      value: variant.value,
      valuesByPath: result.valuesByPath,
      ...(config ? { config } : {}),
      rewardTerms,
      constraints,
      ...(evalSuccess ? { evalSuccess } : {}),
      tools,
      ...(result.contentKey === undefined ? {} : { contentKey: result.contentKey }),
    });
  }
  return { name: decl.name, declaration: decl, variants };
}

/** The tools offered to the model: the harness's list, or every env's own when it has none. */
function resolveTools(
  config: ExperimentConfig,
  value: RecordValue,
  module: Module,
  index: DeclarationIndex,
  toolDeclarations: ToolDeclarations,
  diagnostics: Diagnostic[],
): ResolvedTool[] {
  const envValues = value.fields.get("env");
  const originOfEnvTool = (env: string, tool: string): Origin => {
    const e = envValues?.kind === "record" ? envValues.fields.get(env) : undefined;
    const tools = e?.kind === "record" ? e.fields.get("tool") : undefined;
    return (tools?.kind === "record" ? tools.keyOrigins.get(tool) : undefined) ?? value.origin;
  };
  const envTool = (env: string, name: string): ResolvedTool => {
    const definition = defined(config.env[env]?.tool[name], `the tool ${name} of env ${env}`);
    return { name, env, definition, schema: toFunctionTool(name, definition), origin: originOfEnvTool(env, name) };
  };
  const out: ResolvedTool[] = [];
  const refs = config.harness.tools;
  if (refs === null) {
    for (const [env, e] of Object.entries(config.env))
      for (const name of Object.keys(e.tool)) out.push(envTool(env, name));
  } else {
    const list = Array.isArray(refs) ? refs : [refs];
    const harness = value.fields.get("harness");
    const toolsValue = harness?.kind === "record" ? harness.fields.get("tools") : undefined;
    const refOrigins: Origin[] =
      toolsValue?.kind === "list" ? toolsValue.items.map((i) => i.origin) : toolsValue ? [toolsValue.origin] : [];
    // Built when a reference fails, not for every reference of a long list.
    let candidates: string[] | undefined;
    const toolCandidates = () =>
      (candidates ??= [
        ...Object.entries(config.env).flatMap(([env, e]) => [
          `${env}.tools`,
          ...Object.keys(e.tool).map((t) => `${env}.${t}`),
        ]),
        ...Object.keys(config.tool),
      ]);
    list.forEach((ref, i) => {
      const origin = refOrigins[i] ?? value.origin;
      const [first, second, ...more] = ref.$name;
      const unresolved = () =>
        diagnostics.push({
          code: "unresolved-reference",
          severity: "error",
          message: `cannot find the tool '${ref.$name.join(".")}'`,
          file: origin.file,
          range: origin.range,
          hint:
            didYouMean(ref.$name.join("."), toolCandidates()) ??
            "name an env's tool (env.tool), all of an env's tools (env.tools), or a declared tool",
        });
      if (more.length > 0 || first === undefined) return unresolved();
      if (second !== undefined && config.env[first]) {
        if (second === "tools") for (const name of Object.keys(config.env[first].tool)) out.push(envTool(first, name));
        else if (config.env[first].tool[second]) out.push(envTool(first, second));
        else unresolved();
        return;
      }
      if (second === undefined && config.tool[first]) {
        const definition = config.tool[first];
        out.push({ name: first, env: null, definition, schema: toFunctionTool(first, definition), origin });
        return;
      }
      // A tool declared at the top level of this file or of an imported one.
      const imported = second === undefined ? undefined : index.importedModule(module, first);
      const decl =
        second === undefined
          ? index.declarationsOf(module).get(first)
          : imported && index.declarationsOf(imported).get(second);
      if (!decl || decl.type !== "tool") return unresolved();
      const definition = toolDeclarations.check(decl);
      if (definition)
        out.push({ name: decl.name, env: null, definition, schema: toFunctionTool(decl.name, definition), origin });
    });
  }
  // Names must be unique among the tools one episode sees; schemas must compile.
  const seen = new Map<string, ResolvedTool>();
  /** The first tool of each name, whichever env it is from. */
  const firstByName = new Map<string, ResolvedTool>();
  for (const t of out) {
    const key = `${t.env ?? "*"}:${t.name}`;
    const clash = seen.get(key) ?? (t.env === null ? firstByName.get(t.name) : seen.get(`*:${t.name}`));
    if (clash) {
      diagnostics.push({
        code: "duplicate-tool",
        severity: "error",
        message: `two tools named '${t.name}' are offered to the model`,
        file: t.origin.file,
        range: t.origin.range,
        related: [{ file: clash.origin.file, range: clash.origin.range, message: "the other one" }],
      });
    }
    seen.set(key, t);
    if (!firstByName.has(t.name)) firstByName.set(t.name, t);
    for (const problem of toolSchemaProblems(t.definition)) {
      diagnostics.push({
        code: "invalid-tool-schema",
        severity: "error",
        message: `tool '${t.name}' has an invalid parameter schema: ${problem}`,
        file: t.origin.file,
        range: t.origin.range,
      });
    }
  }
  return out;
}

/** `target.push(...items)` without passing every item as an argument: a spec with 100k errors overflows the stack that way. */
function append<T>(target: T[], items: readonly T[]): void {
  for (const item of items) target.push(item);
}

function unique(diagnostics: Diagnostic[]): Diagnostic[] {
  const seen = new Set<string>();
  return diagnostics.filter((d) => {
    const key = `${d.file}\0${d.range.start.offset}\0${d.range.end.offset}\0${d.code}\0${d.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
