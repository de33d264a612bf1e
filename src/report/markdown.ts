// The markdown summary of a report (report.md): the tables of the HTML page without the charts,
// for pull requests, notebooks and terminals.
import {
  duration,
  escapeMarkdown as e,
  fixed,
  interval,
  jsonValue,
  percent,
  signedInterval,
  verdict,
} from "./format.js";
import { finalOverTasks, finalSpread } from "./groups.js";
import { headlineMarkdown } from "./headline.js";
import type { ReportModel, RunReport } from "./types.js";
import { shortHash, type JsonObject } from "./load.js";
import { preflightCells } from "./preflight.js";

function table(head: string[], rows: string[][], numeric: boolean[]): string {
  const align = head.map((_, i) => (numeric[i] ? "---:" : "---"));
  return [`| ${head.join(" | ")} |`, `| ${align.join(" | ")} |`, ...rows.map((r) => `| ${r.join(" | ")} |`)].join("\n");
}

function objectOf(x: unknown): JsonObject | undefined {
  return typeof x === "object" && x !== null && !Array.isArray(x) ? (x as JsonObject) : undefined;
}

function status(r: RunReport): string {
  return r.run.partial
    ? `partial (${r.run.iterations} of ${r.run.plannedIterations} iterations)`
    : `complete (${r.run.iterations} iterations)`;
}

function header(r: RunReport): string {
  const m = r.run.manifest;
  const trainer = objectOf(m?.trainer);
  const versions = objectOf(m?.versions);
  const model = objectOf(m?.model);
  const lines = [
    `- experiment: ${e(r.run.experiment)}`,
    `- variant: ${e(r.run.variant)}`,
    `- status: ${status(r)}`,
    `- plan hash: \`${r.run.hash}\``,
    `- seed: ${r.run.seed ?? "–"}`,
    `- trainer: ${
      trainer
        ? e(
            [trainer.name, trainer.version]
              .filter((x) => x !== undefined && x !== null)
              .map(String)
              .join(" "),
          )
        : "–"
    }`,
    `- model: ${model ? e(jsonValue(model.name ?? "?")) : "–"}`,
    `- versions: ${
      versions
        ? e(
            Object.entries(versions)
              .map(([k, v]) => `${k} ${jsonValue(v)}`)
              .join(", "),
          )
        : "–"
    }`,
  ];
  if (r.run.overrides.length > 0)
    lines.push(`- overrides: ${r.run.overrides.map((o) => `\`${o.path} = ${JSON.stringify(o.value)}\``).join(", ")}`);
  if (r.wall) {
    const w = r.wall;
    lines.push(
      `- wall time: ${duration(w.total)} — ${w.before > 0 ? `before training ${duration(w.before)} (${percent(w.before, w.total)}), ` : ""}rollout ${duration(w.rollout)} (${percent(w.rollout, w.total)}), reward ${duration(w.reward)} (${percent(w.reward, w.total)}), update ${duration(w.update)} (${percent(w.update, w.total)}), other ${duration(w.other)} (${percent(w.other, w.total)})`,
    );
  }
  lines.push(`- directory: \`${r.run.given}\``);
  return lines.join("\n");
}

