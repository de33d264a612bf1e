import { updateSteps } from "../../rl/lag.js";
import type { LintRule } from "../rule.js";

export const stalenessBeyondPolicyLag: LintRule = {
  code: "staleness-beyond-policy-lag",
  severity: "error",
  title: "Asynchronous rollout k batches ahead whose lag limit drops whole batches",
  explanation: `With \`rollout.async.max_staleness: k\` the behaviour snapshot is taken before every k-th
update and the k batches after it are generated from it (docs/semantics.md §7): the last of them
is k updates, that is k x epochs x minibatches policy versions, old when its own update starts.
\`max_policy_lag\` is the budget of versions a sample may be behind; with \`past_max_lag: drop\` a
batch beyond it loses every group, so k sets a staleness the budget does not allow and those
batches are played for nothing (the runtime refuses such a plan). AReaL bounds the same quantity
(max_head_offpolicyness) and prime-rl drops past max_off_policy_steps.`,
  check(ctx) {
    const { rollout, algorithm } = ctx.config;
    const async = rollout.async;
    if (!async || async.max_staleness <= 1 || async.max_policy_lag === null || async.past_max_lag === "correct") return;
    const steps = updateSteps(algorithm.epochs, algorithm.minibatches, rollout.tasks_per_batch * algorithm.group_size);
    const lag = async.max_policy_lag;
    // One batch ahead already over the limit: policy-lag-below-update-steps says so.
    if (steps > lag || async.max_staleness * steps <= lag) return;
    ctx.report({
      at: ctx.isWritten(["rollout", "async", "max_staleness"])
        ? ["rollout", "async", "max_staleness"]
        : ["rollout", "async"],
      message: `max_staleness ${async.max_staleness} makes the oldest batch of each snapshot ${async.max_staleness} updates of ${steps} optimizer steps (${async.max_staleness * steps} policy versions) old at its update, above max_policy_lag ${lag}: those batches would be dropped whole`,
      hint: `lower max_staleness to ${Math.floor(lag / steps)}, raise max_policy_lag to ${async.max_staleness * steps}, or keep and correct stale groups (past_max_lag: correct, with mask.tis)`,
    });
  },
};
