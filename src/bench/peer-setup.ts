// What both peer sections (peer.ts, single turn; peer-tools.ts, multi-turn) set up alike: the
// training lines of ARL's spec, and the random tiny Qwen3 every side starts from.

import { spawnSync } from "node:child_process";
import path from "node:path";
import { PACKAGE_ROOT } from "../contracts/paths.js";
import { RUNTIME_GPU_DIR } from "../contracts/python.js";

/** The script that writes the tests' random tiny models (a Qwen3 here, with the real tokenizer). */
export const MODEL_MAKER = path.join(RUNTIME_GPU_DIR, "tests/hf_models.py");

/**
 * The spec's lines from its reward to its resources in both peer sections: the score as the
 * reward, GRPO as TRL computes it (group mean/std advantage, clipped surrogate, no KL, token mean,
 * AdamW at `lr`), `w.prompts` x `w.group` episodes an iteration (`rolloutExtra` ends the rollout
 * block), no evaluation, the PyTorch trainer.
 */
export function peerTraining(
  w: { readonly group: number; readonly prompts: number; readonly clip: number; readonly gradClip: number },
  lr: number,
  iterations: number,
  rolloutExtra = "",
): string {
  return `  reward { score: outcome.score }
  algorithm {
    group_size: ${w.group}
    advantage { estimator: group, baseline: mean, normalize: std }
    clip { low: ${w.clip}, high: ${w.clip} }
    kl { coef: 0.0 }
    reduction: token_mean
    optimizer { lr: ${lr}, betas: [0.9, 0.999], eps: 1e-8, weight_decay: 0, grad_clip: ${w.gradClip} }
  }
  rollout { tasks_per_batch: ${w.prompts}, iterations: ${iterations}, concurrency: ${w.prompts * w.group}${rolloutExtra} }
  eval { split: test, every: 1000, tasks: 1, k: [1], before_training: false }
  resources { backend: torch }`;
}

/** Writes a random tiny Qwen3 with the real Qwen3 tokenizer to `modelDir`; `what` names the bench in the error when it cannot. */
export function writeTinyQwen3(python: string, modelDir: string, what: string): void {
  const made = spawnSync(python, [MODEL_MAKER, modelDir, "--arch", "qwen3", "--tokenizer", "qwen3"], {
    cwd: PACKAGE_ROOT,
    encoding: "utf8",
    timeout: 300_000,
  });
  if (made.status !== 0) throw new Error(`${what}: could not write the model: ${(made.stderr ?? "").slice(-2000)}`);
}
