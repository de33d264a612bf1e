// The report's charts as data: learning curves from metrics.jsonl (one line per variant; a
// variant of several seeds is their mean with the min-max band), the SFT cold start's losses per
// epoch, and pass@k per eval. Rendering is charts.ts's.
import type { ChartPoint, ChartSeries, ChartSpec } from "./charts.js";
import { spread } from "./groups.js";
import { finiteNumber, type MetricsRow } from "./load.js";
import { klOff, oneUpdatePerBatch } from "./settings.js";
import { iterationSeconds, secondsBeforeTraining } from "./stats.js";
import type { OmittedCurve, RunReport, VariantGroup } from "./types.js";
import { at } from "../contracts/checked.js";

type Value = (m: MetricsRow) => number | undefined;

interface Curve {
  readonly id: string;
  readonly title: string;
  readonly yTitle: string;
  readonly value: Value;
  readonly yDomain?: readonly [number, number];
}

const metric =
  (name: string): Value =>
  (m) =>
    finiteNumber(m.raw[name]);
const objectField =
  (name: string, field: string): Value =>
  (m) => {
    const o = m.raw[name];
    return typeof o === "object" && o !== null && !Array.isArray(o) ? finiteNumber(o[field]) : undefined;
  };
const rewardTerm = (term: string): Value => objectField("reward_terms", term);
/** Generated tokens per second of rollout (the rollout's own wall time, not the iteration's). */
const tokensPerSecond: Value = (m) => {
  const tokens = finiteNumber(m.raw.tokens);
  const seconds = objectField("time", "rollout_s")(m);
  return tokens !== undefined && seconds !== undefined && seconds > 0 ? tokens / seconds : undefined;
};

const afterReward: readonly Curve[] = [
  {
    id: "effective-group-ratio",
    title: "Effective group ratio",
    yTitle: "groups with signal",
    value: metric("effective_group_ratio"),
    yDomain: [0, 1],
  },
  { id: "generated-length", title: "Generated length", yTitle: "tokens / episode", value: metric("generated_length") },
  { id: "entropy", title: "Entropy", yTitle: "entropy", value: metric("entropy") },
  { id: "clip-fraction", title: "Clip fraction", yTitle: "fraction clipped", value: metric("clip_fraction") },
  { id: "kl", title: "KL", yTitle: "KL", value: metric("kl") },
  { id: "policy-loss", title: "Policy loss", yTitle: "policy-gradient loss", value: metric("policy_loss") },
  { id: "grad-norm", title: "Gradient norm", yTitle: "norm before clipping", value: metric("grad_norm") },
  { id: "tokens-per-second", title: "Rollout throughput", yTitle: "generated tokens / s", value: tokensPerSecond },
  // The iteration's own time: iteration 1's total_s also counts the base eval, the cold start and
  // the eval before training, which would stand ten times above the other points.
  { id: "iteration-time", title: "Time per iteration", yTitle: "seconds", value: iterationSeconds },
];

/** Why a curve that is 0 at every point of every run is 0: the plans that make it so. */
const zeroReasons: Readonly<
  Record<string, { readonly holds: (runs: readonly RunReport[]) => boolean; readonly reason: string }>
> = {
  kl: {
    holds: (runs) => runs.every((r) => klOff(r.run.plan)),
    reason: "0 by construction: kl.coef is 0, so nothing is measured against a reference policy",
  },
  "clip-fraction": {
    holds: (runs) => runs.every((r) => oneUpdatePerBatch(r.run.plan)),
    reason: "0 by construction: one update per batch, on-policy, so the probability ratio is 1 and nothing is clipped",
  },
};

/** The train/inference mismatch (docs/semantics.md §12), drawn only where a run measured it (an engine sampled, or mask.tis). */
const mismatchCurves: readonly Curve[] = [
  {
    id: "mismatch-mean",
    title: "Train/inference mismatch (mean |Δ|)",
    yTitle: "mean |logp_trainer - logp_engine| (nats)",
    value: objectField("mismatch", "mean_abs"),
  },
  {
    id: "mismatch-max",
    title: "Train/inference mismatch (max |Δ|)",
    yTitle: "max |logp_trainer - logp_engine| (nats)",
    value: objectField("mismatch", "max_abs"),
  },
  {
    id: "mismatch-over",
    title: "Tokens over the mismatch threshold",
    yTitle: "fraction of targets",
    value: objectField("mismatch", "frac_over"),
    yDomain: [0, 1],
  },
];

function points(run: RunReport, value: Value): ChartPoint[] {
  return run.run.metrics.flatMap((m) => {
    const y = value(m);
    return y === undefined ? [] : [{ x: m.iteration, y }];
  });
}

