import type { LintRule } from "../rule.js";
import { quoteList } from "../util.js";

export const truncationAsTerminal: LintRule = {
  code: "truncation-as-terminal",
  severity: "warning",
  title: "A collection budget treated as the task's end under GAE",
  explanation: `Token-level GAE ends each episode with delta = r + gamma * V(next) - V(cur), where V(next) is 0
when the task itself ended and V(h_T) when collection merely stopped (docs/semantics.md §3; Schulman et
al. 2016; Pardo et al. 2018, "Time Limits in Reinforcement Learning"). \`harness.on_budget: terminate\`
records running out of turns or tokens as a real end, so the critic learns that states near the
budget are worth nothing, and the advantages of the last turns are biased toward giving up. That is
right only when the budget is part of the task's rules, which an env says with
\`budget_is_task_rule: true\`. Group estimators (GRPO, RLOO) do not bootstrap and are not affected.`,
  check(ctx) {
    const { config } = ctx;
    if (config.algorithm.advantage.estimator !== "gae" || config.harness.on_budget !== "terminate") return;
    const envs = Object.entries(config.env)
      .filter(([, e]) => !e.budget_is_task_rule)
      .map(([name]) => name);
    if (envs.length === 0) return;
    ctx.report({
      at: ["harness", "on_budget"],
      message: `on_budget: terminate makes running out of turns look like the task's end for env ${quoteList(envs)}: GAE then uses V = 0 where it should bootstrap V(h_T), and the critic learns that states near the budget are worthless`,
      hint: `use \`harness { on_budget: truncate }\`, or set \`budget_is_task_rule: true\` on the env when running out is a real end of its task`,
    });
  },
};
