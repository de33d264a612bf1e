// Growth benchmark: how `arl check` (front end, semantic model, lint, lowering) grows with the
// size of its input, one generated shape at a time (many comments, envs, list items,
// experiments, reward terms, sweep variants). Each shape is timed at n, 2n and 4n; the row per
// shape is the worse of the two ratios per doubling. Linear work doubles (x2); the goal allows
// x2.2 for noise and cache effects. A quadratic step shows up as about x4. Times are the
// process's CPU time (user + system), not wall time: on a machine shared with other jobs the
// wall time of a run also counts the time it waited for a core, which says nothing of growth.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { Compiler } from "../compiler.js";
import { consume, median, type BenchResult, type BenchSection, type MeasureOptions } from "./harness.js";
import { at } from "../contracts/checked.js";

/** The goal per doubling of input size. */
const growthGoal = 2.2;

interface Shape {
  readonly name: string;
  /** What `n` counts. */
  readonly unit: string;
  /** The smallest size timed; 2x and 4x follow. */
  readonly base: number;
  /** A spec that checks without errors, of size `n`. */
  spec(n: number): string;
}

const header = `import "std/algorithms" as algo
import "std/envs/findmax" as findmax
`;

/** One small experiment that checks clean; `body` goes inside it. */
function experiment(
  name: string,
  body = "",
  { env = "  env code extends findmax.task {}\n", reward = "  reward { success: outcome.tests_passed }\n" } = {},
): string {
  return `experiment ${name} {
  policy { model: "builtin:tiny" }
${env}${reward}  algorithm extends algo.grpo {}
${body}}
`;
}

const range = (n: number) => Array.from({ length: n }, (_, i) => i);

