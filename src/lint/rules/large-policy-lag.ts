import type { LintRule } from "../rule.js";

/** Lags of one or two versions are the usual one-step-off-policy pipelines. */
const MAX_UNGUARDED_LAG = 2;

export const largePolicyLag: LintRule = {
  code: "large-policy-lag",
  severity: "warning",
  title: "Samples several policy versions old, guarded only by the PPO clip",
  explanation: `PPO's clipped surrogate handles the local mismatch of reusing one fresh batch for a few
updates; it does not make arbitrarily old data safe (Schulman et al. 2017; safely reusing old
experience is general off-policy learning). With asynchronous rollout the ratio pi_theta / pi_old
of a sample that is several versions old can sit far outside [1 - low, 1 + high] from the first
step: positive-advantage tokens are clipped flat, and negative-advantage tokens with a large ratio
keep an unbounded gradient. DeepSeek-V3.2's Off-Policy Sequence Masking drops negative-advantage
sequences whose mean log-ratio exceeds a threshold, and dual clip bounds the negative side
(docs/semantics.md §4, §7). AgentRL's asynchronous pipeline keeps the lag at one version. This rule flags
max_policy_lag above ${MAX_UNGUARDED_LAG} with neither guard set.`,
  check(ctx) {
    const { rollout, mask, algorithm } = ctx.config;
    const lag = rollout.async?.max_policy_lag;
    if (lag === undefined || lag === null || lag <= MAX_UNGUARDED_LAG) return;
    if (mask.off_policy_sequence_threshold !== null || algorithm.clip.dual !== null) return;
    ctx.report({
      at: ["rollout", "async", "max_policy_lag"],
      message: `samples may be ${lag} policy versions old and only the PPO clip guards them: their ratios can start far outside the clip range, where negative-advantage tokens keep an unbounded gradient (the clip bounds a local, one-batch mismatch)`,
      hint: "set `mask { off_policy_sequence_threshold: ... }` (DeepSeek-V3.2 off-policy sequence masking) or `clip { dual: 3 }`, or lower max_policy_lag",
    });
  },
};
