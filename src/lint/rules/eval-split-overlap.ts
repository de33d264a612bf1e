import type { LintRule } from "../rule.js";
import { quoteList } from "../util.js";

export const evalSplitOverlap: LintRule = {
  code: "eval-split-overlap",
  severity: "error",
  title: "Evaluation on the training tasks, or on an empty split",
  explanation: `An evaluation measures generalisation only on tasks the policy never trained on: splits are
disjoint by task, and a held-out split is never used to choose settings (docs/semantics.md §8). A
different test input for the same problem is not a new task. \`eval.split: train\` reports how well
the policy fits its training tasks, which RL optimises directly. Evaluating a split that an env
gives 0% of its tasks (the valid split is 0 unless set) evaluates nothing for that env.`,
  check(ctx) {
    const { config } = ctx;
    const split = config.eval.split;
    if (split === "train") {
      ctx.report({
        at: ["eval", "split"],
        message:
          "eval.split is train: evaluating on the training tasks measures how well RL fit them, not generalisation to unseen tasks (docs/semantics.md §8)",
        hint: "evaluate a held-out split: `eval { split: test }`, or `valid` with a `split { valid: ... }` fraction in each env",
      });
      return;
    }
    const empty = Object.entries(config.env)
      .filter(([, e]) => e.split[split] === 0)
      .map(([name]) => name);
    if (empty.length === 0) return;
    ctx.report({
      at: ["eval", "split"],
      message: `eval.split is ${split} but env ${quoteList(empty)} give${empty.length === 1 ? "s" : ""} the ${split} split 0 of its tasks: there is nothing to evaluate`,
      hint: `give the split a fraction in each env, e.g. \`split { train: 0.8, ${split}: 0.1${split === "valid" ? ", test: 0.1" : ""} }\`, or evaluate another split`,
    });
  },
};
