import type { LintRule } from "../rule.js";

export const klDoublePlacement: LintRule = {
  code: "kl-double-placement",
  severity: "warning",
  title: "The KL penalty is applied both in the loss and in the reward",
  explanation: `A KL penalty to the reference goes either into the loss as beta * reduce(k) (GRPO,
DeepSeekMath) or into the per-token reward as -beta * k before advantages are computed (PPO-style
RLHF, InstructGPT) (docs/semantics.md §6). \`placement: both\` does both: the effective strength is about
twice beta, through two different gradients (the reward copy also passes through the advantage
normalisation and the clip), so beta no longer means what the papers it was taken from mean by it.
This is rarely intended; pick one place.`,
  check(ctx) {
    const { kl } = ctx.config.algorithm;
    if (kl.placement !== "both" || kl.coef <= 0) return;
    ctx.report({
      at: ["algorithm", "kl", "placement"],
      message: `kl.placement: both adds the KL penalty to the loss and subtracts it from the reward: it is counted twice (about 2 x beta = ${2 * kl.coef}) through two different gradients`,
      hint: "choose one: `placement: loss` (GRPO) or `placement: reward` (PPO-style RLHF)",
    });
  },
};
