import type { LintRule } from "../rule.js";

export const lengthBiasedReduction: LintRule = {
  code: "length-biased-reduction",
  severity: "info",
  title: "Per-sequence length normalisation (1/|o_i|)",
  explanation: `The original GRPO objective averages each sequence's token losses over its own length before
averaging over sequences (seq_mean_token_mean, 1/|o_i|; docs/semantics.md §5). Each token of a short
answer then weighs more than a token of a long one: a long wrong answer is penalised less per token,
which lets responses grow (Dr. GRPO, Liu et al. 2025, "Understanding R1-Zero-Like Training"). The
score-function gradient of E[R] has a plain token sum per trajectory; token_mean (DAPO) or a
constant denominator equal to the generation budget (Dr. GRPO) keep that weighting.`,
  check(ctx) {
    if (ctx.config.algorithm.reduction.mode !== "seq_mean_token_mean") return;
    ctx.report({
      at: ["algorithm", "reduction"],
      message:
        "reduction seq_mean_token_mean averages each sequence over its own length (1/|o_i|): tokens of short answers weigh more, and long wrong answers are penalised less per token (Dr. GRPO)",
      hint: "use `reduction: token_mean`, or `constant(L)` with L your generation budget (Dr. GRPO)",
    });
  },
};
