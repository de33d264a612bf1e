// The top of the report page, what a reader came for: the held-out result before and after RL
// with RL's own gain and its interval (one run: the steps; a sweep: its variants side by side),
// its eval chart drawn large, and the settings that produced it.
import { palette } from "./charts.js";
import { escapeHtml as h, fixed, signedInterval, verdict } from "./format.js";
import { planSettings, seedsText, settingOf, sharedSettings, type Setting } from "./settings.js";
import type { RlGain } from "./stats.js";
import type { ReportModel, RunReport, VariantGroup } from "./types.js";
import { at } from "../contracts/checked.js";

export const headlineCss = `
.headline { display: grid; grid-template-columns: minmax(0, 1fr) 370px; gap: 14px; margin: 14px 0 6px; align-items: start; }
.headline h2 { margin: 0 0 2px; padding: 0; border: 0; }
.headline .card { padding: 10px 14px; }
.headline p { margin: 2px 0; }
.steps { display: flex; flex-wrap: wrap; align-items: stretch; gap: 6px; margin: 8px 0 6px; }
.step { border: 1px solid var(--line); border-radius: 8px; padding: 4px 12px 6px; min-width: 112px; }
.step .label { font-size: 12px; color: var(--muted); }
.step .value { font-size: 26px; font-weight: 650; line-height: 1.2; font-variant-numeric: tabular-nums; }
.step .ci { font-size: 12px; color: var(--muted); font-variant-numeric: tabular-nums; }
.step.gain { margin-left: 8px; background: #f3f6f9; border-color: #9aa5b1; }
.step.gain.better { background: #edf7ee; border-color: #9fd0a2; }
.step.gain.better .value { color: var(--good); }
.step.gain.worse { background: #fdeceb; border-color: #f0aaa5; }
.step.gain.worse .value { color: var(--bad); }
.arrow { align-self: center; color: var(--muted); font-size: 18px; }
.headline figure.chart { margin-top: 10px; }
.headline table { margin: 8px 0 4px; }
.settings dl.kv { font-size: 12.5px; gap: 1px 10px; }
.settings .differs { margin-top: 6px; font-size: 12.5px; }
.headline.wide { grid-template-columns: 1fr; }
.headline.wide dl.kv { grid-template-columns: max-content 1fr max-content 1fr; }
.result-table { overflow-x: auto; }
@media (max-width: 900px) { .headline { grid-template-columns: 1fr; } }
`;

type Verdict = "better" | "worse" | "no clear difference";

function gainVerdict(gain: RlGain): Verdict | undefined {
  return gain.result ? verdict(gain.result.interval) : undefined;
}

function gainText(gain: RlGain): string {
  return gain.result ? signedInterval({ ...gain.result.interval, estimate: gain.result.meanDifference }) : "–";
}

function step(id: string | undefined, label: string, value: string, ci: string, cls = ""): string {
  return `<div class="step${cls ? ` ${cls}` : ""}"${id ? ` id="${id}"` : ""}><div class="label">${label}</div><div class="value">${value}</div><div class="ci">${ci}</div></div>`;
}

const arrow = `<div class="arrow" aria-hidden="true">→</div>`;

