import type { LintRule } from "../rule.js";
import { formatNumber } from "../util.js";

/** How far constant(L) may be from the generation budget before it is flagged. */
const FACTOR = 4;

export const reductionConstantOffBudget: LintRule = {
  code: "reduction-constant-off-budget",
  severity: "warning",
  title: "constant(L) far from the generation budget",
  explanation: `Dr. GRPO (Liu et al. 2025) replaces the per-sequence 1/|o_i| by one constant denominator, the
generation budget, so every token weighs the same and the loss keeps the scale of a token mean over
full-length responses (veRL's seq-mean-token-sum-norm; docs/semantics.md §5). The constant multiplies the
whole loss by 1/(N*L): an L far from what an episode can actually generate changes the effective
step size by that factor, silently, relative to the learning rate and KL coefficient the recipe was
tuned with. In an agentic episode the budget is max_turns x the tokens one turn may generate
(the smaller of harness.max_response_tokens and policy.sampling.max_new_tokens), capped by
harness.max_total_tokens. This rule flags L more than ${FACTOR}x away from it.`,
  check(ctx) {
    const { algorithm, harness, policy } = ctx.config;
    if (algorithm.reduction.mode !== "constant") return;
    const l = algorithm.reduction.constant;
    const perTurn = Math.min(harness.max_response_tokens, policy.sampling.max_new_tokens);
    let budget = harness.max_turns * perTurn;
    if (harness.max_total_tokens !== null) budget = Math.min(budget, harness.max_total_tokens);
    const ratio = l / budget;
    if (ratio <= FACTOR && ratio >= 1 / FACTOR) return;
    const how = ratio > 1 ? `${formatNumber(ratio, 1)}x larger than` : `${formatNumber(1 / ratio, 1)}x smaller than`;
    ctx.report({
      at: ["algorithm", "reduction"],
      message: `constant(${l}) is ${how} the generation budget of ${budget} tokens (${harness.max_turns} turns x ${perTurn} tokens): it rescales the whole loss, and so the effective step size, by that factor (Dr. GRPO sets L to the generation budget)`,
      hint: `use \`reduction: constant(${budget})\``,
    });
  },
};
