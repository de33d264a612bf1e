import type { LintRule } from "../rule.js";

export const passAtKExceedsSamples: LintRule = {
  code: "pass-at-k-exceeds-samples",
  severity: "error",
  title: "pass@k with fewer samples per task than k",
  explanation: `pass@k is estimated per task from n samples with c correct as 1 - C(n-c, k) / C(n, k)
(Chen et al. 2021), which needs n >= k; the plug-in 1 - (1 - c/n)^k is biased (0.488 instead of
0.533 for n = 10, c = 2, k = 3; docs/semantics.md §8). \`eval.samples_per_task\` is n; when it is none it
defaults to the largest k. A k above n cannot be estimated.`,
  check(ctx) {
    const { samples_per_task: n, k } = ctx.config.eval;
    if (n === null) return;
    k.forEach((value, i) => {
      if (value <= n) return;
      ctx.report({
        at: ctx.isWritten(["eval", "k", i]) ? ["eval", "k", i] : ["eval", "samples_per_task"],
        message: `pass@${value} needs at least ${value} samples per task, but eval.samples_per_task is ${n}: the unbiased estimator 1 - C(n-c,k)/C(n,k) (Chen et al. 2021) is undefined for k > n`,
        hint: `raise samples_per_task to at least ${k.reduce((m, x) => Math.max(m, x), Number.NEGATIVE_INFINITY)}, or leave it none (it defaults to the largest k)`,
      });
    });
  },
};
