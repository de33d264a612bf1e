// The HTML page of a report: one file with its CSS and SVG charts inline, no scripts and no
// network resources, readable offline and printable.
import { palette } from "./charts.js";
import {
  duration,
  escapeHtml as h,
  fixed,
  interval,
  jsonValue,
  percent,
  signed,
  signedInterval,
  verdict,
} from "./format.js";
import { finalOverTasks, finalSpread } from "./groups.js";
import { headlineCss, headlineSection } from "./headline.js";
import type { RenderedChart, ReportModel, RunReport } from "./types.js";
import type { JsonObject } from "./load.js";
import { shortHash } from "./load.js";
import { preflightCells } from "./preflight.js";
import { beforeTrainingPhases, type PairedRow } from "./stats.js";
import { at } from "../contracts/checked.js";

const css = `
:root { color-scheme: light; --ink: #1f2933; --muted: #616e7c; --line: #d9dee3; --soft: #f5f7fa; --accent: #3e6fa3; --warn-bg: #fff8e6; --warn: #8a5a00; --good: #2f7d32; --bad: #b3261e; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.5 system-ui, -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; color: var(--ink); background: #fff; }
main { max-width: 1160px; margin: 0 auto; padding: 24px 28px 48px; }
header.page { border-bottom: 2px solid var(--line); margin-bottom: 8px; padding-bottom: 12px; }
h1 { font-size: 24px; margin: 0 0 4px; }
h2 { font-size: 18px; margin: 32px 0 10px; padding-bottom: 4px; border-bottom: 1px solid var(--line); }
h3 { font-size: 15px; margin: 20px 0 8px; }
p.sub, .muted { color: var(--muted); }
p.sub { margin: 0; }
nav.toc { font-size: 13px; margin: 8px 0 0; }
nav.toc a { color: var(--accent); text-decoration: none; margin-right: 14px; }
code, .mono { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; font-size: 12.5px; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(340px, 1fr)); gap: 14px; }
.card { border: 1px solid var(--line); border-radius: 8px; padding: 12px 14px; background: #fff; }
.card h3 { margin: 0 0 6px; display: flex; align-items: center; gap: 8px; }
.swatch { display: inline-block; width: 12px; height: 12px; border-radius: 3px; flex: none; }
dl.kv { display: grid; grid-template-columns: max-content 1fr; gap: 3px 12px; margin: 0; }
dl.kv dt { color: var(--muted); }
dl.kv dd { margin: 0; overflow-wrap: anywhere; }
.badge { display: inline-block; font-size: 11.5px; font-weight: 600; padding: 1px 8px; border-radius: 10px; }
.badge.complete { background: #e3f4e4; color: var(--good); }
.badge.partial { background: var(--warn-bg); color: var(--warn); border: 1px solid #f0d9a0; }
table { border-collapse: collapse; margin: 6px 0 12px; font-size: 13px; }
th, td { border-bottom: 1px solid var(--line); padding: 5px 10px; text-align: left; vertical-align: top; }
th { background: var(--soft); font-weight: 600; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tr.better td.verdict { color: var(--good); font-weight: 600; }
tr.worse td.verdict { color: var(--bad); font-weight: 600; }
.charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(320px, 1fr)); gap: 12px; }
figure.chart { margin: 0; border: 1px solid var(--line); border-radius: 8px; padding: 4px; background: #fff; }
figure.chart svg { display: block; max-width: 100%; height: auto; }
.legend { display: flex; flex-wrap: wrap; gap: 4px 16px; margin: 4px 0 10px; font-size: 13px; }
.legend span { display: inline-flex; align-items: center; gap: 6px; }
.bar { display: flex; height: 14px; border-radius: 4px; overflow: hidden; min-width: 220px; background: var(--soft); }
.bar span { display: block; height: 100%; }
.notes { background: var(--warn-bg); border: 1px solid #f0d9a0; border-radius: 8px; padding: 8px 14px; }
.notes li { margin: 2px 0; }
details { margin: 4px 0 12px; }
pre.trajectory { white-space: pre-wrap; overflow-wrap: anywhere; background: var(--soft); border: 1px solid var(--line); border-radius: 6px; padding: 8px 10px; max-height: 480px; overflow: auto; }
summary { cursor: pointer; color: var(--accent); }
footer { margin-top: 40px; color: var(--muted); font-size: 12px; border-top: 1px solid var(--line); padding-top: 8px; }
${headlineCss}
@media print { .charts, .cards { grid-template-columns: repeat(2, 1fr); } figure.chart, .card { break-inside: avoid; } }
`;

