// Asynchronous rollout benchmark: wall time per training iteration of synchronous rollout, one
// batch ahead (rollout.async, max_staleness 1) and k = 2, 4, 8 batches ahead, deterministic and
// with in-flight updates (k 4, 8), same plan otherwise, all measured in this run. Two env paces:
// env time comparable to the CPU trainers' own work, and env-bound (5x slower steps and resets,
// as agentic envs behind containers or tools are), where the pipeline has env time to hide. The env is a subprocess whose reset and steps sleep (paced-env.ts),
// each episode's times multiplied by a pace drawn from a heavy-tailed Pareto distribution, so
// that a synchronous batch waits for its slowest episode while the pipeline fills the lanes
// short episodes free with the next batches' episodes. Three trainers:
//   * the scripted test double (test/doubles/scripted-trainer.mjs, from a repository checkout),
//     whose train_step takes a fixed time (accelerator time: it leaves the CPUs free) and whose
//     skill moves with the advantages, so its success is a learning curve;
//   * the embedded CPU trainer (builtin:tiny), whose train steps and generation share its one
//     thread, so only env time can overlap the update there;
//   * the PyTorch trainer (runtime-gpu/arl_trainer, builtin:tiny on the CPU), where torch is here.
// A row's figure is the mean over iterations 2..N of metrics time.total_s (iteration 1 has nothing
// to overlap with; the mean, not the median, since a pipeline's iterations differ within a
// snapshot's batches); min and max are over the same iterations. Success is the mean over the last half of the
// iterations' episodes with its 95% Wilson interval; staleness is the mean lag (versions, one
// optimizer step per update) over the batches trained.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Compiler } from "../compiler.js";
import { hasErrors } from "../diagnostics/diagnostic.js";
import { envKinds } from "../envs/registry.js";
import { lowerModel } from "../plan/lower.js";
import type { Plan } from "../plan/schema.js";
import { executePlan } from "../runtime/orchestrator.js";
import { RunDirectory } from "../runtime/run-dir.js";
import { pythonWithTorch, trainerCommand } from "../trainer/launch.js";
import type { TrainerCommand } from "../trainer/protocol/client.js";
import type { BenchResult, BenchSection } from "./harness.js";
import { at } from "../contracts/checked.js";

const ITERATIONS = 12;
/** The env's base step and reset times; each episode multiplies both by its pace. */
interface EnvTimes {
  readonly stepMs: number;
  readonly resetMs: number;
}
const COMPARABLE: EnvTimes = { stepMs: 40, resetMs: 120 };
const ENV_BOUND: EnvTimes = { stepMs: 200, resetMs: 600 };
/** Pareto shape and cap of an episode's pace: mean about 2.5, the slowest of 16 about 8. */
const TAIL_ALPHA = 1.5;
const TAIL_CAP = 16;
const TRAIN_MS = 300;
/** A rollout mode: k null is synchronous; k batches ahead otherwise (1: one batch ahead), deterministic or with in-flight updates. */
interface Mode {
  readonly k: number | null;
  readonly inFlight: boolean;
}
const deterministic = (k: number | null): Mode => ({ k, inFlight: false });
const MODES: readonly Mode[] = [...[null, 1, 2, 4, 8].map(deterministic), { k: 4, inFlight: true }, { k: 8, inFlight: true }];
/** The env-bound pace is run on the embedded trainer only, in the modes that tell the story. */
const ENV_BOUND_MODES: readonly Mode[] = [deterministic(null), deterministic(4), { k: 4, inFlight: true }];

const pacedEnv = fileURLToPath(new URL("./paced-env.js", import.meta.url));
const scriptedDouble = fileURLToPath(new URL("../../test/doubles/scripted-trainer.mjs", import.meta.url));

function spec({ k, inFlight }: Mode, backend: "local" | "torch", times: EnvTimes): string {
  return `
experiment paced {
  seed: 1
  policy { model: "builtin:tiny", sampling { max_new_tokens: 16 } }
  env counter {
    kind: subprocess
    command: ["${process.execPath}", "${pacedEnv}", "${times.stepMs}", "${times.resetMs}", "${TAIL_ALPHA}", "${TAIL_CAP}"]
    tasks: 30
    signals {
      progress { scope: state, type: number, min: 0, max: 1 }
      success { scope: outcome, type: bool }
    }
    tool step { description: "advance the counter" }
    tool noop { description: "do nothing" }
  }
  harness { max_turns: 4 }
  reward { success: outcome.success }
  algorithm {
    group_size: 4
    advantage { baseline: leave_one_out }
  }
  resources { backend: ${backend} }
  rollout { tasks_per_batch: 4, iterations: ${ITERATIONS}, concurrency: 16${k === null ? "" : `, async { max_staleness: ${k}, max_policy_lag: ${k}${inFlight ? ", in_flight_updates: true" : ""} }`} }
  eval { every: 1000, tasks: 1, k: [1] }
}
`;
}

function compile(text: string, dir: string): Plan {
  const file = path.join(dir, "paced.arl");
  writeFileSync(file, text);
  const result = new Compiler().check(file);
  if (hasErrors(result.diagnostics) || !result.model) throw new Error(`async bench: the spec does not compile: ${result.diagnostics.map((d) => d.message).join("; ")}`);
  return at(lowerModel(result.model).plans, 0).plan;
}

interface Measured {
  /** Seconds of iterations 2..N. */
  readonly seconds: number[];
  readonly staleness: number;
  readonly success: { readonly p: number; readonly low: number; readonly high: number; readonly n: number };
}

