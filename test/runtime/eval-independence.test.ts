// Evaluation draws from no stream training uses (streams.ts): the same plan with other eval
// settings (how often, how many episodes a task) trains the same policy, step for step. The
// real-TextWorld tables rely on it when they change how they evaluate but not how they train.
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { envKinds } from "../../src/envs/registry.js";
import { executePlan } from "../../src/runtime/orchestrator.js";
import { RunDirectory } from "../../src/runtime/run-dir.js";
import { compilePlans, embeddedTrainer } from "../helpers/plans.js";

const spec = (evaluation: string) => `
import "std/envs/rooms" as rooms

experiment eval_independence {
  seed: 3
  policy { model: "builtin:tiny", sampling { temperature: 1.0, max_new_tokens: 12 } }
  env quest extends rooms.world { tasks: 24, split { train: 0.5, test: 0.5 } }
  harness { tools: quest.tools, format: text_action, max_turns: 4, max_response_tokens: 12 }
  // Progress as a potential too, so that rewards vary in a group and RL takes real steps.
  reward { success: outcome.success, progress: potential(state.progress) }
  algorithm { group_size: 4, advantage { baseline: leave_one_out }, optimizer { lr: 5e-3 } }
  rollout { tasks_per_batch: 2, iterations: 2, sft { demos: 8, epochs: 4, lr: 2e-2 } }
  eval { ${evaluation} }
}
`;

/** Each iteration's training figures and the last checkpoint's weights, of a run of `evaluation`. */
async function trained(evaluation: string) {
  const [plan] = compilePlans(spec(evaluation));
  const runDir = RunDirectory.create(mkdtempSync(path.join(tmpdir(), "arl-eval-independence-")), plan!);
  await executePlan({ plan: plan!, runDir, trainer: embeddedTrainer, envs: envKinds, log: () => undefined });
  const training = runDir.readMetrics().map((m) => ({
    iteration: m.iteration,
    reward: m.reward,
    success: m.success,
    grad_norm: m.grad_norm,
    loss: m.loss,
    entropy: m.entropy,
  }));
  const weights = readFileSync(path.join(runDir.checkpointDir(2), "model.safetensors"));
  return { training, weights };
}

describe("evaluation and training", () => {
  it("trains the same policy whatever eval.every and eval.samples_per_task are", async () => {
    const everyIteration = await trained("every: 1, tasks: 4, k: [1]");
    const lessOftenThreeEach = await trained("every: 2, tasks: 4, samples_per_task: 3, k: [1]");
    expect(lessOftenThreeEach.training.map((t) => t.iteration)).toEqual([1, 2]);
    // RL did work (a gradient in some iteration), so a perturbed sampling stream would show.
    expect(everyIteration.training.some((t) => (t.grad_norm as number) > 0)).toBe(true);
    expect(lessOftenThreeEach.training).toEqual(everyIteration.training);
    expect(lessOftenThreeEach.weights.equals(everyIteration.weights)).toBe(true);
  }, 120_000);
});