const phaseColors = {
  before: "#9d755d",
  rollout: "#4c78a8",
  reward: "#f58518",
  update: "#54a24b",
  other: "#bab0ac",
} as const;

function colorOf(index: number): string {
  return at(palette, index % palette.length);
}

function statusBadge(r: RunReport): string {
  const { run } = r;
  if (run.partial)
    return `<span class="badge partial">partial: ${run.iterations} of ${run.plannedIterations} iterations</span>`;
  return `<span class="badge complete">complete: ${run.iterations} iteration${run.iterations === 1 ? "" : "s"}</span>`;
}

function objectOf(x: unknown): JsonObject | undefined {
  return typeof x === "object" && x !== null && !Array.isArray(x) ? (x as JsonObject) : undefined;
}

function trainerText(manifest: JsonObject | null): string {
  const trainer = objectOf(manifest?.trainer);
  if (!trainer) return "–";
  return [trainer.name, trainer.version]
    .filter((x) => x !== undefined && x !== null)
    .map(String)
    .join(" ");
}

function versionsText(manifest: JsonObject | null): string {
  const versions = objectOf(manifest?.versions);
  if (!versions) return "–";
  return Object.entries(versions)
    .map(([k, v]) => `${k} ${jsonValue(v)}`)
    .join(", ");
}

function modelText(manifest: JsonObject | null): string {
  const model = objectOf(manifest?.model);
  if (!model) return "–";
  const params =
    typeof model.parameters === "number"
      ? ` (${model.parameters.toLocaleString("en-US")} parameter${model.parameters === 1 ? "" : "s"})`
      : "";
  return `${jsonValue(model.name ?? "?")}${params}`;
}

function deviceText(manifest: JsonObject | null): string | undefined {
  const caps = objectOf(manifest?.capabilities);
  if (!caps || caps.device === undefined) return undefined;
  return `${jsonValue(caps.device)}${typeof caps.world_size === "number" ? ` × ${caps.world_size}` : ""}`;
}

function kv(rows: [string, string][]): string {
  return `<dl class="kv">${rows.map(([k, v]) => `<dt>${h(k)}</dt><dd>${v}</dd>`).join("")}</dl>`;
}

/** A run's colour: its variant's, so that a variant's seeds share one. */
function runColor(model: ReportModel, r: RunReport): string {
  return colorOf(model.groups.find((g) => g.members.includes(r))?.index ?? model.runs.indexOf(r));
}

function runCard(model: ReportModel, r: RunReport): string {
  const { run } = r;
  const m = run.manifest;
  const rows: [string, string][] = [
    ["experiment", h(run.experiment)],
    ["variant", h(run.variant)],
    ["status", statusBadge(r)],
    ["plan hash", `<code title="${h(run.hash)}">${h(run.hash)}</code>`],
    ["seed", run.seed === null ? "–" : String(run.seed)],
    ["trainer", h(trainerText(m))],
    ["model", h(modelText(m))],
  ];
  const device = deviceText(m);
  if (device) rows.push(["device", h(device)]);
  rows.push(["versions", h(versionsText(m))]);
  if (run.overrides.length > 0)
    rows.push([
      "overrides",
      run.overrides.map((o) => `<code>${h(o.path)} = ${h(JSON.stringify(o.value))}</code>`).join("<br>"),
    ]);
  if (r.wall)
    rows.push([
      "wall time",
      `${h(duration(r.wall.total))} (rollout ${percent(r.wall.rollout, r.wall.total)}, reward ${percent(r.wall.reward, r.wall.total)}, update ${percent(r.wall.update, r.wall.total)})`,
    ]);
  rows.push(["directory", `<code>${h(run.given)}</code>`]);
  return `<div class="card"><h3><span class="swatch" style="background:${runColor(model, r)}"></span>${h(r.label)}</h3>${run.description ? `<p class="muted" style="margin:0 0 6px">${h(run.description)}</p>` : ""}${kv(rows)}</div>`;
}

