import type { LintRule } from "../rule.js";

export const unboundedPolicyLag: LintRule = {
  code: "unbounded-policy-lag",
  severity: "error",
  title: "Asynchronous rollout without a policy-lag limit",
  explanation: `Asynchronous rollout overlaps generation and training: a slow episode finishes under weights
that have since been updated, so its samples come from an older policy. PPO's clip handles only the
local mismatch within one batch; arbitrarily old samples need more (IMPALA corrects them with
V-trace, GLM-5 drops samples older than a policy-lag limit, separately from token-in-token-out).
Each sample carries the policy version that produced it, and samples older than \`max_policy_lag\`
versions are dropped and counted (docs/semantics.md §7). Without a limit, nothing bounds how stale the
update data may be.`,
  check(ctx) {
    const async = ctx.config.rollout.async;
    if (async === null || async.max_policy_lag !== null) return;
    const lagWritten = ctx.isWritten(["rollout", "async", "max_policy_lag"]);
    ctx.report({
      at: lagWritten ? ["rollout", "async", "max_policy_lag"] : ["rollout", "async"],
      message:
        "asynchronous rollout with max_policy_lag none: samples from arbitrarily old policies reach the update, and the PPO clip only bounds the mismatch within one batch (GLM-5 filters by policy lag; docs/semantics.md §7)",
      hint: "set `rollout { async { max_policy_lag: 1 } }` (AgentRL's asynchronous setup keeps it small)",
    });
  },
};
