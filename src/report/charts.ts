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
  /** A point of its own kind drawn with a hollow diamond: the base eval, before the cold start. */
  readonly base?: boolean;
}

export interface ChartSeries {
  readonly name: string;
  readonly points: readonly ChartPoint[];
  /** Index into the palette (default: the series' index), so that a variant keeps its colour across charts. */
  readonly colorIndex?: number;
  /** Index into the dash patterns and point shapes (default: the series' index). */
  readonly styleIndex?: number;
}

export interface ChartSpec {
  /** Unique within the page: prefixes the SVG's element ids. */
  readonly id: string;
  readonly title: string;
  readonly yTitle: string;
  readonly series: readonly ChartSeries[];
  /** A fixed y domain (rates: [0, 1]); otherwise fitted to the data. */
  readonly yDomain?: readonly [number, number];
  /** Draw each point's [low, high]: error bars (intervals), or a shaded band (the spread across seeds). */
  readonly intervals?: "bars" | "band";
  /** The x axis' title (default: iteration). */
  readonly xTitle?: string;
  /** Exponential moving average weight in [0, 1) (0: none); the raw line stays, faint. */
  readonly smooth?: number;
  /** A line under the title: what the chart leaves out, or how to read it. */
  readonly subtitle?: string;
  /** The plot's size in pixels (default 290 x 140, a panel of the grid). */
  readonly width?: number;
  readonly height?: number;
}

/** Colour-blind-friendly categorical colours (Tableau 10). */
export const palette = [
  "#4c78a8",
  "#f58518",
  "#54a24b",
  "#e45756",
  "#72b7b2",
  "#b279a2",
  "#eeca3b",
  "#9d755d",
  "#bab0ac",
  "#ff9da6",
];

/**
 * Line styles, so that lines that coincide (a reward term equal to the total, two variants with
 * the same curve) stay visible: each series has its own dash and point shape besides its colour.
 */
const dashes = [
  [1, 0],
  [6, 3],
  [2, 2],
  [8, 3, 2, 3],
  [4, 2, 1, 2],
  [10, 4],
];
const shapes = ["circle", "square", "triangle-up", "diamond", "cross", "triangle-down"];
/** Later series are drawn thinner, so that one drawn over an equal earlier one leaves its edges showing. */
const widths = [3.25, 2.25, 1.5, 1.25];
const markerSizes = [64, 36, 22, 16];
const widthOf = (style: number) => at(widths, Math.min(style, widths.length - 1));

/** The debiased exponential moving average of `ys` (weight `a` on the past), as TensorBoard smooths. */
export function ema(ys: readonly number[], a: number): number[] {
  let m = 0;
  let w = 0;
  return ys.map((y) => {
    m = a * m + (1 - a) * y;
    w = a * w + (1 - a);
    return m / w;
  });
}

