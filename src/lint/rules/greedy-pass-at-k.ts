import type { LintRule } from "../rule.js";

export const greedyPassAtK: LintRule = {
  code: "greedy-pass-at-k",
  severity: "warning",
  title: "pass@k with k > 1 under greedy decoding",
  explanation: `pass@k estimates the probability that at least one of k independent samples solves a task
(Chen et al. 2021; docs/semantics.md §8). With temperature 0 decoding is greedy, the n samples of a task
are (nearly) identical, and pass@k collapses to pass@1 while looking like a measure of coverage.
Samples that are not independent (e.g. each attempt sees the previous one's failure log) describe a
different protocol and should be reported as such. Evaluate pass@k with a sampling temperature.`,
  check(ctx) {
    const { eval: ev, policy } = ctx.config;
    const kMax = ev.k.reduce((m, k) => Math.max(m, k), Number.NEGATIVE_INFINITY);
    const temperature = ev.temperature ?? policy.sampling.temperature;
    if (kMax <= 1 || temperature > 0) return;
    const at =
      ev.temperature !== null
        ? ["eval", "temperature"]
        : ctx.isWritten(["policy", "sampling", "temperature"])
          ? ["policy", "sampling", "temperature"]
          : ["eval", "k"];
    ctx.report({
      at,
      message: `pass@${kMax} is evaluated with temperature 0: greedy decoding makes the samples of a task identical, so pass@k equals pass@1 (Chen et al. 2021 assumes independent samples)`,
      hint: "evaluate with a sampling temperature, e.g. `eval { temperature: 0.8 }`, or report only pass@1",
    });
  },
};
