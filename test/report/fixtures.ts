// Run directories for report tests: real ones, produced by running a small two-variant ablation
// with arl run (scripted trainer double, subprocess env), and hand-written ones with
// realistic values for the cases a real run cannot easily produce (partial, killed, no metrics).
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { deriveSeed, derivedRandom } from "../../src/contracts/random.js";
import { bootstrapMeanInterval, passAtK } from "../../src/rl/eval.js";
import { RunDirectory } from "../../src/runtime/run-dir.js";
import { runArl } from "../helpers/cli.js";
import { compilePlans, counterSubprocessEnv, scriptedTrainerScript } from "../helpers/plans.js";

const trainerScript = scriptedTrainerScript;

export const ablationSpec = (
  iterations: number,
  size: { batch: number; evalTasks: number; samples: number } = { batch: 3, evalTasks: 8, samples: 4 },
  seeds?: readonly number[],
) => `
experiment counting {
  seed: 3
  policy { model: "builtin:tiny" }
  ${counterSubprocessEnv(40)}
  harness { max_turns: 4 }
  reward {
    success: outcome.success
    progress: 0.1 * state.progress
  }
  algorithm {
    group_size: 4
    advantage { baseline: leave_one_out }
  }
  rollout { tasks_per_batch: ${size.batch}, iterations: ${iterations}, concurrency: 8 }
  eval { every: 2, tasks: ${size.evalTasks}, k: [1, 2], samples_per_task: ${size.samples}, before_training: true }
  ablation {
    g4 { algorithm.group_size: 4 }
    g2 { algorithm.group_size: 2 }
  }${seeds ? `\n  sweep { seed: [${seeds.join(", ")}] }` : ""}
}
`;

/** The sizes runAblation runs the ablation spec with. */
export const ablationSize = { batch: 2, evalTasks: 6, samples: 2 };

/**
 * Runs the ablation spec with `arl run` (every variant in turn, the scripted trainer double) in
 * a fresh working directory; returns it, the run directories in variant order and what arl run
 * printed.
 */
export async function runAblation(iterations = 2): Promise<{ cwd: string; dirs: string[]; stdout: string }> {
  const cwd = mkdtempSync(path.join(tmpdir(), "arl-report-runs-"));
  writeFileSync(path.join(cwd, "spec.arl"), ablationSpec(iterations, ablationSize));
  const run = await runArl(
    ["run", "spec.arl", "--out", "runs", "--trainer-command", `${process.execPath} ${trainerScript}`],
    { cwd },
  );
  if (run.code !== 0) throw new Error(`arl run failed (${run.code}):\n${run.stderr}`);
  return { cwd, dirs: [...run.stdout.matchAll(/; run directory: (\S+)/g)].map((m) => m[1] ?? ""), stdout: run.stdout };
}

export interface WrittenRunOptions {
  /** The ablation variant whose plan is written (g4 or g2). */
  readonly variant?: "g4" | "g2";
  /** Iterations the plan asks for. */
  readonly planned?: number;
  /** Iterations committed (default: all planned). */
  readonly iterations?: number;
  /** Skill gained per iteration: success and pass@k rise with it. */
  readonly gain?: number;
  /** Whether metrics.jsonl carries each eval's summary (the runtime's format) or only eval/*.jsonl does. */
  readonly metricsEval?: boolean;
  /** Eval tasks (the plan's eval.tasks is 8; a different number exercises partial overlap). */
  readonly evalTasks?: number;
  /** The variant of a seed sweep (`sweep { seed: [1, 2, 3] }`) with this seed: `g4,seed=2`. */
  readonly seed?: 1 | 2 | 3;
  /** A cold start of this many epochs: its losses in state.json and iteration 1's metrics line. */
  readonly sftEpochs?: number;
  /** Watchdog warnings in these iterations' metrics lines. */
  readonly warnAt?: readonly number[];
  /** Fields of the plan's env `counter` set otherwise, as a variant of the env would have them. */
  readonly env?: Readonly<Record<string, unknown>>;
}

/**
 * A run directory written file by file in the runtime's formats, with realistic values: the
 * compiled plan of one ablation variant, a manifest, one metrics line per iteration and
 * per-task eval files every 2 iterations (and before training), summaries as the orchestrator
 * computes them.
 */