function summaryTable(model: ReportModel): string {
  const head = [
    "Run",
    "Status",
    "Seed",
    "Last iteration",
    "Success",
    "Reward",
    ...model.ks.map((k) => `Final pass@${k} [95% CI]`),
    "Eval iteration",
    "Wall time",
  ];
  const body = model.runs.map((r) => {
    const cells = [
      `<td>${h(r.label)}</td>`,
      `<td>${r.run.partial ? `partial (${r.run.iterations}/${r.run.plannedIterations})` : "complete"}</td>`,
      `<td class="num">${r.run.seed ?? "–"}</td>`,
      `<td class="num">${r.last.iteration}</td>`,
      `<td class="num">${fixed(r.last.raw.success as number)}</td>`,
      `<td class="num">${fixed(r.last.raw.reward as number)}</td>`,
      ...model.ks.map((k) => `<td class="num">${interval(r.final?.pass.get(k))}</td>`),
      `<td class="num">${r.final ? r.final.iteration : "–"}</td>`,
      `<td class="num">${r.wall ? duration(r.wall.total) : "–"}</td>`,
    ];
    return `<tr>${cells.join("")}</tr>`;
  });
  return table(head, body, [false, false, true, true, true, true, ...model.ks.map(() => true), true, true]);
}

function table(head: string[], body: string[], numeric: boolean[], caption?: string): string {
  return `<table>${caption ? `<caption class="muted" style="text-align:left">${caption}</caption>` : ""}<thead><tr>${head.map((c, i) => `<th${numeric[i] ? ' class="num"' : ""}>${h(c)}</th>`).join("")}</tr></thead><tbody>${body.join("")}</tbody></table>`;
}

function evalTable(r: RunReport, ks: readonly number[]): string {
  if (r.evals.length === 0) return `<p class="muted">No evaluation yet.</p>`;
  const head = ["Iteration", "Tasks", "Env errors", ...ks.map((k) => `pass@${k} [95% CI]`), "Source"];
  const body = r.evals.map(
    (e) =>
      `<tr><td class="num">${e.iteration < 0 ? "base (before the cold start)" : `${e.iteration}${e.iteration === 0 ? " (before training)" : ""}`}</td><td class="num">${e.tasks ?? "–"}</td><td class="num">${e.envErrors ?? "–"}</td>${ks
        .map((k) => `<td class="num">${interval(e.pass.get(k))}</td>`)
        .join(
          "",
        )}<td class="muted">${e.source === "metrics" ? "metrics.jsonl" : "eval/*.jsonl (recomputed)"}</td></tr>`,
  );
  return table(head, body, [true, true, true, ...ks.map(() => true), false]);
}

function sideBySide(model: ReportModel): string {
  const head = ["Run", "Plan hash", "Seed", "Eval iteration", "Tasks", ...model.ks.map((k) => `pass@${k} [95% CI]`)];
  const baseline = model.comparison?.baseline.members ?? [];
  const body = model.runs.map(
    (r) =>
      `<tr><td><span class="swatch" style="background:${runColor(model, r)}"></span> ${h(r.label)}${baseline.includes(r) ? ' <span class="muted">(baseline)</span>' : ""}</td><td><code>${h(shortHash(r.run.hash))}</code></td><td class="num">${r.run.seed ?? "–"}</td><td class="num">${r.final?.iteration ?? "–"}</td><td class="num">${r.final?.tasks ?? "–"}</td>${model.ks
        .map((k) => `<td class="num">${interval(r.final?.pass.get(k))}</td>`)
        .join("")}</tr>`,
  );
  return table(head, body, [false, false, true, true, true, ...model.ks.map(() => true)]);
}

/** Final pass@k of each variant over its seeds: mean ± standard deviation [min, max]. */
function seedTable(model: ReportModel): string {
  const head = [
    "Variant",
    "Seeds",
    ...model.ks.map((k) => `pass@${k} mean ± sd [min, max]`),
    ...model.ks.map((k) => `pass@${k} over tasks [95% CI]`),
  ];
  const body = model.groups.map((g) => {
    const seeds = g.members.map((m) => m.run.seed ?? "–").join(", ");
    const cells = model.ks.map((k) => {
      const s = finalSpread(g, k);
      return `<td class="num">${s ? `${fixed(s.mean)} ± ${fixed(s.sd)} [${fixed(s.min)}, ${fixed(s.max)}]` : "–"}</td>`;
    });
    const overTasks = model.ks.map((k) => `<td class="num">${interval(finalOverTasks(g, k))}</td>`);
    return `<tr><td><span class="swatch" style="background:${colorOf(g.index)}"></span> ${h(g.label)}${g === model.comparison?.baseline ? ' <span class="muted">(baseline)</span>' : ""}</td><td class="num">${h(seeds)}</td>${cells.join("")}${overTasks.join("")}</tr>`;
  });
  return table(head, body, [false, true, ...model.ks.map(() => true), ...model.ks.map(() => true)]);
}

