import type { LintRule } from "../rule.js";

export const envErrorAsFailure: LintRule = {
  code: "env-error-as-failure",
  severity: "warning",
  title: "Environment errors scored as policy failures",
  explanation: `A reward of 0 can mean the policy failed the task, or that the environment crashed, a tool
server timed out or the sandbox died before the tests ran. Scoring the second kind as a failure
pushes down whatever the policy did for reasons it had no part in, adding noise that looks like
signal. GLM-5 (2026, §4.1.2) separates samples from environment failures and excludes them from the
update, counting them apart (docs/semantics.md §2). \`on_env_error: exclude\` is the default.`,
  check(ctx) {
    if (ctx.config.reward.on_env_error !== "score_zero") return;
    ctx.report({
      at: ["reward", "on_env_error"],
      message:
        "on_env_error: score_zero scores episodes whose environment failed as policy failures: the update punishes actions for infrastructure noise (GLM-5 excludes env-error samples and counts them apart)",
      hint: "use `on_env_error: exclude` (the default)",
    });
  },
};
