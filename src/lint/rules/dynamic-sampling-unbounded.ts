import type { LintRule } from "../rule.js";

export const dynamicSamplingUnbounded: LintRule = {
  code: "dynamic-sampling-unbounded",
  severity: "warning",
  title: "Dynamic sampling without a resampling cap",
  explanation: `DAPO's dynamic sampling (Yu et al. 2025, §3.2) drops groups whose rewards are all equal (their
advantages are all zero) and keeps sampling until the batch is full. With success probability p and
group size G only 1 - p^G - (1 - p)^G of the groups are mixed: 87.5% at p = 0.5, G = 4 but 3.9% at
p = 0.01, G = 4 (docs/semantics.md §3). On hard or too-easy tasks an uncapped batch can take an unbounded
number of rollouts; the rejected rollouts' cost must be counted, and a cap bounds it.`,
  check(ctx) {
    const ds = ctx.config.algorithm.dynamic_sampling;
    if (ds === null || ds.max_rounds !== null) return;
    ctx.report({
      at: ctx.isWritten(["algorithm", "dynamic_sampling", "max_rounds"])
        ? ["algorithm", "dynamic_sampling", "max_rounds"]
        : ["algorithm", "dynamic_sampling"],
      message:
        "dynamic sampling has no max_rounds: only 1 - p^G - (1-p)^G of the groups are usable (3.9% at p = 0.01, G = 4), so on hard tasks filling a batch can take unbounded rollouts",
      hint: "set `dynamic_sampling { max_rounds: 3 }` (the DAPO preset's cap)",
    });
  },
};