/** The 95% Wilson score interval of `successes` out of `n`. */
function wilson(successes: number, n: number): { p: number; low: number; high: number; n: number } {
  if (n === 0) return { p: Number.NaN, low: Number.NaN, high: Number.NaN, n };
  const z = 1.96;
  const p = successes / n;
  const centre = (p + (z * z) / (2 * n)) / (1 + (z * z) / n);
  const half = (z * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n))) / (1 + (z * z) / n);
  return { p, low: centre - half, high: centre + half, n };
}

async function measure(plan: Plan, trainer: TrainerCommand, dir: string): Promise<Measured> {
  const runDir = RunDirectory.create(dir, plan);
  await executePlan({ plan, runDir, trainer, envs: envKinds, log: () => undefined });
  const metrics = runDir.readMetrics();
  const seconds = metrics.slice(1).map((m) => (m.time as { total_s: number }).total_s);
  const staleness = metrics.reduce((s, m) => s + ((m.policy_lag_mean as number | undefined) ?? 0), 0) / metrics.length;
  // Every iteration plays B x G training episodes (no dynamic sampling): success is a fraction of them.
  const episodes = plan.rollout.tasks_per_batch * plan.algorithm.group_size;
  const late = metrics.slice(Math.floor(metrics.length / 2));
  const successes = late.reduce((s, m) => s + Math.round((m.success as number) * episodes), 0);
  return { seconds, staleness, success: wilson(successes, late.length * episodes) };
}

const modeName = ({ k, inFlight }: Mode) => (k === null ? "synchronous" : k === 1 ? "one batch ahead (k 1)" : `k ${k}${inFlight ? " in flight" : ""}`);
const mean = (xs: readonly number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
const interval = (s: Measured["success"]) => `success ${s.p.toFixed(2)} [${s.low.toFixed(2)}, ${s.high.toFixed(2)}] of ${s.n} episodes`;

function torchAvailable(): boolean {
  try {
    return spawnSync(pythonWithTorch(), ["-c", "import torch"], { stdio: "ignore" }).status === 0;
  } catch {
    return false;
  }
}

export function asyncSection(): BenchSection {
  return {
    name: "asynchronous rollout: wall time per iteration, synchronous vs one batch ahead vs k = 2, 4, 8",
    describe: () => [
      `4 tasks x G 4, up to 4 turns, 16 episode lanes; env = a subprocess per episode, reset ${COMPARABLE.resetMs} ms and steps ${COMPARABLE.stepMs} ms (env-bound rows: ${ENV_BOUND.resetMs} and ${ENV_BOUND.stepMs} ms), both times a per-episode pace ~ Pareto(${TAIL_ALPHA}) capped at ${TAIL_CAP} (heavy-tailed episode durations); one optimizer step per update; ${ITERATIONS} iterations, mean of iterations 2..${ITERATIONS}.`,
      `scripted double: train_step ${TRAIN_MS} ms (accelerator time), learns; embedded and PyTorch: builtin:tiny on the CPU (a random policy: its success stays near 0, so its comparison says little). One seed per row; success over the last ${ITERATIONS / 2} iterations with its 95% Wilson interval.`,
    ],
    async run() {
      const dir = mkdtempSync(path.join(tmpdir(), "arl-bench-async-"));
      const rows: BenchResult[] = [];
      try {
        const cases: [string, "local" | "torch", ((plan: Plan) => TrainerCommand) | undefined, string, EnvTimes, readonly Mode[]][] = [
          [`scripted double, train_step ${TRAIN_MS} ms`, "local", existsSync(scriptedDouble) ? () => ({ file: process.execPath, args: [scriptedDouble], env: { DOUBLE_TRAIN_MS: String(TRAIN_MS) } }) : undefined, "test/doubles/ is not here (run from a repository checkout)", COMPARABLE, MODES],
          ["embedded builtin:tiny", "local", (plan) => trainerCommand(plan), "", COMPARABLE, MODES],
          ["PyTorch builtin:tiny (CPU)", "torch", torchAvailable() ? (plan) => trainerCommand(plan) : undefined, "no Python with torch here (npm run setup:gpu)", COMPARABLE, MODES],
          ["embedded builtin:tiny, env-bound", "local", (plan) => trainerCommand(plan), "", ENV_BOUND, ENV_BOUND_MODES],
        ];
        for (const [label, backend, trainerOf, why, times, modes] of cases) {
          if (!trainerOf) {
            rows.push({ name: label, note: `skipped: ${why}` });
            continue;
          }
          let synchronous: number | undefined;
          for (const mode of modes) {
            const plan = compile(spec(mode, backend, times), dir);
            const m = await measure(plan, trainerOf(plan), dir);
            const ms = m.seconds.map((s) => s * 1000);
            const perIteration = mean(ms);
            rows.push({
              name: `${label}: ${modeName(mode)}`,
              value: perIteration,
              unit: "ms per iteration (mean)",
              note: `min ${Math.min(...ms).toFixed(0)}, max ${Math.max(...ms).toFixed(0)} ms; mean staleness ${m.staleness.toFixed(2)} versions; ${interval(m.success)}`,
            });
            if (mode.k === null) synchronous = perIteration;
            else if (synchronous !== undefined) {
              const speedUp = synchronous / perIteration;
              rows.push({ name: `${label}: ${modeName(mode)} speed-up over synchronous`, value: speedUp, unit: "x", ...(mode.k >= 4 ? { goal: ">= 2 (k >= 4)", met: speedUp >= 2 } : {}) });
            }
          }
        }
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
      return rows;
    },
  };
}
