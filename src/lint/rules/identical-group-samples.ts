import type { LintRule } from "../rule.js";
import { isGroupRelative } from "../util.js";

export const identicalGroupSamples: LintRule = {
  code: "identical-group-samples",
  severity: "error",
  title: "The samples of a group are identical by construction (greedy sampling)",
  explanation: `A group's trajectories start from the same task; a group-relative advantage compares them
(A_i = R_i - mean, divided by the std for GRPO; docs/semantics.md §3). With greedy decoding
(temperature 0, or top_k 1) the policy picks the same token every time, so the G samples of a group
are the same trajectory (up to env randomness): every reward equals the mean, every advantage is 0,
and the update learns nothing at G times the rollout cost. UniRL PR#208 hit exactly this: a
deterministic SGLang setup made all n samples of a prompt identical and every advantage 0. ARL
derives each sample's sampling seed from its group and sample index, so the seeds of a group always
differ; greedy decoding is what makes them identical regardless.`,
  check(ctx) {
    const { algorithm, policy } = ctx.config;
    const { temperature, top_k } = policy.sampling;
    const greedy = temperature === 0 ? "temperature 0" : top_k === 1 ? "top_k 1" : undefined;
    if (algorithm.group_size <= 1 || !greedy) return;
    const at = temperature === 0 ? ["policy", "sampling", "temperature"] : ["policy", "sampling", "top_k"];
    const relative = isGroupRelative(ctx.config);
    ctx.report({
      at: ctx.isWritten(at) ? at : ["algorithm", "group_size"],
      message: relative
        ? `group_size is ${algorithm.group_size} but rollouts decode greedily (${greedy}): the ${algorithm.group_size} samples of a task are the same trajectory, so every reward equals the group mean and every advantage is 0 (UniRL PR#208: deterministic sampling made all n samples identical)`
        : `group_size is ${algorithm.group_size} but rollouts decode greedily (${greedy}): the ${algorithm.group_size} samples of a task are the same trajectory, so the group costs ${algorithm.group_size}x the rollouts of one sample and adds nothing (UniRL PR#208)`,
      hint: "sample with a temperature, e.g. `policy { sampling { temperature: 1.0 } }` (top_k 0 is off), or use group_size: 1",
      ...(relative ? {} : { severity: "warning" as const }),
    });
  },
};
