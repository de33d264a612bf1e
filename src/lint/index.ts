// RL lint rules over the semantic model: every rule of the registry runs on every variant that
// typed cleanly; findings are located in the entry file, silenced per experiment by
// `allow { CODE: "reason" }`, and merged across variants (naming the variants when only some
// of them have the finding).
import type { Diagnostic } from "../diagnostics/diagnostic.js";
import { didYouMean } from "../contracts/suggest.js";
import type { ExperimentModel, SemanticModel, VariantModel } from "../semantics/analyze.js";
import { declarationNameRange } from "../semantics/declarations.js";
import type { ExperimentConfig } from "../semantics/schema/experiment.js";
import type { Origin } from "../semantics/values.js";
import { BlockIndex, locatePath, type Location } from "./locate.js";
import type { ConfigPath, LintContext, LintReport, LintRule } from "./rule.js";
import { lintRules } from "./rules/index.js";
import type { LintRuleCode } from "../diagnostics/codes/index.js";

export { lintRules } from "./rules/index.js";

/** The rule with this code, for hover and explanations. */
export function lintRule(code: string): LintRule | undefined {
  return lintRules.find((r) => r.code === code);
}

export interface LintOptions {
  /** Run the rules once per distinct variant content (the default); false runs them on every variant (the tests' reference). */
  readonly memoise?: boolean;
}

type Linted = VariantModel & { config: ExperimentConfig };

/**
 * Each rule's reports on one variant content, before they are located; null when a report
 * names a source origin (located in that variant's own text, so not shared).
 */
type ReportMemo = Map<string, (readonly LintReport[])[] | null>;

export function lint(
  model: SemanticModel,
  rules: readonly LintRule[] = lintRules,
  options: LintOptions = {},
): Diagnostic[] {
  const entry = model.program.entry;
  const blocks = new BlockIndex(model.program.modules.get(entry));
  const out: Diagnostic[] = [];
  // Allow entries by where they are written: an entry inherited by several experiments is
  // "used" when its rule fired in any of them.
  const allows = new Map<string, { diagnostic: Diagnostic; used: boolean }>();
  const memo: ReportMemo | undefined = options.memoise === false ? undefined : new Map();

  for (const experiment of model.experiments) {
    const linted = experiment.variants.filter((v): v is Linted => v.config !== undefined);
    if (linted.length === 0) continue;
    const found = new Map<string, { diagnostic: Diagnostic; variants: string[] }>();
    for (const variant of linted) {
      const allowed = variant.config.allow;
      const reports = ruleReports(rules, experiment, variant, memo);
      for (const [r, rule] of rules.entries()) {
        for (const d of reports[r]?.map((report) => located(rule, report, experiment, variant, entry, blocks)) ?? []) {
          if (Object.hasOwn(allowed, rule.code)) {
            const key = allowKey(experiment, variant, rule.code, entry, blocks);
            const allow = allows.get(key.id);
            if (allow) allow.used = true;
            else allows.set(key.id, { diagnostic: unusedAllow(rule.code, key.location), used: true });
            continue;
          }
          const id = diagnosticKey(d);
          const seen = found.get(id);
          if (seen) {
            if (seen.variants[seen.variants.length - 1] !== variant.name) seen.variants.push(variant.name);
          } else found.set(id, { diagnostic: d, variants: [variant.name] });
        }
      }
      for (const code of Object.keys(allowed)) {
        const key = allowKey(experiment, variant, code, entry, blocks);
        // An entry written in another file is that file's to fix: its own check reports it.
        if (!key.written) continue;
        if (!rules.some((r) => r.code === code)) {
          out.push(unknownRule(code, key.location, rules));
          continue;
        }
        if (!allows.has(key.id)) allows.set(key.id, { diagnostic: unusedAllow(code, key.location), used: false });
      }
    }
    for (const { diagnostic, variants } of found.values()) {
      // Compared with all variants: one that did not type-check may well lack the finding.
      const some = variants.length < experiment.variants.length;
      const suffix = some ? ` (variant${variants.length > 1 ? "s" : ""} ${variants.join(", ")})` : "";
      out.push({ ...diagnostic, message: diagnostic.message + suffix });
    }
  }
  for (const a of allows.values()) if (!a.used) out.push(a.diagnostic);
  return unique(out);
}

/**
 * What each rule reports on `variant`, in rule order. Rules see the typed config, the written
 * paths, and the typed reward terms, constraints and tools: equal content (the variant's content
 * key) in the same module gives equal reports, so they are computed once and located per variant.
 */
