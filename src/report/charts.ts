// Small line charts as static SVG, rendered in Node without a browser: a vega-lite spec is
// compiled to vega and drawn by a headless vega View (`renderer: "none"`, `toSVG()`). Text widths
// are estimated (no canvas), no data is loaded from anywhere, and the element ids vega numbers
// from process-wide counters are renamed per chart, so the same input gives the same SVG.
import type * as Vega from "vega";
import type * as VegaLite from "vega-lite";
import type { TopLevelSpec } from "vega-lite";
import { at } from "../contracts/checked.js";

export interface ChartPoint {
  readonly x: number;
  readonly y: number;
  readonly low?: number;
  readonly high?: number;
}

export interface ChartSeries {
  readonly name: string;
  readonly points: readonly ChartPoint[];
}

export interface ChartSpec {
  /** Unique within the page: prefixes the SVG's element ids. */
  readonly id: string;
  readonly title: string;
  readonly yTitle: string;
  readonly series: readonly ChartSeries[];
  /** A fixed y domain (rates: [0, 1]); otherwise fitted to the data. */
  readonly yDomain?: readonly [number, number];
  /** Draw each point's [low, high] as an error bar. */
  readonly intervals?: boolean;
}

/** Colour-blind-friendly categorical colours (Tableau 10). */
export const palette = ["#4c78a8", "#f58518", "#54a24b", "#e45756", "#72b7b2", "#b279a2", "#eeca3b", "#9d755d", "#bab0ac", "#ff9da6"];

interface VegaModules {
  readonly vega: typeof Vega;
  readonly vl: typeof VegaLite;
}

let modules: Promise<VegaModules> | undefined;

/** vega is loaded on first use, so other commands do not pay for it. */
function loadVega(): Promise<VegaModules> {
  modules ??= Promise.all([import("vega"), import("vega-lite")]).then(([vega, vl]) => ({ vega, vl }));
  return modules;
}

/** A y domain for a flat line (every value equal), which vega would squeeze to a point. */
function flatDomain(ys: readonly number[]): { domain: number[] } | undefined {
  if (ys.length === 0 || ys.some((y) => y !== ys[0])) return undefined;
  const v = at(ys, 0);
  if (v === 0) return { domain: [0, 1] };
  return { domain: v > 0 ? [0, 2 * v] : [2 * v, 0] };
}

function vegaLiteSpec(chart: ChartSpec): TopLevelSpec {
  const values = chart.series.flatMap((s) =>
    s.points.filter((p) => Number.isFinite(p.x) && Number.isFinite(p.y)).map((p) => ({ x: p.x, y: p.y, series: s.name, ...(p.low !== undefined && p.high !== undefined ? { low: p.low, high: p.high } : {}) })),
  );
  const names = chart.series.map((s) => s.name);
  const integerX = values.every((v) => Number.isInteger(v.x));
  const maxPoints = Math.max(0, ...chart.series.map((s) => s.points.length));
  const legend = chart.series.length > 1 ? { orient: "bottom" as const, direction: "horizontal" as const, columns: 3, labelLimit: 160, symbolType: "stroke", title: null } : null;
  const color = { field: "series", type: "nominal" as const, sort: names, scale: { domain: names, range: palette.slice(0, Math.max(1, names.length)) }, legend };
  const x = {
    field: "x",
    type: "quantitative" as const,
    title: "iteration",
    scale: { nice: false, zero: false },
    axis: integerX ? { format: "d", tickMinStep: 1 } : {},
  };
  const y = {
    field: "y",
    type: "quantitative" as const,
    title: chart.yTitle,
    scale: chart.yDomain ? { domain: [...chart.yDomain] } : flatDomain(values.map((v) => v.y)) ?? { zero: false, nice: true },
  };
  const line = {
    mark: { type: "line" as const, strokeWidth: 1.75, point: maxPoints <= 60 ? { size: 18, filled: true } : false, interpolate: "linear" as const },
    encoding: { x, y, color },
  };
  const layers = chart.intervals
    ? [{ mark: { type: "rule" as const, strokeWidth: 1.25, opacity: 0.55 }, encoding: { x, y: { ...y, field: "low" }, y2: { field: "high" }, color } }, line]
    : [line];
  return {
    width: 290,
    height: 140,
    padding: 6,
    background: "white",
    title: { text: chart.title, anchor: "start", fontSize: 13, fontWeight: 600, color: "#1f2933", offset: 8 },
    data: { values },
    layer: layers,
    config: {
      font: "Helvetica, Arial, sans-serif",
      view: { stroke: "#d9dee3" },
      axis: { labelColor: "#52606d", titleColor: "#52606d", titleFontWeight: 500, titleFontSize: 11, labelFontSize: 10, gridColor: "#eef1f4", domainColor: "#9aa5b1", tickColor: "#9aa5b1" },
      legend: { labelFontSize: 10, labelColor: "#323f4b", symbolOpacity: 1, symbolStrokeWidth: 2 },
    },
  };
}

/** Renames every id="..." of one SVG to `${prefix}-N` (in order of appearance) and its references. */
function renameSvgIds(svg: string, prefix: string): string {
  const ids = new Map<string, string>();
  for (const [, id] of svg.matchAll(/\sid="([^"]+)"/g)) if (id !== undefined && !ids.has(id)) ids.set(id, `${prefix}-${ids.size + 1}`);
  if (ids.size === 0) return svg;
  return svg
    .replace(/(\sid=")([^"]+)(")/g, (_, a: string, id: string, b: string) => `${a}${ids.get(id) ?? id}${b}`)
    .replace(/url\(#([^)]+)\)/g, (whole, id: string) => (ids.has(id) ? `url(#${ids.get(id)})` : whole))
    .replace(/(href=")#([^"]+)(")/g, (whole, a: string, id: string, b: string) => (ids.has(id) ? `${a}#${ids.get(id)}${b}` : whole));
}

/** The SVG of one chart, ready to inline in HTML (no XML namespace URLs, ids unique to the chart). */
export async function renderChart(chart: ChartSpec): Promise<string> {
  const { vega, vl } = await loadVega();
  const compiled = vl.compile(vegaLiteSpec(chart)).spec;
  const view = new vega.View(vega.parse(compiled), { renderer: "none", logLevel: vega.None });
  try {
    const svg = await view.toSVG();
    return renameSvgIds(svg, `chart-${chart.id}`)
      .replace(/\sxmlns(:xlink)?="[^"]*"/g, "")
      .replace(/^<svg\b/, `<svg role="img" aria-label="${escapeAttribute(chart.title)}"`);
  } finally {
    view.finalize();
  }
}

function escapeAttribute(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");
}
