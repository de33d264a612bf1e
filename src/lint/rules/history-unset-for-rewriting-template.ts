import type { LintRule } from "../rule.js";

/** Model families whose chat templates rewrite earlier turns when a conversation is rendered again. */
const REWRITING_FAMILIES: readonly { readonly pattern: RegExp; readonly family: string }[] = [
  { pattern: /qwen3/i, family: "Qwen3" },
  { pattern: /deepseek[-_]?r1/i, family: "DeepSeek-R1" },
];

export const historyUnsetForRewritingTemplate: LintRule = {
  code: "history-unset-for-rewriting-template",
  severity: "warning",
  title: "A model whose chat template rewrites earlier turns, with harness.context.history left to its default",
  explanation: `Qwen3's and DeepSeek-R1's chat templates drop the <think> block of every assistant turn before the
last user message: rendering the conversation plus one more turn does not extend the earlier
rendering (the template is not prefix-preserving). A multi-turn agent then has two honest ways to
train. history: exact (the default) appends the tokens as sampled, so what was trained is exactly
what was generated, in one trajectory per episode, but the contexts differ from what the template
shows the model at inference, where earlier reasoning is gone. history: rerender renders the
conversation again before every model call, as inference does, and trains each call as its own
sample with its own context (docs/semantics.md §10); each call then counts as a sequence in the loss
reductions. Which one is right depends on how the policy will be served, so the choice should be
written down rather than taken by default. The trainer reports the template's behaviour at run start
(configure's template.prefix_preserving) and the run notes the mismatch; this rule says it at check
time from the model's name.`,
  check(ctx) {
    if (ctx.isWritten(["harness", "context", "history"]) || ctx.isWritten(["harness", "context"])) return;
    const model = ctx.config.policy.model;
    const match = REWRITING_FAMILIES.find((f) => f.pattern.test(model));
    if (!match) return;
    ctx.report({
      at: ["policy", "model"],
      message: `'${model}' is a ${match.family} model, whose chat template drops earlier turns' <think> blocks when a conversation is rendered again, and harness.context.history is left to its default (exact): training appends the tokens as sampled, while the model at inference sees the re-rendered conversation`,
      hint: "write `harness { context { history: exact } }` to train on the tokens as sampled (one trajectory per episode), or `history: rerender` to train each model call on the re-rendered context (one sample per call)",
    });
  },
};
