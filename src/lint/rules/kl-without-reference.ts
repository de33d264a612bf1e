import type { LintRule } from "../rule.js";

export const klWithoutReference: LintRule = {
  code: "kl-without-reference",
  severity: "error",
  title: "A KL penalty with no reference policy",
  explanation: `The KL term beta * KL(pi_theta || pi_ref) keeps the policy near a named reference over the
whole run (docs/semantics.md §6): the initial checkpoint, or a snapshot refreshed every N steps, which a
report must name (DeepSeekMath's GRPO uses the initial policy). It is a different knob from the PPO
clip, which only limits movement away from the behaviour policy within one batch. A positive
\`kl.coef\` with \`kl.reference: none\` has nothing to measure against: the plan cannot say what the
penalty means.`,
  check(ctx) {
    const { kl } = ctx.config.algorithm;
    if (kl.coef <= 0 || kl.reference !== null) return;
    const refWritten = ctx.isWritten(["algorithm", "kl", "reference"]);
    ctx.report({
      at: refWritten ? ["algorithm", "kl", "reference"] : ["algorithm", "kl", "coef"],
      message: `kl.coef is ${kl.coef} but kl.reference is none: there is no reference policy to measure the KL penalty against (docs/semantics.md §6)`,
      hint: "set `kl { reference: initial }` (the starting checkpoint) or `refresh(N)`, or `coef: 0` to turn KL off",
    });
  },
};
