import type { LintRule } from "../rule.js";

export const potentialKeptAtTruncation: LintRule = {
  code: "potential-kept-at-truncation",
  severity: "warning",
  title: "Potential-based shaping under a group estimator, with episodes truncated at the budget",
  explanation: `\`potential(Phi)\` adds gamma * Phi(h') - Phi(h) at every turn; over an episode the terms telescope
to gamma^T * Phi(h_T) - Phi(h_0), and Ng, Harada & Russell's (1999) guarantee that the ranking of
policies is unchanged rests on Phi(terminal) = 0. A game cut at the turn or token budget under
\`harness.on_budget: truncate\` did not reach a terminal state, so its last potential stays in its
return (docs/semantics.md §2). A critic (GAE) absorbs it: the truncated episode bootstraps V(h_T),
which learns the shaped return. A group estimator (GRPO, RLOO, REINFORCE) does not bootstrap: the
return of a truncated episode keeps Phi(h_T), a bonus for getting close without finishing, and a
progress potential narrows the gap between nearly solving (3 of 4 subgoals: 0.75) and solving (1).
Measured in experiments/mini/table9-reward-density.arl: dense -0.087 [-0.128, -0.045] held-out
against sparse, the progress term rising while train success fell.`,
  check(ctx) {
    const { config } = ctx;
    if (config.algorithm.advantage.estimator === "gae" || config.harness.on_budget !== "truncate") return;
    for (const [name, term] of ctx.variant.rewardTerms) {
      if (term.kind !== "potential") continue;
      ctx.report({
        at: ["reward", name],
        message: `reward term '${name}' is potential-based, but episodes cut at the budget (on_budget: truncate) keep their last potential and the group estimator does not bootstrap a value to offset it: a truncated episode's return includes Phi(h_T), a bonus for getting close without finishing`,
        hint: `train with a critic (\`algorithm.advantage.estimator: gae\`), make the budget the task's end (\`harness.on_budget: terminate\` with \`budget_is_task_rule: true\` on the env), or pay progress only on success`,
      });
    }
  },
};
