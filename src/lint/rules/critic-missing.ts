import type { LintRule } from "../rule.js";

export const criticMissing: LintRule = {
  code: "critic-missing",
  severity: "error",
  title: "GAE without a critic",
  explanation: `Token-level GAE (Schulman et al. 2016), as PPO uses it, needs a learned value model:
delta_t = r_t + gamma * V(h_{t+1}) - V(h_t) and A_t = sum_l (gamma * lambda)^l delta_{t+l}
(docs/semantics.md §3). \`estimator: gae\` with \`critic: none\` has no V to compute the residuals with.
Either add a critic (the \`algo.ppo\` preset has one) or use a group estimator, which replaces the
value model by comparing several samples of the same task (GRPO, RLOO).`,
  check(ctx) {
    const { algorithm } = ctx.config;
    if (algorithm.advantage.estimator !== "gae" || algorithm.critic !== null) return;
    ctx.report({
      at: ctx.isWritten(["algorithm", "critic"]) ? ["algorithm", "critic"] : ["algorithm", "advantage", "estimator"],
      message:
        "estimator gae needs a value model V(h) for delta = r + gamma*V(h') - V(h), but algorithm.critic is none",
      hint: "add `critic { optimizer { lr: 1e-5 } }` (as in algo.ppo), or use a group estimator with group_size > 1",
    });
  },
};
