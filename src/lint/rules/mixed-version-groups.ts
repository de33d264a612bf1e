import { updateSteps } from "../../rl/lag.js";
import type { LintRule } from "../rule.js";

export const mixedVersionGroups: LintRule = {
  code: "mixed-version-groups",
  severity: "warning",
  title: "Group-relative advantages over samples of different policy versions, uncorrected",
  explanation: `Under \`rollout.async.in_flight_updates\` the behaviour snapshot is refreshed before every update
and an episode in flight continues with the newer weights, so the G samples of one group may come
from policies up to k updates apart (k = max_staleness; docs/semantics.md §7). A group baseline
(mean, leave-one-out, std normalisation) then compares a sample with siblings drawn by other
policies: the advantage is relative to a mixture, and which sibling got which weights depends on
timing. The per-token ratio to each token's own sampler keeps the gradient unbiased only while
it is inside the clip; samples whose ratios leave it need a guard. Without in_flight_updates every
group comes from one snapshot and this does not arise. This rule flags in_flight_updates with a
group baseline, k x epochs x minibatches above one version, and neither off-policy sequence
masking nor dual clip set.`,
  check(ctx) {
    const { rollout, algorithm, mask } = ctx.config;
    const async = rollout.async;
    if (!async?.in_flight_updates) return;
    const advantage = algorithm.advantage;
    if (advantage.estimator !== "group" || (advantage.baseline === "none" && advantage.normalize === "none")) return;
    const span =
      async.max_staleness *
      updateSteps(algorithm.epochs, algorithm.minibatches, rollout.tasks_per_batch * algorithm.group_size);
    if (span <= 1) return;
    if (mask.off_policy_sequence_threshold !== null || algorithm.clip.dual !== null) return;
    ctx.report({
      at: ["rollout", "async", "in_flight_updates"],
      message: `in_flight_updates lets one group's samples come from policies up to ${span} versions apart, and the group baseline compares them as if one policy had drawn them, with only the PPO clip guarding the older ones`,
      hint: "set `mask { off_policy_sequence_threshold: ... }` or `clip { dual: 3 }`, or remove in_flight_updates (each group from one snapshot)",
    });
  },
};
