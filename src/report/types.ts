// The report model: what buildReport (index.ts) computes from the run directories and the HTML
// and markdown renderers read. Its own module so that the renderers depend on the model, not on
// the code that builds it.
import type { ChartSpec } from "./charts.js";
import type { MetricsRow, RunInfo } from "./load.js";
import type { SampleTrajectory } from "./samples.js";
import type { EvalSummary, PairedRow, WallTime } from "./stats.js";

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

export interface RenderedChart {
  readonly spec: ChartSpec;
  readonly svg: string;
}

export interface ReportModel {
  readonly title: string;
  readonly arlVersion: string;
  readonly runs: readonly RunReport[];
  /** Every k of pass@k any run evaluated, ascending. */
  readonly ks: readonly number[];
  readonly curves: readonly RenderedChart[];
  /** Learning curves with no data in any run. */
  readonly missingCurves: readonly string[];
  readonly evalCharts: readonly RenderedChart[];
  /** Several runs: paired per-task differences of each later run against the first. */
  readonly comparison: { readonly baseline: RunReport; readonly rows: readonly PairedRow[] } | null;
  /** Cross-run remarks (per-run notes are on each run). */
  readonly notes: readonly string[];
}

export interface Report {
  readonly model: ReportModel;
  readonly html: string;
  readonly markdown: string;
}
