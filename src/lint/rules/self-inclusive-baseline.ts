import type { LintRule } from "../rule.js";
import { formatNumber } from "../util.js";

export const selfInclusiveBaseline: LintRule = {
  code: "self-inclusive-baseline",
  severity: "warning",
  title: "The group-mean baseline includes the sample's own reward",
  explanation: `A baseline keeps the policy gradient unbiased only if it does not depend on the action it is
subtracted from: E[b(h) grad log pi(a|h)] = b(h) grad sum_a pi(a|h) = 0. GRPO's group mean contains
the sample's own reward, so it breaks this condition; for G independent trajectories of one task the
expected gradient shrinks by (G - 1)/G: 25% at G = 4, 12.5% at G = 8 (std normalisation and clipping
add further data-dependent weights). The leave-one-out mean of RLOO (Ahmadian et al. 2024) excludes
the sample and is unbiased for every G >= 2. The effect fades with large groups, so this is a warning
below G = 10 and a note above. Allow it when you deliberately match the original GRPO objective.`,
  check(ctx) {
    const { group_size: g, advantage } = ctx.config.algorithm;
    if (advantage.estimator !== "group" || advantage.baseline !== "mean" || g < 2) return;
    const factor = formatNumber((g - 1) / g);
    const shrink = formatNumber((100 * 1) / g, 1);
    ctx.report({
      at: ["algorithm", "advantage", "baseline"],
      severity: g < 10 ? "warning" : "info",
      message: `baseline: mean includes each sample's own reward, which shrinks the expected policy gradient by (G-1)/G = ${factor} at G = ${g} (${shrink}% smaller); the leave-one-out baseline of RLOO is unbiased`,
      hint: "use `advantage { baseline: leave_one_out }`, or allow it to match the original GRPO objective",
    });
  },
};
