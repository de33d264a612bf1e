import type { LintRule } from "../rule.js";
import { isGroupRelative } from "../util.js";

export const groupSizeOne: LintRule = {
  code: "group-size-one",
  severity: "error",
  title: "A group-relative advantage with one sample per group",
  explanation: `GRPO, RLOO and Dr. GRPO compare each trajectory with the others started from the same task:
A_i = R_i - mean (GRPO, divided by the group's std), or R_i - mean of the others (RLOO). With
group_size 1 there is nothing to compare with: R_i - mean is identically 0, the leave-one-out mean is
undefined, and the population std of one reward is 0 (docs/semantics.md §3). The policy gradient is zero
on every batch and training does nothing at full rollout cost; dividing by a zero std instead blows
the advantage up by 1/eps. GRPO's paper uses G = 64, AgentRL 8,
the Practitioner's Guide 4. A single sample per task needs a critic (PPO with GAE) or no baseline.`,
  check(ctx) {
    const { algorithm } = ctx.config;
    if (algorithm.group_size !== 1 || !isGroupRelative(ctx.config)) return;
    const a = algorithm.advantage;
    const why =
      a.baseline === "mean"
        ? "R_i - mean(R) is identically 0, so the policy gradient is zero on every batch"
        : a.baseline === "leave_one_out"
          ? "the leave-one-out baseline has no other sample to average, so there is no comparison signal and the policy gradient is zero"
          : "the population std of one reward is 0, so A = R / (0 + 1e-6) multiplies every reward by a million";
    ctx.report({
      at: ["algorithm", "group_size"],
      message: `group_size is 1 but the advantage is group-relative (baseline ${a.baseline}, normalize ${a.normalize}): ${why} (docs/semantics.md §3)`,
      hint: "sample several trajectories per task (group_size: 4 or 8), or use a critic (`algorithm extends algo.ppo`)",
    });
  },
};
