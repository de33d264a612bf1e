// Benchmark harness: sections run in order, each returning rows for one table. Timing is
// in-process wall time (performance.now) over warm-up runs followed by measured runs; the
// median is reported because it ignores the odd GC pause or scheduler hiccup.
import { at } from "../contracts/checked.js";

export interface BenchResult {
  /** Row label. */
  readonly name: string;
  /** Milliseconds per run: median, fastest and slowest of the measured runs. */
  readonly medianMs?: number;
  readonly minMs?: number;
  readonly maxMs?: number;
  readonly runs?: number;
  /** Work done per run, for throughput columns. */
  readonly lines?: number;
  readonly bytes?: number;
  /** A derived figure (a ratio, a count) for rows that are not timings. */
  readonly value?: number;
  readonly unit?: string;
  /** The target this row is judged against, and whether it was met. */
  readonly goal?: string;
  readonly met?: boolean;
  /** The spread of a derived figure measured more than once (a per-pair ratio): quartiles and extremes. */
  readonly spread?: Spread;
  readonly note?: string;
}

export interface Spread {
  readonly min: number;
  readonly q1: number;
  readonly q3: number;
  readonly max: number;
}

export interface BenchSection {
  readonly name: string;
  /** A line or two saying what was measured (sizes, what is inside the timed region). */
  describe?(): string[];
  run(): Promise<BenchResult[]>;
}

export interface MeasureOptions {
  readonly warmup: number;
  readonly runs: number;
}

export const defaultMeasureOptions: MeasureOptions = { warmup: 3, runs: 9 };

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? at(sorted, mid) : (at(sorted, mid - 1) + at(sorted, mid)) / 2;
}

/** The `p`-quantile (0..1) of `values`, linearly interpolated between the two nearest ranks. */
function quantile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const pos = (sorted.length - 1) * p;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return at(sorted, lo) + (at(sorted, hi) - at(sorted, lo)) * (pos - lo);
}

function spreadOf(values: readonly number[]): Spread {
  return { min: Math.min(...values), q1: quantile(values, 0.25), q3: quantile(values, 0.75), max: Math.max(...values) };
}

/** Keeps results reachable (on the global object, which any code could read) so the engine cannot drop the work that produced them. */
const sink = globalThis as { arlBenchSink?: unknown };
export function consume(value: unknown): void {
  sink.arlBenchSink = value;
}

const gc = (globalThis as { gc?: () => void }).gc;

/** Times `fn` once, in milliseconds. */
async function timeOnce(fn: () => unknown): Promise<number> {
  const start = performance.now();
  const out = fn();
  if (out instanceof Promise) consume(await out);
  else consume(out);
  return performance.now() - start;
}

/** Warm-up runs (discarded), then measured runs; collects garbage between runs when node runs with --expose-gc. */
export async function measure(fn: () => unknown, options: MeasureOptions = defaultMeasureOptions): Promise<number[]> {
  for (let i = 0; i < options.warmup; i++) await timeOnce(fn);
  const samples: number[] = [];
  for (let i = 0; i < options.runs; i++) {
    gc?.();
    samples.push(await timeOnce(fn));
  }
  return samples;
}

/** Measures `fn` and returns one table row. */
export async function timed(
  name: string,
  fn: () => unknown,
  work: { lines?: number; bytes?: number; note?: string } = {},
  options: MeasureOptions = defaultMeasureOptions,
): Promise<BenchResult> {
  return row(name, await measure(fn, options), work);
}

function row(
  name: string,
  samples: readonly number[],
  work: { lines?: number; bytes?: number; note?: string },
): BenchResult {
  return {
    name,
    medianMs: median(samples),
    minMs: Math.min(...samples),
    maxMs: Math.max(...samples),
    runs: samples.length,
    ...work,
  };
}

function cpuMs(usage: NodeJS.CpuUsage): number {
  return (usage.user + usage.system) / 1000;
}

export interface PairCase {
  readonly name: string;
  readonly fn: () => unknown;
  readonly work?: { lines?: number; bytes?: number; note?: string };
}

/**
 * Times two cases run by run, interleaved (a, b, a, b, ...), and reports each case's row and the
 * ratio a/b of every pair: on a shared machine the load shifts between two back-to-back blocks
 * of runs, but much less between the two halves of one pair, so the per-pair ratios' median and
 * spread can be trusted where a ratio of two separately taken medians cannot.
 */