const shapes: readonly Shape[] = [
  {
    name: "comments",
    unit: "comment lines",
    base: 100_000,
    spec: (n) =>
      `${header}${range(n)
        .map((i) => `// comment ${i}: the lexer skips it, nothing else sees it\n`)
        .join("")}${experiment("e")}`,
  },
  {
    name: "envs",
    unit: "envs in one experiment",
    base: 200,
    spec: (n) =>
      `${header}${experiment("e", "", {
        env: range(n)
          .map((i) => `  env code_${i} extends findmax.task { weight: ${1 + (i % 3)} }\n`)
          .join(""),
      })}`,
  },
  {
    name: "long lists",
    unit: "items in one list",
    base: 10_000,
    spec: (n) =>
      `${header}${experiment(
        "e",
        `  eval { samples_per_task: 4096, k: [${range(n)
          .map((i) => (i % 4096) + 1)
          .join(", ")}] }\n`,
      )}`,
  },
  {
    name: "experiments",
    unit: "experiments in one file",
    base: 200,
    spec: (n) =>
      `${header}${range(n)
        .map((i) => experiment(`e_${i}`, `  seed: ${i}\n`))
        .join("\n")}`,
  },
  {
    name: "reward terms",
    unit: "terms in one reward block",
    base: 4_000,
    spec: (n) =>
      `${header}${experiment("e", "", {
        reward: `  reward {\n${range(n)
          .map((i) => `    t_${i}: ${(i % 7) / 100} * outcome.tests_passed\n`)
          .join("")}  }\n`,
      })}`,
  },
  {
    name: "sweep variants",
    unit: "variants of one experiment",
    base: 200,
    spec: (n) =>
      `${header}${experiment(
        "e",
        `  sweep { rollout.iterations: [${range(n)
          .map((i) => i + 1)
          .join(", ")}] }\n`,
      )}`,
  },
];

interface Growth {
  readonly sizes: readonly number[];
  /** The CPU time of each measured run at each size, in milliseconds. */
  readonly samples: readonly (readonly number[])[];
  /**
   * The median run at each size. Not the cheapest: the process's CPU time counts V8's helper
   * threads, whose concurrent marking and sweeping land in one run and not the next, so that the
   * cheapest of a few runs is at times one that escaped that work (once 45% below the other two).
   */
  readonly ms: readonly number[];
  /** The larger of t(2n)/t(n) and t(4n)/t(2n), of the median runs. */
  readonly worstRatio: number;
}

/** CPU milliseconds (user + system, every thread of the process) of one call of `fn`. */
function cpuOnce(fn: () => unknown): number {
  const start = process.cpuUsage();
  consume(fn());
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}

/**
 * A full garbage collection, so that no run pays for the garbage of the one before: a bigger
 * input leaves more of it, which would show up as growth. Uses node's --expose-gc when given,
 * else turns it on for a fresh context.
 */
function collector(): () => void {
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (exposed) return exposed;
  setFlagsFromString("--expose-gc");
  return runInNewContext("gc") as () => void;
}

/** Warm-up calls (discarded), then the CPU time of each measured call, each after a full collection. */
function measureCpu(fn: () => unknown, options: MeasureOptions): number[] {
  const gc = collector();
  for (let i = 0; i < options.warmup; i++) cpuOnce(fn);
  const samples: number[] = [];
  for (let i = 0; i < options.runs; i++) {
    gc();
    samples.push(cpuOnce(fn));
  }
  return samples;
}

/** Times `arl check` of `shape` at n, 2n and 4n (each spec written once, outside the timed runs). */
function growth(shape: Shape, options: MeasureOptions, dir: string): Growth {
  const sizes = [shape.base, shape.base * 2, shape.base * 4];
  const samples: number[][] = [];
  for (const n of sizes) {
    const file = path.join(dir, `${shape.name.replace(/\W+/g, "-")}-${n}.arl`);
    writeFileSync(file, shape.spec(n));
    const first = new Compiler().check(file);
    const errors = first.diagnostics.filter((d) => d.severity === "error");
    const [error] = errors;
    if (error)
      throw new Error(
        `scaling shape '${shape.name}' (n = ${n}) has errors, first: ${error.code} ${error.message} at line ${error.range.start.line}`,
      );
    samples.push(measureCpu(() => new Compiler().check(file), options));
  }
  const ms = samples.map((runs) => median(runs));
  const worstRatio = Math.max(at(ms, 1) / at(ms, 0), at(ms, 2) / at(ms, 1));
  return { sizes, samples, ms, worstRatio };
}

export function scalingSection(options: MeasureOptions): BenchSection {
  // Big inputs: fewer runs than the other sections, and one warm-up (each run takes up to seconds).
  const measureOptions: MeasureOptions = { warmup: 1, runs: Math.min(options.runs, 5) };
  return {
    name: "scaling: arl check per doubling of input size",
    describe() {
      return [
        `shapes: ${shapes.map((s) => `${s.name} (${s.unit}, from ${s.base.toLocaleString("en-US")})`).join("; ")}.`,
        `Each shape is checked at n, 2n and 4n: new Compiler().check(file) (front end, semantics, lint, lowering); ${measureOptions.warmup} warm-up + ${measureOptions.runs} measured runs; times are CPU time of the process (user + system), not wall time.`,
        `Row 'per doubling' = the worse of t(2n)/t(n) and t(4n)/t(2n), t the median run; goal <= x${growthGoal} (linear is x2, quadratic about x4).`,
      ];
    },
    async run() {
      const dir = mkdtempSync(path.join(tmpdir(), "arl-bench-scaling-"));
      try {
        const results: BenchResult[] = [];
        for (const shape of shapes) {
          const g = growth(shape, measureOptions, dir);
          g.sizes.forEach((n, k) => {
            const runs = at(g.samples, k);
            results.push({
              name: `${shape.name}: n = ${n.toLocaleString("en-US")}`,
              medianMs: median(runs),
              minMs: Math.min(...runs),
              maxMs: Math.max(...runs),
              runs: runs.length,
              note: `${shape.unit}; CPU ms`,
            });
          });
          results.push({
            name: `${shape.name}: per doubling`,
            value: g.worstRatio,
            unit: "x",
            goal: `<= ${growthGoal}`,
            met: g.worstRatio <= growthGoal,
          });
        }
        consume(results);
        return results;
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
