// The report model: what buildReport (index.ts) computes from the run directories and the HTML
// and markdown renderers read. Its own module so that the renderers depend on the model, not on
// the code that builds it.
import type { ChartSpec } from "./charts.js";
import type { MetricsRow, RunInfo } from "./load.js";
import type { SampleTrajectory } from "./samples.js";
import type { EvalSummary, PairedRow, RlGain, WallTime } from "./stats.js";

export interface RunReport {
  readonly run: RunInfo;
  readonly label: string;
  readonly evals: readonly EvalSummary[];
  readonly final: EvalSummary | undefined;
  readonly wall: WallTime | null;
  readonly last: MetricsRow;
  /** The best, median and worst training episode of the last iteration in the token buffer. */
  readonly samples: readonly SampleTrajectory[];
}

/** One variant of the report: a run, or the runs of one variant that differ only in their seed. */
export interface VariantGroup {
  readonly label: string;
  /** Its position among the variants: its colour on every chart. */
  readonly index: number;
  /** Its runs, by seed. */
  readonly members: readonly RunReport[];
}

/** A curve the page leaves out though runs recorded it, and why. */
export interface OmittedCurve {
  readonly title: string;
  readonly reason: string;
}

export interface RenderedChart {
  readonly spec: ChartSpec;
  readonly svg: string;
}

export interface ReportModel {
  readonly title: string;
  readonly arlVersion: string;
  readonly runs: readonly RunReport[];
  /** The variants, each with its seeds; one per run unless runs differ only in their seed. */
  readonly groups: readonly VariantGroup[];
  /** Some variant has several seeds: curves and tables show the mean and spread across seeds. */
  readonly seedsAggregated: boolean;
  /** The EMA weight the learning curves were smoothed with (0: none). */
  readonly smooth: number;
  /** Every k of pass@k any run evaluated, ascending. */
  readonly ks: readonly number[];
  readonly curves: readonly RenderedChart[];
  /** Learning curves with no data in any run. */
  readonly missingCurves: readonly string[];
  /** Learning curves left out though recorded (0 by construction, or a repeat of another), with why. */
  readonly omittedCurves: readonly OmittedCurve[];
  /** The page's headline: RL's own gain in pass@k (the smallest k) of each variant, and its eval chart, drawn large. */
  readonly headline: {
    readonly k: number;
    readonly gains: readonly { readonly group: VariantGroup; readonly gain: RlGain }[];
    readonly chart: RenderedChart | null;
  } | null;
  readonly evalCharts: readonly RenderedChart[];
  /** Several variants: paired per-task differences of each variant against the baseline (--baseline, else the first). */
  readonly comparison: { readonly baseline: VariantGroup; readonly rows: readonly PairedRow[] } | null;
  /** Cross-run remarks (per-run notes are on each run). */
  readonly notes: readonly string[];
}

export interface Report {
  readonly model: ReportModel;
  readonly html: string;
  readonly markdown: string;
}
