// Asynchronous rollout benchmark: wall time per training iteration, synchronous against
// rollout.async (one batch ahead), same plan otherwise, both measured in this run. The env is a
// subprocess whose reset and steps sleep (paced-env.ts), so rollouts take real time that the
// pipeline can hide behind the update. Two trainers:
//   * the scripted test double (test/doubles/scripted-trainer.mjs, from a repository checkout),
//     whose train_step takes a fixed time (accelerator time: it leaves the CPUs free);
//   * the embedded CPU trainer (builtin:tiny), whose train steps and generation share its one
//     thread, so only env time can overlap the update there.
// A row's figure is the median over iterations 2..N of metrics time.total_s (iteration 1 has
// nothing to overlap with); min and max are over the same iterations.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
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
import type { TrainerCommand } from "../trainer/protocol/client.js";
import { median, type BenchResult, type BenchSection } from "./harness.js";
import { at } from "../contracts/checked.js";

const ITERATIONS = 6;
const STEP_MS = 40;
/** Env start-up time (a container, a remote session): the scripted case's, and the embedded case's. */
const RESET_MS = 60;
const SLOW_RESET_MS = 800;
const TRAIN_MS = 400;

const pacedEnv = fileURLToPath(new URL("./paced-env.js", import.meta.url));
const scriptedDouble = fileURLToPath(new URL("../../test/doubles/scripted-trainer.mjs", import.meta.url));
const embeddedTrainer = fileURLToPath(new URL("../trainer/embedded/main.js", import.meta.url));

/** Two minibatches per update: pipelined samples are 2 versions old, the limit allows it. */
function spec(asynchronous: boolean, resetMs: number): string {
  return `
experiment paced {
  seed: 1
  policy { model: "builtin:tiny", sampling { max_new_tokens: 24 } }
  env counter {
    kind: subprocess
    command: ["${process.execPath}", "${pacedEnv}", "${STEP_MS}", "${resetMs}"]
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
    minibatches: 2
    advantage { baseline: leave_one_out }
  }
  rollout { tasks_per_batch: 4, iterations: ${ITERATIONS}, concurrency: 16${asynchronous ? ", async { max_policy_lag: 2 }" : ""} }
  eval { every: 100, tasks: 1, k: [1] }
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

/** Seconds per iteration (iterations 2..N) and the whole run's wall time. */
async function perIteration(plan: Plan, trainer: TrainerCommand, dir: string): Promise<{ seconds: number[]; wallS: number }> {
  const runDir = RunDirectory.create(dir, plan);
  const started = performance.now();
  await executePlan({ plan, runDir, trainer, envs: envKinds, log: () => undefined });
  const wallS = (performance.now() - started) / 1000;
  const seconds = runDir.readMetrics().slice(1).map((m) => (m.time as { total_s: number }).total_s);
  return { seconds, wallS };
}

function row(name: string, r: { seconds: number[]; wallS: number }): BenchResult {
  const ms = r.seconds.map((s) => s * 1000);
  return { name, medianMs: median(ms), minMs: Math.min(...ms), maxMs: Math.max(...ms), runs: ms.length, note: `whole run ${r.wallS.toFixed(1)} s (${ITERATIONS} iterations, startup included)` };
}

export function asyncSection(): BenchSection {
  return {
    name: "asynchronous rollout: wall time per iteration, synchronous vs one batch ahead",
    describe: () => [
      `4 tasks x G 4, up to 4 turns, 16 episodes at once; env = a subprocess per episode, step ${STEP_MS} ms; update = 2 minibatch steps; ${ITERATIONS} iterations, median of iterations 2..${ITERATIONS}.`,
      `scripted double: train_step takes ${TRAIN_MS} ms (accelerator time), env reset ${RESET_MS} ms; embedded: builtin:tiny on the CPU (update and generation share its one thread), env reset ${SLOW_RESET_MS} ms (its random policy rarely makes a valid call, so reset is its env time).`,
    ],
    async run() {
      const dir = mkdtempSync(path.join(tmpdir(), "arl-bench-async-"));
      const rows: BenchResult[] = [];
      try {
        const cases: [string, TrainerCommand | undefined, number][] = [
          [`scripted double, train_step ${TRAIN_MS} ms`, existsSync(scriptedDouble) ? { file: process.execPath, args: [scriptedDouble], env: { DOUBLE_TRAIN_MS: String(TRAIN_MS) } } : undefined, RESET_MS],
          ["embedded builtin:tiny", { file: process.execPath, args: [embeddedTrainer] }, SLOW_RESET_MS],
        ];
        for (const [label, trainer, resetMs] of cases) {
          if (!trainer) {
            rows.push({ name: label, note: "skipped: test/doubles/ is not here (run from a repository checkout)" });
            continue;
          }
          const a = await perIteration(compile(spec(false, resetMs), dir), trainer, dir);
          const b = await perIteration(compile(spec(true, resetMs), dir), trainer, dir);
          rows.push(row(`${label}: synchronous`, a), row(`${label}: async (one batch ahead)`, b));
          const ratio = median(b.seconds) / median(a.seconds);
          rows.push({ name: `${label}: async / synchronous`, value: ratio, unit: "x", goal: "< 1", met: ratio < 1 });
        }
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
      return rows;
    },
  };
}