/** One variant's points: its run's, or the mean over its seeds at each x with their min and max. */
function aggregate(perSeed: readonly (readonly ChartPoint[])[]): ChartPoint[] {
  if (perSeed.length === 1) return [...at(perSeed, 0)];
  const byX = new Map<number, number[]>();
  for (const ps of perSeed) for (const p of ps) byX.set(p.x, [...(byX.get(p.x) ?? []), p.y]);
  return [...byX]
    .sort(([a], [b]) => a - b)
    .flatMap(([x, ys]) => {
      const s = spread(ys);
      return s ? [{ x, y: s.mean, ...(s.n > 1 ? { low: s.min, high: s.max } : {}) }] : [];
    });
}

function variantSeries(groups: readonly VariantGroup[], value: Value): ChartSeries[] {
  return groups.map((g) => ({
    name: g.label,
    colorIndex: g.index,
    points: aggregate(g.members.map((m) => points(m, value))),
  }));
}

const hasData = (chart: ChartSpec) => chart.series.some((s) => s.points.length > 0);

export interface CurveOptions {
  readonly smooth: number;
  readonly seedsAggregated: boolean;
}

const everyY = (chart: ChartSpec, test: (y: number) => boolean) =>
  chart.series.every((s) => s.points.every((p) => test(p.y)));
const sameAs = (a: readonly ChartPoint[], b: readonly ChartPoint[]) =>
  a.length === b.length && a.every((p, i) => p.x === b[i]?.x && Math.abs(p.y - (b[i]?.y ?? Number.NaN)) < 1e-12);

/** The iteration-time chart's line under its title: what its first point leaves out. */
function timeSubtitle(groups: readonly VariantGroup[]): string | undefined {
  const firsts = groups.flatMap((g) => g.members.flatMap((m) => m.run.metrics.slice(0, 1)));
  const before = firsts.map(secondsBeforeTraining).filter((s) => s > 0);
  if (before.length === 0) return undefined;
  const amount =
    before.length === 1
      ? `${(before[0] ?? 0).toFixed(1)} s`
      : `${Math.min(...before).toFixed(1)}-${Math.max(...before).toFixed(1)} s`;
  return `iteration 1 without the ${amount} before training (see Wall time)`;
}

/** The learning curves with data, the titles of those no run recorded, and those left out with why. */
export function learningCurves(
  groups: readonly VariantGroup[],
  options: CurveOptions,
): { charts: ChartSpec[]; missing: string[]; omitted: OmittedCurve[] } {
  const runs = groups.flatMap((g) => g.members);
  const terms = [
    ...new Set(
      runs.flatMap((r) => [
        ...r.run.rewardTerms,
        ...r.run.metrics.flatMap((m) =>
          typeof m.raw.reward_terms === "object" && m.raw.reward_terms !== null && !Array.isArray(m.raw.reward_terms)
            ? Object.keys(m.raw.reward_terms)
            : [],
        ),
      ]),
    ),
  ];
  const band = options.seedsAggregated ? { intervals: "band" as const } : {};
  const common = { smooth: options.smooth, ...band };
  const success = variantSeries(groups, metric("success"));
  const specs: ChartSpec[] = [
    { id: "success", title: "Success rate (train)", yTitle: "success", yDomain: [0, 1], series: success, ...common },
  ];
  const omitted: OmittedCurve[] = [];
  const only = groups.length === 1 ? at(groups, 0) : undefined;
  let rewardCharts: ChartSpec[];
  if (only) {
    // One variant: its total reward and each term on one chart, each line with its own dash,
    // width and marker, so that a term equal to the total does not hide under it.
    const lines: ChartSeries[] = [
      { name: "total", value: metric("reward") },
      ...terms.map((t) => ({ name: t, value: rewardTerm(t) })),
    ].map((l, i) => ({ name: l.name, colorIndex: i, points: aggregate(only.members.map((m) => points(m, l.value))) }));
    rewardCharts = [
      {
        id: "reward",
        title: terms.length > 0 ? "Reward per term" : "Reward",
        yTitle: "mean reward / episode",
        series: lines.filter((l) => l.points.length > 0),
        ...common,
      },
    ];
  } else {
    rewardCharts = [
      {
        id: "reward",
        title: "Reward (total)",
        yTitle: "mean reward / episode",
        series: variantSeries(groups, metric("reward")),
        ...common,
      },
      ...terms.map((t, i) => ({
        id: `reward-term-${i + 1}`,
        title: `Reward term: ${t}`,
        yTitle: "mean term / episode",
        series: variantSeries(groups, rewardTerm(t)),
        ...common,
      })),
    ];
  }
  for (const chart of rewardCharts) {
    // A reward that is the success rate (its one term) would draw the success chart again.
    const successOf = (s: ChartSeries) => (only ? success[0] : success.find((x) => x.name === s.name))?.points ?? [];
    if (hasData(chart) && chart.series.every((s) => sameAs(s.points, successOf(s))))
      omitted.push({
        title: chart.title,
        reason: `the same as the success rate at every iteration (the reward is its one term${terms.length === 1 ? `, ${terms[0] ?? ""}` : ""})`,
      });
    // Rewards within [0, 1] are rates: drawn on the success chart's scale.
    else specs.push(everyY(chart, (y) => y >= 0 && y <= 1) ? { ...chart, yDomain: [0, 1] } : chart);
  }
  const measuredMismatch = runs.some((r) => r.run.metrics.some((m) => m.raw.mismatch !== undefined));
  for (const c of [...afterReward, ...(measuredMismatch ? mismatchCurves : [])]) {
    const spec: ChartSpec = {
      id: c.id,
      title: c.title,
      yTitle: c.yTitle,
      series: variantSeries(groups, c.value),
      ...(c.yDomain ? { yDomain: c.yDomain } : {}),
      ...common,
    };
    if (hasData(spec) && everyY(spec, (y) => y === 0)) {
      const known = zeroReasons[c.id];
      omitted.push({ title: c.title, reason: known?.holds(runs) ? known.reason : "0 at every iteration of every run" });
      continue;
    }
    const subtitle = c.id === "iteration-time" ? timeSubtitle(groups) : undefined;
    specs.push(subtitle ? { ...spec, subtitle } : spec);
  }
  const sft = sftChart(groups, options.seedsAggregated);
  if (sft) specs.push(sft);
  return { charts: specs.filter(hasData), missing: specs.filter((s) => !hasData(s)).map((s) => s.title), omitted };
}

