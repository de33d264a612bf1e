// What a run computed, for comparing runs that must agree (in parallel, on a cluster, resumed):
// its metrics without the wall-clock fields, and its evaluation records.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";

export interface RunResults {
  readonly metrics: Record<string, unknown>[];
  readonly evals: Record<string, string>;
}

export function runResults(dir: string): RunResults {
  const metrics = readFileSync(path.join(dir, "metrics.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((line) => {
      const { time: _time, tokens_per_second: _tps, ...rest } = JSON.parse(line) as Record<string, unknown>;
      return rest;
    });
  const evals = Object.fromEntries(
    readdirSync(path.join(dir, "eval")).map((f) => [f, readFileSync(path.join(dir, "eval", f), "utf8")]),
  );
  return { metrics, evals };
}