/** One run: the base eval, the start of RL and the last eval in a row, then RL's own gain. */
function runSteps(model: ReportModel, r: RunReport, gain: RlGain): string {
  const k = gain.k;
  const base = r.evals.find((e) => e.iteration < 0)?.pass.get(k);
  const start = r.evals.find((e) => e.iteration === 0)?.pass.get(k);
  const end = r.final && r.final.iteration > 0 ? r.final : undefined;
  const endPass = end?.pass.get(k);
  const ci = (i: { low: number; high: number } | null | undefined) =>
    i ? `[${fixed(i.low)}, ${fixed(i.high)}]` : "&nbsp;";
  const parts: string[] = [];
  if (base) parts.push(step("result-base", "before the cold start", fixed(base.estimate), ci(base)), arrow);
  parts.push(
    step(
      "result-before",
      r.run.sft.length > 0 || base ? "after the cold start" : "before training",
      start ? fixed(start.estimate) : "–",
      ci(start),
    ),
    arrow,
  );
  parts.push(
    step(
      "result-after",
      end ? `after ${end.iteration} RL iteration${end.iteration === 1 ? "" : "s"}` : "after RL",
      endPass ? fixed(endPass.estimate) : "–",
      ci(endPass),
    ),
  );
  const v = gainVerdict(gain);
  parts.push(
    step(
      "result-gain",
      "RL's own gain",
      gain.result ? gainText(gain).replace(/ \[.*$/, "") : "–",
      gain.result ? gainText(gain).replace(/^\S+ /, "") : h(gain.reason ?? ""),
      `gain${v === "better" ? " better" : v === "worse" ? " worse" : ""}`,
    ),
  );
  const tasks = r.final?.tasks ?? gain.tasks;
  const intro = `<p class="muted">Held-out pass@${k}${tasks ? ` on ${tasks} eval tasks` : ""}, with its 95% bootstrap interval over tasks; RL starts from the policy of iteration 0.</p>`;
  return `${intro}<div class="steps">${parts.join("")}</div>${gainNote(gain)}`;
}

/** How the gain was computed, and what its interval says. */
function gainNote(gain: RlGain): string {
  if (!gain.result) return "";
  const v = gainVerdict(gain);
  const reading =
    v === "better"
      ? "RL raised it: the interval excludes 0"
      : v === "worse"
        ? "RL lowered it: the interval excludes 0"
        : "no clear change: the interval includes 0";
  return `<p class="muted">RL's own gain: each task's pass@${gain.k} at iteration ${gain.iteration} less the same task's before training, paired over ${gain.tasks} tasks, 95% paired bootstrap interval; ${reading}.</p>`;
}

/** The paired difference of a variant against the baseline at the last evals, for the headline's k. */
function againstBaseline(model: ReportModel, g: VariantGroup, k: number): string {
  if (!model.comparison) return "";
  if (g === model.comparison.baseline) return `<td class="muted">baseline</td>`;
  const row = model.comparison.rows.find((x) => x.label === g.label && x.k === k);
  if (row?.otherTasks) return `<td class="muted">other tasks, not paired</td>`;
  if (!row?.result) return `<td class="muted">${h(row?.reason ?? "–")}</td>`;
  const v = verdict(row.result.interval);
  return `<td class="num">${signedInterval({ ...row.result.interval, estimate: row.result.meanDifference })} <span class="muted">${v === "no clear difference" ? "" : v}</span></td>`;
}

/** Several variants (or one over several seeds): one row each, with the settings that tell them apart. */
function variantTable(
  model: ReportModel,
  k: number,
  gains: readonly { group: VariantGroup; gain: RlGain }[],
  differing: readonly string[],
): string {
  const head = [
    "Variant",
    ...differing,
    "Seeds",
    `Before RL`,
    `After RL`,
    `RL's own gain [95% CI]`,
    ...(model.comparison ? [`Against ${model.comparison.baseline.label} [95% CI]`] : []),
  ];
  const numeric = [false, ...differing.map(() => false), true, true, true, true, ...(model.comparison ? [true] : [])];
  const body = gains.map(({ group, gain }) => {
    const v = gainVerdict(gain);
    const plan = at(group.members, 0).run.plan;
    return `<tr class="${v === "better" ? "better" : v === "worse" ? "worse" : ""}"><td><span class="swatch" style="background:${colorOf(group.index)}"></span> ${h(group.label)}</td>${differing.map((n) => `<td>${h(settingOf(plan, n))}</td>`).join("")}<td class="num">${h(seedsText(group.members.map((m) => m.run)))}</td><td class="num">${fixed(gain.before)}</td><td class="num">${fixed(gain.after)}${gain.iteration ? ` <span class="muted">(iteration ${gain.iteration})</span>` : ""}</td><td class="num verdict">${gain.result ? gainText(gain) : `<span class="muted">${h(gain.reason ?? "–")}</span>`}</td>${againstBaseline(model, group, k)}</tr>`;
  });
  const seeds = gains.some(({ group }) => group.members.length > 1);
  const note = `<p class="muted">Held-out pass@${k}: before training (iteration 0, after any cold start) and at the last eval, each task${seeds ? " scored by its mean over the seeds, then" : ""} averaged over the tasks scored at both; RL's own gain is the paired per-task difference with its 95% bootstrap interval over tasks${model.comparison ? `, as is the difference against ${h(model.comparison.baseline.label)} at the last evals` : ""}.</p>`;
  const cells = head.map((c, i) => `<th${numeric[i] ? ' class="num"' : ""}>${h(c)}</th>`).join("");
  return `<div class="result-table"><table id="result-table"><thead><tr>${cells}</tr></thead><tbody>${body.join("")}</tbody></table></div>${note}`;
}

const colorOf = (index: number) => at(palette, index % palette.length);

function settingsCard(model: ReportModel): { html: string; differing: string[] } {
  const firsts = model.groups.map((g) => at(g.members, 0).run.plan);
  const { shared, differing } =
    firsts.length > 1 ? sharedSettings(firsts) : { shared: planSettings(at(firsts, 0)), differing: [] };
  const rows: Setting[] = [
    ...shared,
    { name: model.runs.length > 1 ? "seeds" : "seed", value: seedsText(model.runs.map((r) => r.run)) },
  ];
  const differs =
    differing.length > 0
      ? `<p class="differs"><strong>Differ between variants</strong> (in the result table): ${differing.map(h).join(", ")}.</p>`
      : "";
  const html = `<aside class="card settings" id="settings"><h2>Settings</h2><p class="muted">From each run's plan.json${firsts.length > 1 ? ": shared by every variant" : ""}.</p><dl class="kv">${rows.map((s) => `<dt>${h(s.name)}</dt><dd>${h(s.value)}</dd>`).join("")}</dl>${differs}</aside>`;
  return { html, differing };
}

/** The result and settings block under the page's header; empty when no run evaluated pass@k. */
export function headlineSection(model: ReportModel): string {
  const { html: settings, differing } = settingsCard(model);
  const headline = model.headline;
  let result: string;
  if (!headline) {
    result = `<p class="muted">No run has evaluated pass@k yet: the result appears here after the first eval (the plan's eval block).</p>`;
  } else if (model.runs.length === 1) {
    result = runSteps(model, at(model.runs, 0), at(headline.gains, 0).gain);
  } else {
    result = variantTable(model, headline.k, headline.gains, differing);
  }
  const chart = headline?.chart
    ? `<figure class="chart" id="fig-${h(headline.chart.spec.id)}">${headline.chart.svg}</figure>`
    : "";
  return `<section id="result" class="headline${model.runs.length > 1 ? " wide" : ""}"><div class="card" id="result-card"><h2>Result</h2>${result}${chart}</div>${settings}</section>`;
}

/** The same result and settings for report.md. */
export function headlineMarkdown(model: ReportModel, e: (text: string) => string): string[] {
  const out: string[] = ["## Result", ""];
  const headline = model.headline;
  const firsts = model.groups.map((g) => at(g.members, 0).run.plan);
  const { shared, differing } =
    firsts.length > 1 ? sharedSettings(firsts) : { shared: planSettings(at(firsts, 0)), differing: [] };
  if (!headline) out.push("No run has evaluated pass@k yet.", "");
  else if (model.runs.length === 1) {
    const r = at(model.runs, 0);
    const { gain } = at(headline.gains, 0);
    const k = headline.k;
    const base = r.evals.find((x) => x.iteration < 0)?.pass.get(k);
    const start = r.evals.find((x) => x.iteration === 0)?.pass.get(k);
    const end = r.final && r.final.iteration > 0 ? r.final.pass.get(k) : undefined;
    out.push(
      `| | before the cold start | start of RL | after RL (iteration ${gain.iteration ?? "–"}) | RL's own gain [95% CI] |`,
      "| --- | ---: | ---: | ---: | ---: |",
      `| pass@${k} | ${fixed(base?.estimate)} | ${fixed(start?.estimate)} | ${fixed(end?.estimate)} | ${gain.result ? gainText(gain) : e(gain.reason ?? "–")} |`,
      "",
    );
  } else {
    out.push(
      `| Variant | ${differing.map(e).join(" | ")}${differing.length > 0 ? " | " : ""}Seeds | Before RL | After RL | RL's own gain [95% CI] |`,
      `| --- | ${differing.map(() => "--- | ").join("")}---: | ---: | ---: | ---: |`,
      ...headline.gains.map(
        ({ group, gain }) =>
          `| ${e(group.label)} | ${differing.map((n) => `${e(settingOf(at(group.members, 0).run.plan, n))} | `).join("")}${seedsText(group.members.map((m) => m.run))} | ${fixed(gain.before)} | ${fixed(gain.after)} | ${gain.result ? gainText(gain) : e(gain.reason ?? "–")} |`,
      ),
      "",
    );
  }
  if (headline?.gains.some(({ gain }) => gain.result))
    out.push(
      `Held-out pass@${headline.k}; RL's own gain is each task's pass@${headline.k} at the last eval less the same task's before training (iteration 0), paired over tasks, with its 95% bootstrap interval.`,
      "",
    );
  out.push(
    "## Settings",
    "",
    ...shared.map((s) => `- ${e(s.name)}: ${e(s.value)}`),
    `- ${model.runs.length > 1 ? "seeds" : "seed"}: ${seedsText(model.runs.map((r) => r.run))}`,
  );
  if (differing.length > 0) out.push(`- differ between variants: ${differing.map(e).join(", ")}`);
  out.push("");
  return out;
}