function pairedTable(rows: readonly PairedRow[]): string {
  const head = [
    "Run",
    "k",
    "Tasks paired",
    "Eval iterations (baseline / run)",
    "Mean difference [95% CI]",
    "SE",
    "Verdict",
  ];
  const body = rows.map((row) => {
    const label = h(row.label);
    if (!row.result)
      return `<tr><td>${label}</td><td class="num">${row.k || "–"}</td><td class="num">0</td><td class="num">${row.baselineIteration ?? "–"} / ${row.iteration ?? "–"}</td><td colspan="3" class="muted">${h(row.reason ?? "")}</td></tr>`;
    const v = verdict(row.result.interval);
    const cls = v === "better" ? "better" : v === "worse" ? "worse" : "";
    return `<tr class="${cls}"><td>${label}</td><td class="num">${row.k}</td><td class="num">${row.tasks}</td><td class="num">${row.baselineIteration} / ${row.iteration}</td><td class="num">${signedInterval({ ...row.result.interval, estimate: row.result.meanDifference })}</td><td class="num">${fixed(row.result.standardError)}</td><td class="verdict">${v}</td></tr>`;
  });
  return table(head, body, [false, true, true, true, true, true, false]);
}

function perTaskDetails({ baseline, rows }: NonNullable<ReportModel["comparison"]>): string {
  return rows
    .flatMap((row) => {
      if (!row.result || row.result.differences.length > 500) return [];
      const { differences } = row.result;
      const counts = { better: 0, worse: 0, same: 0 };
      for (const d of differences) counts[d > 0 ? "better" : d < 0 ? "worse" : "same"]++;
      const diffs = differences.map((d) => `<td class="num">${signed(d, 2)}</td>`);
      const lines: string[] = [];
      for (let i = 0; i < diffs.length; i += 20) lines.push(`<tr>${diffs.slice(i, i + 20).join("")}</tr>`);
      return `<details><summary>${h(row.label)} − ${h(baseline.label)}, pass@${row.k}: per-task differences (${counts.better} better, ${counts.worse} worse, ${counts.same} equal)</summary><table>${lines.join("")}</table></details>`;
    })
    .join("");
}

function chartGrid(charts: readonly RenderedChart[]): string {
  return `<div class="charts">${charts.map((c) => `<figure class="chart" id="fig-${h(c.spec.id)}">${c.svg}</figure>`).join("")}</div>`;
}

function legend(model: ReportModel): string {
  if (model.groups.length < 2) return "";
  return `<div class="legend">${model.groups.map((g) => `<span><span class="swatch" style="background:${colorOf(g.index)}"></span>${h(g.label)}${g.members.length > 1 ? ` <span class="muted">(${g.members.length} seeds)</span>` : ""}</span>`).join("")}</div>`;
}

function curvesIntro(model: ReportModel): string {
  const parts: string[] = [];
  if (model.seedsAggregated)
    parts.push(
      "A variant of several seeds is drawn as the mean over its seeds, with the band from the lowest to the highest seed.",
    );
  if (model.smooth > 0)
    parts.push(
      `Smoothed with an exponential moving average of weight ${model.smooth} (debiased, as TensorBoard smooths); the faint line is the raw value.`,
    );
  return parts.length > 0 ? `<p class="muted">${h(parts.join(" "))}</p>` : "";
}

/** The watchdog's warnings (metrics.jsonl \`warnings\`), per run and iteration. */
function warningsSection(model: ReportModel): string {
  const rows = model.runs.flatMap((r) =>
    r.run.warnings.map(
      (w) =>
        `<tr><td>${h(r.label)}</td><td class="num">${w.iteration}</td><td><code>${h(w.code)}</code></td><td>${h(w.message)}</td></tr>`,
    ),
  );
  return `<p class="muted">Raised by the run's watchdog (rollout.watchdog) during training; each is also in that iteration's metrics line.</p>${table(["Run", "Iteration", "Code", "Warning"], rows, [false, true, false, false])}`;
}

/** The phases before iteration 1 of a run, named with their seconds: "base eval 2.0 s, cold start (SFT) 15.2 s". */
function phasesBefore(r: RunReport): string {
  const t = r.run.metrics[0]?.raw.time;
  const time = typeof t === "object" && t !== null && !Array.isArray(t) ? t : {};
  return beforeTrainingPhases
    .flatMap(([key, name]) => (typeof time[key] === "number" ? [`${name} ${duration(time[key])}`] : []))
    .join(", ");
}