function ruleReports(
  rules: readonly LintRule[],
  experiment: ExperimentModel,
  variant: Linted,
  memo: ReportMemo | undefined,
): (readonly LintReport[])[] {
  // Tools resolve against the declarations of the experiment's module: within one check, the
  // module and the content determine them.
  const key =
    memo && variant.contentKey !== undefined
      ? `${experiment.declaration.module.path}\0${variant.contentKey}`
      : undefined;
  const known = key === undefined ? undefined : memo?.get(key);
  if (known) return known;
  const reports = rules.map((rule) => runRule(rule, experiment, variant));
  if (key !== undefined)
    memo?.set(key, reports.every((rs) => rs.every((r) => isPath(r.at) && r.related === undefined)) ? reports : null);
  return reports;
}

function runRule(rule: LintRule, experiment: ExperimentModel, variant: Linted): LintReport[] {
  const out: LintReport[] = [];
  const ctx: LintContext = {
    experiment,
    variant,
    config: variant.config,
    isWritten: (path) => variant.valuesByPath.has(path),
    written: (path) => variant.valuesByPath.get(path),
    report: (r: LintReport) => out.push(r),
  };
  rule.check(ctx);
  return out;
}

/** A rule's report as a diagnostic, at its place in `variant`'s text. */
function located(
  rule: LintRule,
  r: LintReport,
  experiment: ExperimentModel,
  variant: VariantModel,
  entry: string,
  blocks: BlockIndex,
): Diagnostic {
  const where = locate(r.at, experiment, variant, entry, blocks);
  const related = [...where.related, ...(r.related ?? [])];
  return {
    code: rule.code as LintRuleCode,
    severity: r.severity ?? rule.severity,
    message: r.message,
    file: where.origin.file,
    range: where.origin.range,
    ...(r.hint ? { hint: r.hint } : {}),
    ...(related.length > 0 ? { related } : {}),
  };
}

function isPath(at: ConfigPath | Origin): at is ConfigPath {
  return Array.isArray(at);
}

function locate(
  at: ConfigPath | Origin,
  experiment: ExperimentModel,
  variant: VariantModel,
  entry: string,
  blocks: BlockIndex,
): Location {
  if (isPath(at)) return locatePath(at, experiment, variant, entry, blocks);
  if (at.file === entry) return { origin: at, related: [] };
  // A source location in another file: show it on the experiment, with a note.
  return {
    origin: { file: experiment.declaration.module.path, range: declarationNameRange(experiment.declaration) },
    related: [{ file: at.file, range: at.range, message: "the value comes from here" }],
  };
}

/** Where an allow entry is written (its key), identified by that place. */
function allowKey(
  experiment: ExperimentModel,
  variant: VariantModel,
  code: string,
  entry: string,
  blocks: BlockIndex,
): { id: string; location: Location; written: boolean } {
  const record = variant.valuesByPath.get(["allow"]);
  const keyOrigin = record?.kind === "record" ? record.keyOrigins.get(code) : undefined;
  const written = keyOrigin?.file === entry;
  const location = written
    ? { origin: keyOrigin, related: [] }
    : locatePath(["allow", code], experiment, variant, entry, blocks);
  const o = keyOrigin ?? location.origin;
  return { id: `${o.file}\0${o.range.start.offset}\0${code}`, location, written };
}

function unknownRule(code: string, where: Location, rules: readonly LintRule[]): Diagnostic {
  return {
    code: "unknown-rule",
    severity: "error",
    message: `'${code}' is not a lint rule, so there is nothing to allow`,
    file: where.origin.file,
    range: where.origin.range,
    hint:
      didYouMean(
        code,
        rules.map((r) => r.code),
      ) ?? "only RL lint rules can be silenced; syntax and schema errors must be fixed",
    ...(where.related.length > 0 ? { related: where.related } : {}),
  };
}

function unusedAllow(code: string, where: Location): Diagnostic {
  return {
    code: "unused-allow",
    severity: "info",
    message: `'${code}' is allowed but the rule does not fire in any variant of this experiment`,
    file: where.origin.file,
    range: where.origin.range,
    hint: "remove the entry, so the rule speaks up if the problem appears later",
    ...(where.related.length > 0 ? { related: where.related } : {}),
  };
}

function diagnosticKey(d: Diagnostic): string {
  return `${d.file}\0${d.range.start.offset}\0${d.range.end.offset}\0${d.code}\0${d.severity}\0${d.message}\0${d.hint ?? ""}`;
}

function unique(diagnostics: Diagnostic[]): Diagnostic[] {
  const seen = new Set<string>();
  return diagnostics.filter((d) => {
    const key = diagnosticKey(d);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