function smoothed(points: readonly ChartPoint[], a: number): ChartPoint[] {
  if (!(a > 0)) return [...points];
  const y = ema(
    points.map((p) => p.y),
    a,
  );
  const low = points.every((p) => p.low !== undefined)
    ? ema(
        points.map((p) => p.low ?? 0),
        a,
      )
    : undefined;
  const high = points.every((p) => p.high !== undefined)
    ? ema(
        points.map((p) => p.high ?? 0),
        a,
      )
    : undefined;
  return points.map((p, i) => ({ ...p, y: at(y, i), ...(low && high ? { low: at(low, i), high: at(high, i) } : {}) }));
}

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
  const a = chart.smooth ?? 0;
  const finite = (p: ChartPoint) => Number.isFinite(p.x) && Number.isFinite(p.y);
  const values = chart.series.flatMap((s) => {
    const points = s.points.filter(finite);
    const shown = smoothed(points, a);
    return shown.map((p, i) => ({
      x: p.x,
      y: p.y,
      series: s.name,
      order: i,
      ...(a > 0 ? { raw: at(points, i).y } : {}),
      ...(p.low !== undefined && p.high !== undefined ? { low: p.low, high: p.high } : {}),
      ...(p.base ? { base: true } : {}),
    }));
  });
  const names = chart.series.map((s) => s.name);
  const styleOf = (i: number) => chart.series[i]?.styleIndex ?? i;
  const integerX = values.every((v) => Number.isInteger(v.x));
  const maxPoints = Math.max(0, ...chart.series.map((s) => s.points.length));
  const several = chart.series.length > 1;
  const legend = several
    ? {
        orient: "bottom" as const,
        direction: "horizontal" as const,
        columns: 3,
        labelLimit: 160,
        symbolType: "stroke",
        title: null,
      }
    : null;
  const color = {
    field: "series",
    type: "nominal" as const,
    sort: names,
    scale: { domain: names, range: chart.series.map((s, i) => at(palette, (s.colorIndex ?? i) % palette.length)) },
    legend,
  };
  const strokeDash = {
    field: "series",
    type: "nominal" as const,
    sort: names,
    scale: { domain: names, range: names.map((_, i) => at(dashes, styleOf(i) % dashes.length)) },
    legend,
  };
  const shape = {
    field: "series",
    type: "nominal" as const,
    sort: names,
    scale: { domain: names, range: names.map((_, i) => at(shapes, styleOf(i) % shapes.length)) },
    legend,
  };
  const strokeWidth = {
    field: "series",
    type: "nominal" as const,
    sort: names,
    scale: { type: "ordinal" as const, domain: names, range: names.map((_, i) => widthOf(styleOf(i))) },
    legend,
  };
  const size = {
    field: "series",
    type: "nominal" as const,
    sort: names,
    scale: {
      type: "ordinal" as const,
      domain: names,
      range: names.map((_, i) => at(markerSizes, Math.min(styleOf(i), markerSizes.length - 1))),
    },
    legend,
  };
  const markers = maxPoints <= 60;
  const x = {
    field: "x",
    type: "quantitative" as const,
    title: chart.xTitle ?? "iteration",
    // A few pixels of room, so that points at the ends (the base eval at 0) are not cut by the axes.
    scale: { nice: false, zero: false, padding: 8 },
    axis: integerX ? { format: "d", tickMinStep: 1 } : {},
  };
  const ys = values.flatMap((v) => [v.y, ...("raw" in v && typeof v.raw === "number" ? [v.raw] : [])]);
  const y = {
    field: "y",
    type: "quantitative" as const,
    title: chart.yTitle,
    scale: chart.yDomain ? { domain: [...chart.yDomain] } : (flatDomain(ys) ?? { zero: false, nice: true }),
  };
  const order = { field: "order", type: "quantitative" as const };
  // Markers in their own layer: a line's point marks would take the lines' width scale as their outline.
  const line = {
    mark: { type: "line" as const, strokeWidth: 1.75, interpolate: "linear" as const },
    encoding: { x, y, color, order, ...(several ? { strokeDash, strokeWidth } : {}) },
  };
  const points = {
    mark: { type: "point" as const, filled: true, opacity: 1, ...(several ? {} : { size: 22 }) },
    encoding: { x, y, color, ...(several ? { shape, size } : {}) },
  };
  const layers: object[] = [];
  if (chart.intervals === "bars")
    layers.push({
      mark: { type: "rule" as const, strokeWidth: 1.25, opacity: 0.55 },
      encoding: { x, y: { ...y, field: "low" }, y2: { field: "high" }, color },
    });
  if (chart.intervals === "band")
    layers.push({
      transform: [{ filter: "isValid(datum.low)" }],
      mark: { type: "area" as const, opacity: 0.16 },
      encoding: { x, y: { ...y, field: "low" }, y2: { field: "high" }, color },
    });
  if (a > 0)
    layers.push({
      mark: { type: "line" as const, strokeWidth: 1, opacity: 0.28 },
      encoding: { x, y: { ...y, field: "raw" }, color, order },
    });
  layers.push(line);
  if (markers) layers.push(points);
  if (values.some((v) => v.base))
    layers.push({
      transform: [{ filter: "datum.base === true" }],
      mark: { type: "point" as const, shape: "diamond", size: 90, filled: false, strokeWidth: 1.75 },
      encoding: { x, y, color },
    });
  return {
    width: chart.width ?? 290,
    height: chart.height ?? 140,
    padding: 6,
    background: "white",
    title: {
      text: chart.title,
      anchor: "start",
      fontSize: 13,
      fontWeight: 600,
      color: "#1f2933",
      offset: 8,
      ...(chart.subtitle ? { subtitle: chart.subtitle, subtitleFontSize: 10.5, subtitleColor: "#616e7c" } : {}),
    },
    data: { values },
    layer: layers as TopLevelSpec extends { layer: infer L } ? L : never,
    config: {
      font: "Helvetica, Arial, sans-serif",
      view: { stroke: "#d9dee3" },
      axis: {
        labelColor: "#52606d",
        titleColor: "#52606d",
        titleFontWeight: 500,
        titleFontSize: 11,
        labelFontSize: 10,
        gridColor: "#eef1f4",
        domainColor: "#9aa5b1",
        tickColor: "#9aa5b1",
      },
      legend: { labelFontSize: 10, labelColor: "#323f4b", symbolOpacity: 1, symbolStrokeWidth: 2 },
    },
  };
}

/** Renames every id="..." of one SVG to `${prefix}-N` (in order of appearance) and its references. */
function renameSvgIds(svg: string, prefix: string): string {
  const ids = new Map<string, string>();
  for (const [, id] of svg.matchAll(/\sid="([^"]+)"/g))
    if (id !== undefined && !ids.has(id)) ids.set(id, `${prefix}-${ids.size + 1}`);
  if (ids.size === 0) return svg;
  return svg
    .replace(/(\sid=")([^"]+)(")/g, (_, a: string, id: string, b: string) => `${a}${ids.get(id) ?? id}${b}`)
    .replace(/url\(#([^)]+)\)/g, (whole, id: string) => (ids.has(id) ? `url(#${ids.get(id)})` : whole))
    .replace(/(href=")#([^"]+)(")/g, (whole, a: string, id: string, b: string) =>
      ids.has(id) ? `${a}#${ids.get(id)}${b}` : whole,
    );
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
