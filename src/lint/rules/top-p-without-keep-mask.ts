import type { LintRule } from "../rule.js";

export const topPWithoutKeepMask: LintRule = {
  code: "top-p-without-keep-mask",
  severity: "warning",
  title: "Truncated sampling (top-p/top-k) without the keep-sampling mask",
  explanation: `Importance ratios pi(a)/mu(a) are valid only where the behaviour distribution mu covers the
trained policy pi (mu(a) > 0 wherever pi(a) > 0). Top-p and top-k sampling set mu to zero outside the
kept tokens while pi_theta still spreads mass there, so the ratios and the KL estimate describe a
different distribution from the one that produced the data. DeepSeek-V3.2's Keep Sampling Mask
applies the same truncation to the current policy before computing logp_theta, aligning the two
action subspaces (docs/semantics.md §7). Turning it off while sampling with top_p < 1 or top_k > 0
breaks the support condition.`,
  check(ctx) {
    const { sampling } = ctx.config.policy;
    if (ctx.config.mask.keep_sampling_mask || (sampling.top_p >= 1 && sampling.top_k <= 0)) return;
    const how = [
      sampling.top_p < 1 ? `top_p ${sampling.top_p}` : "",
      sampling.top_k > 0 ? `top_k ${sampling.top_k}` : "",
    ]
      .filter(Boolean)
      .join(" and ");
    ctx.report({
      at: ["mask", "keep_sampling_mask"],
      message: `rollouts sample with ${how} but mask.keep_sampling_mask is false: the behaviour policy is zero outside the kept tokens while the trained one is not, so importance ratios violate the support condition (DeepSeek-V3.2 Keep Sampling Mask, docs/semantics.md §7)`,
      hint: "set `mask { keep_sampling_mask: true }` (the default), or sample with top_p: 1 and top_k: 0",
    });
  },
};
