// `arl report`: from one or more run directories, a self-contained HTML page (inline SVG charts
// and CSS, nothing loaded from the network) and a markdown summary. The same run directories
// always give the same files: nothing in them depends on the clock or the machine.
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { renderChart, type ChartSeries, type ChartSpec } from "./charts.js";
import { renderHtml } from "./html.js";
import { finiteNumber, loadRun, runLabels, type MetricsRow } from "./load.js";
import { renderMarkdown } from "./markdown.js";
import { sampleTrajectories } from "./samples.js";
import { evalSummaries, finalEval, pairedAgainst, runKs, wallTime } from "./stats.js";
import type { RenderedChart, Report, ReportModel, RunReport } from "./types.js";
import { at, defined, last } from "../contracts/checked.js";

export { ReportInputError } from "./load.js";

interface Curve {
  readonly key: string;
  readonly title: string;
  readonly yTitle: string;
  readonly value: (m: MetricsRow) => number | undefined;
  readonly yDomain?: readonly [number, number];
}

const metric = (name: string) => (m: MetricsRow) => finiteNumber(m.raw[name]);
const rewardTerm = (term: string) => (m: MetricsRow) => {
  const terms = m.raw.reward_terms;
  return typeof terms === "object" && terms !== null && !Array.isArray(terms) ? finiteNumber(terms[term]) : undefined;
};

function series(runs: readonly RunReport[], value: (m: MetricsRow) => number | undefined): ChartSeries[] {
  return runs.map((r) => ({
    name: r.label,
    points: r.run.metrics.flatMap((m) => {
      const y = value(m);
      return y === undefined ? [] : [{ x: m.iteration, y }];
    }),
  }));
}

function curveDefinitions(runs: readonly RunReport[]): { single: Curve[]; reward: "per-run" | "per-term"; terms: string[] } {
  const terms = [...new Set(runs.flatMap((r) => [...r.run.rewardTerms, ...r.run.metrics.flatMap((m) => (typeof m.raw.reward_terms === "object" && m.raw.reward_terms !== null && !Array.isArray(m.raw.reward_terms) ? Object.keys(m.raw.reward_terms) : []))]))];
  return {
    single: [
      { key: "success", title: "Success rate (train)", yTitle: "success", value: metric("success"), yDomain: [0, 1] },
      { key: "effective_group_ratio", title: "Effective group ratio", yTitle: "groups with signal", value: metric("effective_group_ratio"), yDomain: [0, 1] },
      { key: "generated_length", title: "Generated length", yTitle: "tokens / episode", value: metric("generated_length") },
      { key: "entropy", title: "Entropy", yTitle: "entropy", value: metric("entropy") },
      { key: "clip_fraction", title: "Clip fraction", yTitle: "fraction clipped", value: metric("clip_fraction") },
      { key: "kl", title: "KL", yTitle: "KL", value: metric("kl") },
    ],
    reward: runs.length === 1 ? "per-term" : "per-run",
    terms,
  };
}

function hasData(chart: ChartSpec): boolean {
  return chart.series.some((s) => s.points.length > 0);
}

function chartSpecs(runs: readonly RunReport[]): { charts: ChartSpec[]; missing: string[] } {
  const { single, reward, terms } = curveDefinitions(runs);
  const specs: ChartSpec[] = [];
  const [first, ...rest] = single;
  const success = defined(first, "the success curve");
  specs.push({ id: success.key, title: success.title, yTitle: success.yTitle, series: series(runs, success.value), yDomain: defined(success.yDomain, "the success curve's y domain") });
  if (reward === "per-term") {
    // One run: its total reward and each term on one chart.
    const run = at(runs, 0);
    const lines: ChartSeries[] = [{ name: "total", points: at(series([run], metric("reward")), 0).points }, ...terms.map((t) => ({ name: t, points: at(series([run], rewardTerm(t)), 0).points }))];
    specs.push({ id: "reward", title: terms.length > 0 ? "Reward per term" : "Reward", yTitle: "mean reward / episode", series: lines.filter((l) => l.points.length > 0) });
  } else {
    specs.push({ id: "reward", title: "Reward (total)", yTitle: "mean reward / episode", series: series(runs, metric("reward")) });
    terms.forEach((t, i) => specs.push({ id: `reward-term-${i + 1}`, title: `Reward term: ${t}`, yTitle: "mean term / episode", series: series(runs, rewardTerm(t)) }));
  }
  for (const c of rest) specs.push({ id: c.key.replace(/_/g, "-"), title: c.title, yTitle: c.yTitle, series: series(runs, c.value), ...(c.yDomain ? { yDomain: c.yDomain } : {}) });
  return { charts: specs.filter(hasData), missing: specs.filter((s) => !hasData(s)).map((s) => s.title) };
}

