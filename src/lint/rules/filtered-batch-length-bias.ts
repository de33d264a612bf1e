import type { LintRule } from "../rule.js";

export const filteredBatchLengthBias: LintRule = {
  code: "filtered-batch-length-bias",
  severity: "info",
  title: "Dynamic sampling discards and re-queues groups: the kept batch can lean toward short rollouts",
  explanation: `DAPO's dynamic sampling drops the groups whose rewards are all equal and samples new tasks until
the batch is full. What is kept is then not the distribution the policy samples: whether a group is
dropped correlates with how long its rollouts are (groups that run into the turn or length budget
tend to fail together and are dropped; long rollouts are also the last to finish when a batch is
filled from whatever completes first). tinker-cookbook PR#822 found such filtering and re-queuing
biased training batches toward short rollouts. ARL waits for every group of a round before
filtering (so finishing order does not decide); overlong shaping, a soft penalty that keeps every
sample, is the alternative, but the runtime does not apply it yet (overlong-unsupported). The
filter's own effect remains. The run records it per iteration:
acceptance_rate (kept groups / played groups), rejected_groups and rejected_tokens in
metrics.jsonl.`,
  check(ctx) {
    if (ctx.config.algorithm.dynamic_sampling === null) return;
    ctx.report({
      at: ["algorithm", "dynamic_sampling"],
      message:
        "dynamic sampling drops all-equal groups and samples new tasks in their place, so the kept batch is not what the policy samples: groups that hit the budget tend to fail together and are dropped, which leans the update toward short rollouts (tinker-cookbook PR#822)",
      hint: "watch acceptance_rate and rejected_tokens in the run's metrics.jsonl: a low acceptance rate with many rejected tokens per rejected group means long rollouts are being filtered out",
    });
  },
};