function wallTable(model: ReportModel): string {
  const before = model.runs.some((r) => (r.wall?.before ?? 0) > 0);
  const head = [
    "Run",
    ...(before ? ["Before training"] : []),
    "Rollout",
    "Reward",
    "Update",
    "Other (eval, checkpoints)",
    "Total",
    "Split",
  ];
  const phases = ["before", "rollout", "reward", "update", "other"] as const;
  const body = model.runs.map((r) => {
    const w = r.wall;
    if (!w)
      return `<tr><td>${h(r.label)}</td><td colspan="${head.length - 1}" class="muted">no timings recorded</td></tr>`;
    const cell = (x: number) =>
      `<td class="num">${duration(x)} <span class="muted">(${percent(x, w.total)})</span></td>`;
    const bar = phases
      .map((p) =>
        w.total > 0 && w[p] > 0
          ? `<span title="${p} ${percent(w[p], w.total)}" style="width:${((100 * w[p]) / w.total).toFixed(2)}%;background:${phaseColors[p]}"></span>`
          : "",
      )
      .join("");
    return `<tr><td>${h(r.label)}</td>${before ? cell(w.before) : ""}${cell(w.rollout)}${cell(w.reward)}${cell(w.update)}${cell(w.other)}<td class="num">${duration(w.total)}</td><td><div class="bar">${bar}</div></td></tr>`;
  });
  const key = `<div class="legend">${phases
    .filter((p) => before || p !== "before")
    .map(
      (p) =>
        `<span><span class="swatch" style="background:${phaseColors[p]}"></span>${p === "before" ? "before training" : p}</span>`,
    )
    .join("")}</div>`;
  const apart = model.runs
    .filter((r) => phasesBefore(r) !== "")
    .map((r) => `<li>${model.runs.length > 1 ? `${h(r.label)}: ` : ""}${h(phasesBefore(r))}</li>`);
  const beforeList =
    apart.length > 0
      ? `<p class="muted">Before iteration 1 (counted in its metrics line's total_s, left out of the time-per-iteration chart):</p><ul>${apart.join("")}</ul>`
      : "";
  return (
    table(
      head,
      body,
      head.map((_, i) => i > 0 && i < head.length - 1),
    ) +
    key +
    beforeList
  );
}

/**
 * Episode text as page text: escaped, and with "://" written as entities, so that a URL an
 * episode mentions (a JSON schema's $schema, a tool's docs) reads the same but is no link or
 * resource in a page that loads nothing from the network.
 */