function evalChartSpecs(runs: readonly RunReport[], ks: readonly number[]): ChartSpec[] {
  return ks
    .map((k) => ({
      id: `eval-pass-${k}`,
      title: `Eval pass@${k} (95% CI over tasks)`,
      yTitle: `pass@${k}`,
      yDomain: [0, 1] as const,
      intervals: true,
      series: runs.map((r) => ({
        name: r.label,
        points: r.evals.flatMap((e) => {
          const i = e.pass.get(k);
          return i ? [{ x: e.iteration, y: i.estimate, low: i.low, high: i.high }] : [];
        }),
      })),
    }))
    .filter(hasData);
}

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
}

/** Reads the run directories and builds the report; throws ReportInputError for unusable inputs. */
export async function buildReport(dirs: readonly string[], options: ReportOptions): Promise<Report> {
  if (dirs.length === 0) throw new RangeError("a report needs at least one run directory");
  const runs = dirs.map((d) => loadRun(d, options.cwd));
  const labels = runLabels(runs);
  const notes: string[] = [];
  const reports: RunReport[] = runs.map((run, i) => {
    const evals = evalSummaries(run);
    const samples = sampleTrajectories(run.dir);
    if (samples.note) notes.push(`${at(labels, i)}: ${samples.note}.`);
    return { run, label: at(labels, i), evals, final: finalEval(evals), wall: wallTime(run), last: last(run.metrics), samples: samples.samples };
  });
  const ks = [...new Set(runs.flatMap(runKs))].sort((a, b) => a - b);
  const experiments = [...new Set(runs.map((r) => r.experiment))];
  if (experiments.length > 1) notes.push(`The runs come from different experiments (${experiments.join(", ")}): the comparison is only meaningful if they evaluate the same tasks.`);
  const seen = new Map<string, string>();
  for (const r of reports) {
    const other = seen.get(r.run.dir);
    if (other) notes.push(`'${r.run.given}' is the same run directory as '${other}'.`);
    seen.set(r.run.dir, r.run.given);
  }
  if (runs.length > 1 && new Set(runs.map((r) => r.hash)).size === 1 && experiments.length === 1) notes.push("All runs have the same plan hash: they are repeats of one plan, not variants.");

  const { charts, missing } = chartSpecs(reports);
  const baseline = at(reports, 0);
  const comparison = reports.length > 1 ? { baseline, rows: reports.slice(1).flatMap((r) => pairedAgainst(baseline.run, r.run)) } : null;
  for (const row of comparison?.rows ?? []) {
    if (row.result && row.baselineIteration !== row.iteration && row.k === comparison?.rows.find((r) => r.run === row.run)?.k) {
      const label = at(labels, runs.indexOf(row.run));
      notes.push(`${label} is compared at its last eval, iteration ${row.iteration}, and ${baseline.label} at iteration ${row.baselineIteration}: the paired difference mixes training progress with the change between the runs.`);
    }
  }
  const title = experiments.length === 1 ? (runs.length === 1 ? `${at(runs, 0).experiment} / ${at(runs, 0).variant}` : `${at(experiments, 0)}: ${runs.length} runs`) : `${runs.length} runs`;
  const model: ReportModel = {
    title,
    arlVersion: options.arlVersion,
    runs: reports,
    ks,
    curves: await render(charts),
    missingCurves: missing,
    evalCharts: await render(evalChartSpecs(reports, ks)),
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
