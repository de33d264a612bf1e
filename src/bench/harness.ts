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
  readonly note?: string;
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
  const samples = await measure(fn, options);
  return {
    name,
    medianMs: median(samples),
    minMs: Math.min(...samples),
    maxMs: Math.max(...samples),
    runs: samples.length,
    ...work,
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
      const value = `${fixed(r.value, 3)}${r.unit ?? ""}`;
      const judged = r.goal ? `goal ${r.goal}: ${r.met ? "met" : "NOT met"}` : "";
      return [r.name, value, "", "", "", "", [judged, r.note].filter(Boolean).join("; ")];
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
