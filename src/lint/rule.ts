// The shape of an RL lint rule and of what it sees: one experiment variant with its typed
// config, and a way to report a finding at a config path (located in the user's own file).
import type { RelatedInformation, Severity } from "../diagnostics/diagnostic.js";
import type { ExperimentModel, VariantModel } from "../semantics/analyze.js";
import type { ExperimentConfig } from "../semantics/schema/experiment.js";
import type { Origin, Value } from "../semantics/values.js";

/** A path into the experiment config, e.g. ["algorithm", "advantage", "baseline"]. */
export type ConfigPath = readonly (string | number)[];

export interface LintReport {
  /** What is wrong and why (the practice or paper behind it). */
  readonly message: string;
  /** What to do about it. */
  readonly hint?: string;
  /** A config path (located through the variant's written values) or a source origin. */
  readonly at: ConfigPath | Origin;
  /** Overrides the rule's default severity for this finding. */
  readonly severity?: Severity;
  readonly related?: readonly RelatedInformation[];
}

/**
 * What a rule reads. Its reports must follow from the config, the written paths and the variant's
 * typed reward terms, constraints and tools, not from names or source positions: lint computes
 * them once per distinct content and locates them in each variant (docs/architecture.md,
 * "Memoisation"). A report `at` a source origin, or with `related` places, is never shared.
 */
export interface LintContext {
  readonly experiment: ExperimentModel;
  readonly variant: VariantModel;
  /** The variant's typed config, every default filled in. */
  readonly config: ExperimentConfig;
  report(report: LintReport): void;
  /** Whether the user wrote a value at exactly this path (in any file), rather than taking the default. */
  isWritten(path: ConfigPath): boolean;
  /** The value written at exactly this path, if any. */
  written(path: ConfigPath): Value | undefined;
}

export interface LintRule {
  /** Stable kebab-case code, used in diagnostics and in `allow { CODE: "reason" }`. */
  readonly code: string;
  readonly severity: Severity;
  /** One line, for lists and completion. */
  readonly title: string;
  /** The practice or paper behind the rule, shown on editor hover and by `arl explain CODE`. */
  readonly explanation: string;
  check(ctx: LintContext): void;
}
