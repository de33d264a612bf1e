// `arl report`: from one or more run directories, a self-contained HTML page (inline SVG charts
// and CSS, nothing loaded from the network) and a markdown summary. The same run directories
// always give the same files: nothing in them depends on the clock or the machine.
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { renderChart, type ChartSpec } from "./charts.js";
import { evalCharts, learningCurves } from "./curves.js";
import { findGroup, groupRuns } from "./groups.js";
import { renderHtml } from "./html.js";
import { loadRun, ReportInputError, runLabels } from "./load.js";
import { renderMarkdown } from "./markdown.js";
import { sampleTrajectories } from "./samples.js";
import { evalSummaries, finalEval, pairedAgainst, rlGain, runKs, wallTime } from "./stats.js";
import type { RenderedChart, Report, ReportModel, RunReport } from "./types.js";
import { at, last } from "../contracts/checked.js";

export { ReportInputError } from "./load.js";
export { reportInputs, specRuns } from "./inputs.js";

async function render(specs: readonly ChartSpec[]): Promise<RenderedChart[]> {
  const out: RenderedChart[] = [];
  for (const spec of specs) out.push({ spec, svg: await renderChart(spec) });
  return out;
}

export interface ReportOptions {
  /** Directory relative paths are resolved against. */
  readonly cwd: string;
  /** The arl version named in the page's footer. */
  readonly arlVersion: string;
  /** The variant the others are compared with (a variant's label or a run's); default: the first. */
  readonly baseline?: string;
  /** EMA weight in [0, 1) for the learning curves (default 0: unsmoothed). */
  readonly smooth?: number;
  /** Remarks from finding the run directories (reportInputs). */
  readonly notes?: readonly string[];
}

/** Reads the run directories and builds the report; throws ReportInputError for unusable inputs. */
export async function buildReport(dirs: readonly string[], options: ReportOptions): Promise<Report> {
  if (dirs.length === 0) throw new RangeError("a report needs at least one run directory");
  const runs = dirs.map((d) => loadRun(d, options.cwd));
  const labels = runLabels(runs);
  const notes: string[] = [...(options.notes ?? [])];
  const reports: RunReport[] = runs.map((run, i) => {
    const evals = evalSummaries(run);
    const samples = sampleTrajectories(run.dir);
    if (samples.note) notes.push(`${at(labels, i)}: ${samples.note}.`);
    return {
      run,
      label: at(labels, i),
      evals,
      final: finalEval(evals),
      wall: wallTime(run),
      last: last(run.metrics),
      samples: samples.samples,
    };
  });
  const ks = [...new Set(runs.flatMap(runKs))].sort((a, b) => a - b);
  const experiments = [...new Set(runs.map((r) => r.experiment))];
  if (experiments.length > 1)
    notes.push(
      `The runs come from different experiments (${experiments.join(", ")}): the comparison is only meaningful if they evaluate the same tasks.`,
    );
  const seen = new Map<string, string>();
  for (const r of reports) {
    const other = seen.get(r.run.dir);
    if (other) notes.push(`'${r.run.given}' is the same run directory as '${other}'.`);
    seen.set(r.run.dir, r.run.given);
  }
  if (runs.length > 1 && new Set(runs.map((r) => r.hash)).size === 1 && experiments.length === 1)
    notes.push("All runs have the same plan hash: they are repeats of one plan, not variants.");

  const groups = groupRuns(reports);
  const seedsAggregated = groups.some((g) => g.members.length > 1);
  const baseline = options.baseline === undefined ? at(groups, 0) : findGroup(groups, options.baseline);
  if (!baseline)
    throw new ReportInputError(
      `--baseline '${options.baseline}' is none of the report's variants (${groups.map((g) => g.label).join(", ")})`,
      2,
    );
  const comparison =
    groups.length > 1
      ? {
          baseline,
          rows: groups
            .filter((g) => g !== baseline)
            .flatMap((g) =>
              pairedAgainst(
                baseline.members.map((m) => m.run),
                g.members.map((m) => m.run),
                g.label,
              ),
            ),
        }
      : null;
  for (const row of comparison?.rows ?? []) {
    if (
      row.result &&
      row.baselineIteration !== row.iteration &&
      row.k === comparison?.rows.find((r) => r.label === row.label)?.k
    ) {
      notes.push(
        `${row.label} is compared at its last eval, iteration ${row.iteration}, and ${baseline.label} at iteration ${row.baselineIteration}: the paired difference mixes training progress with the change between the runs.`,
      );
    }
  }
  const smooth = options.smooth ?? 0;
  const { charts, missing, omitted } = learningCurves(groups, { smooth, seedsAggregated });
  const headlineK = ks[0];
  const headlineSpec = headlineK === undefined ? undefined : evalCharts(groups, [headlineK], seedsAggregated)[0];
  const count = seedsAggregated
    ? `${groups.length} variant${groups.length === 1 ? "" : "s"}, ${runs.length} runs`
    : `${runs.length} runs`;
  const title =
    experiments.length === 1
      ? runs.length === 1
        ? `${at(runs, 0).experiment} / ${at(runs, 0).variant}`
        : `${at(experiments, 0)}: ${count}`
      : count;
  const model: ReportModel = {
    title,
    arlVersion: options.arlVersion,
    runs: reports,
    groups,
    seedsAggregated,
    smooth,
    ks,
    curves: await render(charts),
    missingCurves: missing,
    omittedCurves: omitted,
    headline:
      headlineK === undefined
        ? null
        : {
            k: headlineK,
            gains: groups.map((group) => ({
              group,
              gain: rlGain(
                group.members.map((m) => m.run),
                headlineK,
              ),
            })),
            chart: headlineSpec
              ? at(
                  await render([
                    {
                      ...headlineSpec,
                      id: "headline",
                      title: `Held-out pass@${headlineK} per eval`,
                      subtitle: `${seedsAggregated ? "mean over seeds, band from the lowest to the highest seed" : "95% interval over tasks"}${runs.some((r) => r.evals.some((e) => e.iteration < 0)) ? "; hollow diamond: before the cold start" : ""}`,
                      width: 600,
                      height: 150,
                    },
                  ]),
                  0,
                )
              : null,
          },
    evalCharts: await render(evalCharts(groups, ks, seedsAggregated)),
    comparison,
    notes,
  };
  return { model, html: renderHtml(model), markdown: renderMarkdown(model) };
}

/** Writes report.html and report.md into `outDir` (created if needed); returns their paths. */
export function writeReport(report: Report, outDir: string): string[] {
  mkdirSync(outDir, { recursive: true });
  const html = path.join(outDir, "report.html");
  const md = path.join(outDir, "report.md");
  writeFileSync(html, report.html);
  writeFileSync(md, report.markdown);
  return [html, md];
}