/** The cold start's NLL per target token by epoch: training records (solid) and held-out ones (dashed). */
function sftChart(groups: readonly VariantGroup[], seedsAggregated: boolean): ChartSpec | undefined {
  if (!groups.some((g) => g.members.some((m) => m.run.sft.length > 0))) return undefined;
  const one = groups.length === 1;
  const series = groups.flatMap((g) =>
    (["train", "heldout"] as const).map((which) => ({
      name: one ? (which === "train" ? "train" : "held-out") : `${g.label} ${which === "train" ? "train" : "held-out"}`,
      colorIndex: one ? (which === "train" ? 0 : 1) : g.index,
      styleIndex: which === "train" ? 0 : 1,
      points: aggregate(
        g.members.map((m) => m.run.sft.flatMap((e) => (e[which] === undefined ? [] : [{ x: e.epoch, y: e[which] }]))),
      ),
    })),
  );
  return {
    id: "sft-loss",
    title: "SFT loss (cold start)",
    xTitle: "epoch",
    yTitle: "NLL / target token",
    series: series.filter((s) => s.points.length > 0),
    ...(seedsAggregated ? { intervals: "band" as const } : {}),
  };
}

/**
 * pass@k per eval. The base eval (eval.base, before the cold start) is drawn at iteration 0 as a
 * hollow diamond, before the cold-started policy's row at 0; a variant of several seeds is the
 * mean of its seeds' estimates with their min-max band, a single run its estimate with its 95%
 * interval over tasks.
 */
export function evalCharts(
  groups: readonly VariantGroup[],
  ks: readonly number[],
  seedsAggregated: boolean,
): ChartSpec[] {
  return ks
    .map((k): ChartSpec => {
      const series = groups.map((g) => {
        const perSeed = g.members.map((m) =>
          m.evals.flatMap((e) => {
            const i = e.pass.get(k);
            return i
              ? [
                  {
                    x: Math.max(0, e.iteration),
                    y: i.estimate,
                    low: i.low,
                    high: i.high,
                    ...(e.iteration < 0 ? { base: true } : {}),
                  },
                ]
              : [];
          }),
        );
        return {
          name: g.label,
          colorIndex: g.index,
          points: perSeed.length === 1 ? at(perSeed, 0) : aggregateEvals(perSeed),
        };
      });
      const what = seedsAggregated ? "mean over seeds, band: min-max" : "95% CI over tasks";
      return {
        id: `eval-pass-${k}`,
        title: `Eval pass@${k} (${what})`,
        yTitle: `pass@${k}`,
        yDomain: [0, 1],
        intervals: seedsAggregated ? "band" : "bars",
        series,
      };
    })
    .filter(hasData);
}

/** Seeds' eval points by position (base first), so that the base row and the row at 0 stay apart. */
function aggregateEvals(perSeed: readonly (readonly ChartPoint[])[]): ChartPoint[] {
  const key = (p: ChartPoint) => `${p.base ? "base" : "x"}:${p.x}`;
  const byKey = new Map<string, { x: number; base: boolean; ys: number[] }>();
  for (const ps of perSeed)
    for (const p of ps) {
      const entry = byKey.get(key(p)) ?? { x: p.x, base: p.base === true, ys: [] };
      entry.ys.push(p.y);
      byKey.set(key(p), entry);
    }
  return [...byKey.values()]
    .sort((a, b) => a.x - b.x || (a.base ? -1 : b.base ? 1 : 0))
    .flatMap((e) => {
      const s = spread(e.ys);
      return s
        ? [{ x: e.x, y: s.mean, ...(s.n > 1 ? { low: s.min, high: s.max } : {}), ...(e.base ? { base: true } : {}) }]
        : [];
    });
}