export async function paired(
  a: PairCase,
  b: PairCase,
  ratio: { name: string; goal?: string; limit?: number; note?: string },
  options: MeasureOptions = defaultMeasureOptions,
): Promise<{ a: BenchResult; b: BenchResult; ratio: BenchResult; cpuRatio: BenchResult }> {
  for (let i = 0; i < options.warmup; i++) {
    await timeOnce(a.fn);
    await timeOnce(b.fn);
  }
  const as: number[] = [];
  const bs: number[] = [];
  const ratios: number[] = [];
  const cpuRatios: number[] = [];
  for (let i = 0; i < options.runs; i++) {
    gc?.();
    const ca = process.cpuUsage();
    const ta = await timeOnce(a.fn);
    const cpuA = cpuMs(process.cpuUsage(ca));
    gc?.();
    const cb = process.cpuUsage();
    const tb = await timeOnce(b.fn);
    const cpuB = cpuMs(process.cpuUsage(cb));
    as.push(ta);
    bs.push(tb);
    ratios.push(ta / tb);
    cpuRatios.push(cpuA / cpuB);
  }
  const value = median(ratios);
  return {
    a: row(a.name, as, a.work ?? {}),
    b: row(b.name, bs, b.work ?? {}),
    // The process's CPU time leaves out the time it waited for a core: on a loaded machine
    // it moves less than the wall time (GC helper threads are in it, on both sides).
    cpuRatio: {
      name: `${ratio.name}, CPU time`,
      value: median(cpuRatios),
      unit: "x",
      runs: cpuRatios.length,
      spread: spreadOf(cpuRatios),
    },
    ratio: {
      name: ratio.name,
      value,
      unit: "x",
      runs: ratios.length,
      spread: spreadOf(ratios),
      ...(ratio.goal !== undefined ? { goal: ratio.goal } : {}),
      ...(ratio.limit !== undefined ? { met: value <= ratio.limit } : {}),
      ...(ratio.note !== undefined ? { note: ratio.note } : {}),
    },
  };
}

export function gcExposed(): boolean {
  return gc !== undefined;
}

// --- output ---------------------------------------------------------------------------------

function fixed(n: number | undefined, digits: number): string {
  return n === undefined || !Number.isFinite(n) ? "" : n.toFixed(digits);
}

function grouped(n: number | undefined): string {
  return n === undefined || !Number.isFinite(n) ? "" : Math.round(n).toLocaleString("en-US");
}

/** A plain-text table of one section's rows. */
export function formatTable(results: readonly BenchResult[]): string {
  const header = ["case", "median ms", "min ms", "max ms", "lines/s", "MB/s", "note"];
  const rows = results.map((r) => {
    if (r.medianMs === undefined) {
      // Counts (instructions) read best grouped; ratios and small figures with three decimals.
      const show = (n: number | undefined) =>
        n !== undefined && Number.isInteger(n) && Math.abs(n) >= 1000 ? grouped(n) : fixed(n, 3);
      const value = `${show(r.value)}${r.unit ?? ""}`;
      const judged = r.goal ? `goal ${r.goal}: ${r.met ? "met" : "NOT met"}` : "";
      const iqr = r.spread ? `per-pair IQR ${show(r.spread.q1)}-${show(r.spread.q3)}x over ${r.runs ?? "?"} pairs` : "";
      return [
        r.name,
        value,
        r.spread ? `${show(r.spread.min)}x` : "",
        r.spread ? `${show(r.spread.max)}x` : "",
        "",
        "",
        [judged, iqr, r.note].filter(Boolean).join("; "),
      ];
    }
    const seconds = r.medianMs / 1000;
    return [
      r.name,
      fixed(r.medianMs, 2),
      fixed(r.minMs, 2),
      fixed(r.maxMs, 2),
      r.lines ? grouped(r.lines / seconds) : "",
      r.bytes ? fixed(r.bytes / 1e6 / seconds, 1) : "",
      r.note ?? "",
    ];
  });
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((row) => at(row, c).length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, c) => (c === 0 || c === cells.length - 1 ? cell.padEnd(at(widths, c)) : cell.padStart(at(widths, c))))
      .join("  ")
      .trimEnd();
  return [line(header), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)].join("\n");
}