export function renderMarkdown(model: ReportModel): string {
  const several = model.runs.length > 1;
  const out: string[] = [`# arl report: ${e(model.title)}`, "", ...headlineMarkdown(model, e)];
  for (const r of model.runs) {
    if (several) out.push(`## Run ${e(r.label)}`, "");
    out.push(header(r), "");
  }

  out.push("## Summary", "");
  out.push(
    table(
      [
        "Run",
        "Status",
        "Seed",
        "Last iteration",
        "Success",
        "Reward",
        ...model.ks.map((k) => `Final pass@${k} [95% CI]`),
        "Eval iteration",
        "Wall time",
      ],
      model.runs.map((r) => [
        e(r.label),
        r.run.partial ? `partial (${r.run.iterations}/${r.run.plannedIterations})` : "complete",
        String(r.run.seed ?? "–"),
        String(r.last.iteration),
        fixed(r.last.raw.success as number),
        fixed(r.last.raw.reward as number),
        ...model.ks.map((k) => interval(r.final?.pass.get(k))),
        r.final ? String(r.final.iteration) : "–",
        r.wall ? duration(r.wall.total) : "–",
      ]),
      [false, false, true, true, true, true, ...model.ks.map(() => true), true, true],
    ),
    "",
  );

  if (model.seedsAggregated) {
    out.push(model.comparison ? "## Comparison" : "## Seeds", "", "### Final pass@k per variant, over its seeds", "");
    out.push(
      table(
        [
          "Variant",
          "Seeds",
          ...model.ks.map((k) => `pass@${k} mean ± sd [min, max]`),
          ...model.ks.map((k) => `pass@${k} over tasks [95% CI]`),
        ],
        model.groups.map((g) => [
          `${e(g.label)}${g === model.comparison?.baseline ? " (baseline)" : ""}`,
          g.members.map((m) => m.run.seed ?? "–").join(", "),
          ...model.ks.map((k) => {
            const s = finalSpread(g, k);
            return s ? `${fixed(s.mean)} ± ${fixed(s.sd)} [${fixed(s.min)}, ${fixed(s.max)}]` : "–";
          }),
          ...model.ks.map((k) => interval(finalOverTasks(g, k))),
        ]),
        [false, true, ...model.ks.map(() => true), ...model.ks.map(() => true)],
      ),
      "",
    );
  }

  if (model.comparison) {
    const baseline = model.comparison.baseline.members;
    out.push(...(model.seedsAggregated ? [] : ["## Comparison", ""]), "### Final pass@k per run", "");
    out.push(
      table(
        ["Run", "Plan hash", "Eval iteration", "Tasks", ...model.ks.map((k) => `pass@${k} [95% CI]`)],
        model.runs.map((r) => [
          `${e(r.label)}${baseline.includes(r) ? " (baseline)" : ""}`,
          `\`${shortHash(r.run.hash)}\``,
          String(r.final?.iteration ?? "–"),
          String(r.final?.tasks ?? "–"),
          ...model.ks.map((k) => interval(r.final?.pass.get(k))),
        ]),
        [false, false, true, true, ...model.ks.map(() => true)],
      ),
      "",
    );
    out.push(
      `### Paired per-task differences against ${e(model.comparison.baseline.label)}`,
      "",
      "Run minus baseline, over the tasks both evaluated at their last eval; 95% bootstrap interval over tasks.",
      "",
    );
    out.push(
      table(
        ["Run", "k", "Tasks paired", "Eval iterations", "Mean difference [95% CI]", "SE", "Verdict"],
        model.comparison.rows.map((row) =>
          row.result
            ? [
                e(row.label),
                String(row.k),
                String(row.tasks),
                `${row.baselineIteration} / ${row.iteration}`,
                signedInterval({ ...row.result.interval, estimate: row.result.meanDifference }),
                fixed(row.result.standardError),
                verdict(row.result.interval),
              ]
            : [
                e(row.label),
                row.k ? String(row.k) : "–",
                "0",
                `${row.baselineIteration ?? "–"} / ${row.iteration ?? "–"}`,
                "–",
                "–",
                e(row.reason ?? ""),
              ],
        ),
        [false, true, true, true, true, true, false],
      ),
      "",
    );
  }

  if (model.runs.some((r) => r.run.preflight)) {
    out.push(
      "## Preflight",
      "",
      "The checks on the first training batch before the first optimizer step (preflight.json).",
      "",
    );
    for (const r of model.runs) {
      if (!r.run.preflight) continue;
      if (several) out.push(`### ${e(r.label)}`, "");
      out.push(
        table(
          ["Check", "Status", "Measured"],
          preflightCells(r.run.preflight).map((c) => c.map(e)),
          [false, false, false],
        ),
        "",
      );
    }
  }

  out.push("## Evaluation", "");
  for (const r of model.runs) {
    if (several) out.push(`### ${e(r.label)}`, "");
    if (r.evals.length === 0) {
      out.push("No evaluation yet.", "");
      continue;
    }
    out.push(
      table(
        ["Iteration", "Tasks", "Env errors", ...model.ks.map((k) => `pass@${k} [95% CI]`)],
        r.evals.map((ev) => [
          ev.iteration < 0 ? "base" : String(ev.iteration),
          String(ev.tasks ?? "–"),
          String(ev.envErrors ?? "–"),
          ...model.ks.map((k) => interval(ev.pass.get(k))),
        ]),
        [true, true, true, ...model.ks.map(() => true)],
      ),
      "",
    );
  }

  if (model.runs.some((r) => r.samples.length > 0)) {
    out.push(
      "## Sample trajectories",
      "",
      "Training episodes of the last iteration in each run's token buffer, by reward; `arl show RUN_DIR --iteration N --episode E` prints one (report.html has their text).",
      "",
    );
    for (const r of model.runs) {
      if (r.samples.length === 0) continue;
      if (several) out.push(`### ${e(r.label)}`, "");
      out.push(
        table(
          ["Sample", "Iteration", "Episode", "Task", "Reward", "End", "Turns"],
          r.samples.map((t) => [
            t.which,
            String(t.iteration),
            String(t.episode),
            String(t.task),
            fixed(t.reward),
            t.end,
            String(t.turns),
          ]),
          [false, true, true, true, true, false, true],
        ),
        "",
      );
    }
  }

  const warnings = model.runs.flatMap((r) =>
    r.run.warnings.map((w) => [e(r.label), String(w.iteration), `\`${w.code}\``, e(w.message)]),
  );
  if (warnings.length > 0)
    out.push(
      "## Warnings",
      "",
      table(["Run", "Iteration", "Code", "Warning"], warnings, [false, true, false, false]),
      "",
    );

  const notes = [...model.notes, ...model.runs.flatMap((r) => r.run.notes.map((n) => `${r.label}: ${n}`))];
  if (notes.length > 0) out.push("## Notes", "", ...notes.map((n) => `- ${e(n)}`), "");
  out.push(`Learning curves are in report.html. Generated by arl ${model.arlVersion}.`, "");
  return out.join("\n");
}