export function writeRun(root: string, options: WrittenRunOptions = {}): string {
  const planned = options.planned ?? 6;
  const iterations = options.iterations ?? planned;
  const gain = options.gain ?? 0.1;
  const evalTasks = options.evalTasks ?? 8;
  const variant = `${options.variant ?? "g4"}${options.seed ? `,seed=${options.seed}` : ""}`;
  const plan = compilePlans(ablationSpec(planned, undefined, options.seed ? [1, 2, 3] : undefined)).find(
    (p) => p.variant === variant,
  )!;
  if (options.env) Object.assign(plan.envs.counter!, options.env);
  // Seeds of one variant differ a little, as runs of several seeds do.
  const jitter = options.seed ? 0.02 * (options.seed - 2) : 0;
  const runDir = RunDirectory.create(root, plan, new Date(Date.UTC(2026, 0, 2, 3, 4, 5)));
  runDir.writeManifest({
    plan_hash: plan.hash,
    experiment: plan.experiment,
    variant: plan.variant,
    provenance: plan.provenance,
    versions: { arl: "0.1.0", node: "v20.19.0", torch: "2.5.1", transformers: "4.46.0" },
    trainer: { name: "arl-torch", version: "0.1.0" },
    capabilities: { device: "cuda", world_size: 1 },
    model: { name: "Qwen/Qwen2.5-0.5B-Instruct", parameters: 494032768 },
    seed: plan.seed,
    envs: { counter: { kind: "subprocess", version: null, data: null } },
    checkpoint: null,
  });
  const skill = (it: number) => Math.min(0.95, 0.25 + jitter + gain * it);
  const sft = options.sftEpochs
    ? {
        demos: 40,
        records: 0,
        heldout_records: 8,
        truncated: 0,
        skipped: 0,
        epochs: Array.from({ length: options.sftEpochs }, (_, e) => ({
          epoch: e + 1,
          train_nll: 2.5 / (e + 1),
          heldout_nll: 2.7 / (e + 1) + 0.1,
        })),
      }
    : undefined;
  const evalAt = (it: number) => {
    const rows = Array.from({ length: evalTasks }, (_, task) => {
      const random = derivedRandom(plan.seed, "fixture", plan.variant, it, task);
      const n = plan.eval.samples_per_task;
      const difficulty = (task % 3) * 0.15;
      let correct = 0;
      for (let s = 0; s < n; s++) if (random() < Math.max(0, skill(it) - difficulty)) correct++;
      const passes: Record<string, number> = Object.fromEntries(
        plan.eval.k.map((k) => [`pass@${k}`, passAtK(n, correct, k)]),
      );
      return { row: { env: "counter", task: task * 5, n, correct, env_errors: 0, ...passes }, passes };
    });
    runDir.writeEval(
      it,
      rows.map((r) => r.row),
    );
    const summary: Record<string, number> = {};
    for (const k of plan.eval.k) {
      const i = bootstrapMeanInterval(
        rows.map((r) => r.passes[`pass@${k}`]!),
        { seed: deriveSeed(plan.seed, "bootstrap", it, k), resamples: 2000 },
      );
      Object.assign(summary, { [`pass@${k}`]: i.estimate, [`pass@${k}_low`]: i.low, [`pass@${k}_high`]: i.high });
    }
    return summary;
  };
  evalAt(0);
  for (let it = 1; it <= iterations; it++) {
    const isEval = it % plan.eval.every === 0 || it === planned;
    const ev = isEval ? evalAt(it) : undefined;
    const success = Math.round(skill(it) * 12) / 12;
    const progress = Math.min(0.1, 0.04 + 0.01 * it);
    runDir.appendMetrics({
      iteration: it,
      success,
      reward: success + progress,
      reward_terms: { success, progress },
      effective_group_ratio: Math.max(0, 1 - 0.12 * it),
      acceptance_rate: 1,
      rejected_groups: 0,
      rejected_tokens: 0,
      generated_length: 212 - 9 * it,
      entropy: 0.92 - 0.06 * it,
      ratio_mean: 1,
      ratio_min: 0.81,
      ratio_max: 1.22,
      clip_fraction: 0.015 + 0.004 * it,
      kl: 0.0008 * it * it,
      grad_norm: 0.4 + 0.03 * it,
      loss: -0.01 * it,
      policy_loss: -0.012 * it,
      env_errors: 0,
      lag_drops: 0,
      tokens: 12 * (212 - 9 * it),
      tool_calls: 30,
      invalid_calls: 1,
      end_reasons: { finished: 11, truncated: 1, aborted: 0, env_error: 0 },
      policy_version: it,
      ...(it === 1 && sft ? { sft } : {}),
      ...(ev && options.metricsEval !== false ? { eval: ev } : {}),
      time: { rollout_s: 41.5 + it, reward_s: 0.75, update_s: 12.25, total_s: 61.5 + it },
      ...(options.warnAt?.includes(it)
        ? {
            warnings: [
              {
                code: "no-signal",
                message: `no learning signal for 2 iterations in a row (iterations ${it - 1} and ${it})`,
              },
            ],
          }
        : {}),
    });
    const offset = runDir.metricsSize;
    runDir.writeState({
      iteration: it,
      checkpoint: runDir.checkpointDir(it),
      bufferOffset: 0,
      metricsOffset: offset,
      sftDone: sft !== undefined,
      policyVersion: it,
      ...(sft ? { sft } : {}),
    });
  }
  return runDir.dir;
}

/**
 * A sweep's runs as `arl run` lays them out: spec.arl in `cwd` (the ablation's two arms over
 * seeds 1 to 3) and under cwd/runs seeds 1 and 2 of each arm (seed 3 never ran); g2's seed 1 had
 * a cold start of 3 epochs, a base eval (all tasks failed) and a watchdog warning at iteration 3.
 */
export function writeSweep(cwd: string): { runs: string; g4: string[]; g2: string[] } {
  writeFileSync(path.join(cwd, "spec.arl"), ablationSpec(6, undefined, [1, 2, 3]));
  const runs = path.join(cwd, "runs");
  const g4 = ([1, 2] as const).map((seed) => writeRun(runs, { variant: "g4", seed, gain: 0.1 }));
  const g2 = [
    writeRun(runs, { variant: "g2", seed: 1, gain: 0.05, sftEpochs: 3, warnAt: [3] }),
    writeRun(runs, { variant: "g2", seed: 2, gain: 0.05 }),
  ];
  const evalDir = path.join(g2[0]!, "eval");
  writeFileSync(
    path.join(evalDir, "base.jsonl"),
    readFileSync(path.join(evalDir, "iteration-00000.jsonl"), "utf8")
      .replace(/"correct":\d+/g, '"correct":0')
      .replace(/"pass@(\d)":[\d.]+/g, '"pass@$1":0'),
  );
  return { runs, g4, g2 };
}

/** A fresh temporary directory. */
export function tempDir(prefix = "arl-report-"): string {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  mkdirSync(dir, { recursive: true });
  return dir;
}
