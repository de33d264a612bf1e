import type { LintRule } from "../rule.js";
import { updateSteps } from "../../rl/lag.js";

export const engineWithoutMismatchCorrection: LintRule = {
  code: "engine-without-mismatch-correction",
  severity: "warning",
  title: "An inference engine samples the rollouts and mask.tis is none",
  explanation: `vLLM and SGLang compute log-probs with other kernels, other numerics and other batching
than the trainer, so even with the same weights the probability the engine sampled a token with
is not the trainer's (Yao et al. 2025, "Your Efficient RL Framework Secretly Brings You
Off-Policy RL Training"). Every engine token is then off-policy for the trainer: the update's
ratio pi_theta / pi_old, with pi_old recomputed by the trainer, does not see the gap between the
trainer's pi_old and the engine's mu, and the gradient is biased by it. The gap grows with
low-precision weights and kernels, and adds to the staleness of asynchronous rollout and of an
update that takes several optimizer steps per batch. Truncated importance sampling weights each
token's policy-gradient term by min(pi_old / mu, C) (mask.tis, docs/semantics.md §12), per token
or per sequence. The run measures the gap either way (the metrics' mismatch).`,
  check(ctx) {
    const { resources, mask, rollout, algorithm } = ctx.config;
    const engine = resources.rollout.engine;
    if (engine === "trainer" || mask.tis !== null) return;
    const steps = updateSteps(algorithm.epochs, algorithm.minibatches, rollout.tasks_per_batch * algorithm.group_size);
    const more = [
      ...(rollout.async
        ? ["rollout is asynchronous, so the samples are also older than the weights that train on them"]
        : []),
      ...(steps > 1
        ? [
            `each update takes ${steps} optimizer steps per batch (algorithm.epochs x minibatches), so all but the first train on off-policy tokens anyway`,
          ]
        : []),
    ];
    ctx.report({
      at: ["resources", "rollout", "engine"],
      message:
        `${engine} samples the rollouts and mask.tis is none: its log-probs come from other kernels and numerics than the trainer's, so every token it sampled is off-policy for the trainer and the update does not correct for it` +
        (more.length > 0 ? `; and ${more.join("; and ")}` : "") +
        " (docs/semantics.md §12)",
      hint: "add `mask { tis { cap: 2 } }` (truncated importance sampling against the engine's log-probs; level: sequence for one weight per sequence)",
    });
  },
};
