// Evaluation statistics (docs/semantics.md §8): unbiased pass@k per task, averaged over tasks, with
// the task as the unit of uncertainty.
import { mulberry32, randomInt } from "../contracts/random.js";
import { mean } from "./stats.js";

/**
 * Chen et al. (2021): 1 - C(n-c, k)/C(n, k) for n samples with c correct, as the product
 * 1 - prod_{i=n-c+1}^{n} (1 - k/i) (no large binomials); 1 when n - c < k.
 */
export function passAtK(n: number, c: number, k: number): number {
  if (!Number.isInteger(n) || !Number.isInteger(c) || !Number.isInteger(k))
    throw new RangeError(`pass@k needs integers, got n=${n} c=${c} k=${k}`);
  if (n < 1 || c < 0 || c > n) throw new RangeError(`pass@k needs 0 <= c <= n and n >= 1, got n=${n} c=${c}`);
  if (k < 1 || k > n) throw new RangeError(`pass@k needs 1 <= k <= n, got k=${k} n=${n}`);
  if (n - c < k) return 1;
  let allFail = 1;
  for (let i = n - c + 1; i <= n; i++) allFail *= 1 - k / i;
  return 1 - allFail;
}

export interface TaskSamples {
  readonly n: number;
  readonly c: number;
}

/** Per-task estimates first, then their mean (never pass@k of the mean success rate). */
export function meanPassAtK(tasks: readonly TaskSamples[], k: number): number {
  return mean(tasks.map((t) => passAtK(t.n, t.c, k)));
}

/** sqrt(p(1-p)/n): the standard error of a success rate p over n independent tasks. */
export function binomialStandardError(p: number, n: number): number {
  if (!(p >= 0 && p <= 1)) throw new RangeError(`binomial SE needs 0 <= p <= 1, got ${p}`);
  if (!(n >= 1)) throw new RangeError(`binomial SE needs n >= 1, got ${n}`);
  return Math.sqrt((p * (1 - p)) / n);
}

/** 1.96 * SE: the approximate half-width of a 95% normal interval. */
export function normalHalfWidth95(standardError: number): number {
  return 1.96 * standardError;
}

export interface BootstrapOptions {
  readonly seed: number;
  /** Resamples of the task set; default 10 000. */
  readonly resamples?: number;
  /** Coverage; default 0.95. */
  readonly level?: number;
}

export interface Interval {
  readonly estimate: number;
  readonly low: number;
  readonly high: number;
}

/**
 * Percentile bootstrap of the mean over tasks: tasks are resampled with replacement (a task's
 * repeated samples stay together as its one score). Deterministic given the seed.
 */
export function bootstrapMeanInterval(perTask: readonly number[], options: BootstrapOptions): Interval {
  const n = perTask.length;
  if (n === 0) throw new RangeError("bootstrap needs at least one task");
  const resamples = options.resamples ?? 10_000;
  const level = options.level ?? 0.95;
  if (!Number.isInteger(resamples) || resamples < 1)
    throw new RangeError(`bootstrap resamples must be a positive integer, got ${resamples}`);
  if (!(level > 0 && level < 1)) throw new RangeError(`bootstrap level must be in (0, 1), got ${level}`);
  const random = mulberry32(options.seed);
  const means = new Array<number>(resamples);
  for (let b = 0; b < resamples; b++) {
    let s = 0;
    for (let j = 0; j < n; j++) s += perTask[randomInt(random, n)] as number;
    means[b] = s / n;
  }
  means.sort((a, b) => a - b);
  const tail = (1 - level) / 2;
  const lowIndex = Math.min(resamples - 1, Math.max(0, Math.floor(tail * resamples)));
  const highIndex = Math.min(resamples - 1, Math.max(0, Math.ceil((1 - tail) * resamples) - 1));
  return { estimate: mean(perTask), low: means[lowIndex] as number, high: means[highIndex] as number };
}

export interface PairedComparison {
  /** b - a per task. */
  readonly differences: number[];
  readonly meanDifference: number;
  /** Sample standard deviation of the differences / sqrt(tasks); 0 for one task. */
  readonly standardError: number;
  readonly interval: Interval;
}

/** Two policies on the same tasks: analyse the per-task differences, not two separate intervals. */
export function pairedDifferences(
  a: readonly number[],
  b: readonly number[],
  options: BootstrapOptions,
): PairedComparison {
  if (a.length !== b.length)
    throw new RangeError(`paired comparison needs the same tasks: ${a.length} vs ${b.length} scores`);
  const differences = a.map((x, i) => (b[i] as number) - x);
  const m = mean(differences);
  const n = differences.length;
  let ss = 0;
  for (const d of differences) ss += (d - m) * (d - m);
  const standardError = n > 1 ? Math.sqrt(ss / (n - 1) / n) : 0;
  return { differences, meanDifference: m, standardError, interval: bootstrapMeanInterval(differences, options) };
}