const episodeText = (text: string) => h(text).replace(/:\/\//g, ":&#47;&#47;");

function preflightSection(model: ReportModel): string {
  const intro = `<p class="muted">The checks on the first training batch before the first optimizer step (preflight.json).</p>`;
  const tables = model.runs.map((r) =>
    r.run.preflight
      ? `${model.runs.length > 1 ? `<h3>${h(r.label)}</h3>` : ""}${table(
          ["Check", "Status", "Measured"],
          preflightCells(r.run.preflight).map((c) => `<tr>${c.map((x) => `<td>${h(x)}</td>`).join("")}</tr>`),
          [false, false, false],
        )}`
      : "",
  );
  return `${intro}${tables.join("")}`;
}

function samplesSection(model: ReportModel): string {
  return model.runs
    .filter((r) => r.samples.length > 0)
    .map((r) => {
      const items = r.samples.map(
        (t) =>
          `<details><summary>${h(t.which)}: reward ${fixed(t.reward)}, task ${t.task}, episode ${t.episode} (${h(t.end)}, ${t.turns} turns)</summary><pre class="mono trajectory">${episodeText(t.text)}</pre></details>`,
      );
      const first = r.samples[0];
      const how = first
        ? `<p class="muted">Training episodes of iteration ${first.iteration}, the last in the token buffer, by reward; <code>arl show RUN_DIR --iteration ${first.iteration} --episode N</code> prints any episode, <code>--limit 0</code> all of them.</p>`
        : "";
      return `${model.runs.length > 1 ? `<h3>${h(r.label)}</h3>` : ""}${how}${items.join("")}`;
    })
    .join("");
}

export function renderHtml(model: ReportModel): string {
  const several = model.runs.length > 1;
  const partial = model.runs.filter((r) => r.run.partial);
  const notes = [...model.notes, ...model.runs.flatMap((r) => r.run.notes.map((n) => `${r.label}: ${n}`))];
  if (model.missingCurves.length > 0)
    notes.push(`Not recorded by any run, so not charted: ${model.missingCurves.join(", ")}.`);
  const sections: [string, string, string][] = [];
  // A sweep's many cards would push the comparison off the first screen: folded, one click away.
  const cards = `<div class="cards">${model.runs.map((r) => runCard(model, r)).join("")}</div>`;
  sections.push([
    "runs",
    several ? "Runs" : "Run",
    model.runs.length > 2
      ? `<details><summary>${model.runs.length} run directories: plan hash, seed, trainer, model, versions, overrides, wall time</summary>${cards}</details>`
      : cards,
  ]);
  if (model.runs.some((r) => r.run.warnings.length > 0))
    sections.push(["warnings", "Warnings", warningsSection(model)]);
  sections.push(["summary", "Summary", summaryTable(model)]);
  if (model.comparison) {
    sections.push([
      "comparison",
      "Comparison",
      `${model.seedsAggregated ? `<h3>Final pass@k per variant, over its seeds</h3>${seedTable(model)}` : ""}<h3>Final pass@k per run</h3>${sideBySide(model)}<h3>Paired per-task differences against ${h(model.comparison.baseline.label)}</h3><p class="muted">Each ${model.seedsAggregated ? "variant" : "run"}'s pass@k minus the baseline's, task by task over the tasks both evaluated at their last eval${model.seedsAggregated ? " (a variant of several seeds scores a task by its mean over the seeds)" : ""}; mean difference with its 95% paired bootstrap interval over tasks. “better”/“worse” when the interval excludes 0.</p>${pairedTable(model.comparison.rows)}${perTaskDetails(model.comparison)}`,
    ]);
  }
  if (model.runs.some((r) => r.run.preflight)) sections.push(["preflight", "Preflight", preflightSection(model)]);
  if (model.seedsAggregated && !model.comparison)
    sections.push(["seeds", "Seeds", `<h3>Final pass@k over the seeds</h3>${seedTable(model)}`]);
  const omitted =
    model.omittedCurves.length > 0
      ? `<p class="muted" id="curves-left-out">Not drawn: ${model.omittedCurves.map((c) => `${h(c.title)}, ${h(c.reason)}`).join("; ")}.</p>`
      : "";
  sections.push([
    "curves",
    "Learning curves",
    `${legend(model)}${curvesIntro(model)}${chartGrid(model.curves)}${omitted}`,
  ]);
  sections.push([
    "eval",
    "Evaluation",
    `<p class="muted">pass@k per eval: the unbiased per-task estimate averaged over tasks, with its 95% percentile-bootstrap interval over tasks. On the charts the base eval (before the cold start) is the hollow diamond at iteration 0, joined by a vertical segment to the cold-started policy's point at 0.</p>${model.evalCharts.length > 0 ? chartGrid(model.evalCharts) : ""}${model.runs.map((r) => `${several ? `<h3>${h(r.label)}</h3>` : ""}${evalTable(r, model.ks)}`).join("")}`,
  ]);
  sections.push(["time", "Wall time", wallTable(model)]);
  if (model.runs.some((r) => r.samples.length > 0))
    sections.push(["samples", "Sample trajectories", samplesSection(model)]);
  if (notes.length > 0)
    sections.push(["notes", "Notes", `<ul class="notes">${notes.map((n) => `<li>${h(n)}</li>`).join("")}</ul>`]);

  const subtitle = several
    ? `${model.runs.length} runs: ${model.runs.map((r) => h(r.label)).join(", ")}${partial.length > 0 ? ` — <strong>${partial.length} partial</strong>` : ""}`
    : `plan <code>${h(shortHash(at(model.runs, 0).run.hash))}</code>, seed ${at(model.runs, 0).run.seed ?? "–"} — ${statusBadge(at(model.runs, 0))}`;
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="arl ${h(model.arlVersion)}">
<title>arl report: ${h(model.title)}</title>
<style>${css}</style>
</head>
<body>
<main>
<header class="page">
<h1>${h(model.title)}</h1>
<p class="sub">${subtitle}</p>
<nav class="toc"><a href="#result">Result</a>${sections.map(([id, title]) => `<a href="#${id}">${h(title)}</a>`).join("")}</nav>
</header>
${headlineSection(model)}
${sections.map(([id, title, body]) => `<section id="${id}">\n<h2>${h(title)}</h2>\n${body}\n</section>`).join("\n")}
<footer>Generated by arl ${h(model.arlVersion)} from ${model.runs.length} run director${model.runs.length === 1 ? "y" : "ies"}. Self-contained: no scripts, no network resources.</footer>
</main>
</body>
</html>
`;
}
