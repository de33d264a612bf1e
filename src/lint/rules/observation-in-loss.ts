import type { LintRule } from "../rule.js";

export const observationInLoss: LintRule = {
  code: "observation-in-loss",
  severity: "error",
  title: "The loss trains on prompt, tool and observation tokens",
  explanation: `A multi-turn trajectory interleaves what the policy sampled (its actions) with text it did
not choose: the prompt, the system text and every tool output or observation. Only sampled tokens
are actions; the Practitioner's Guide to multi-turn agentic RL (Wang & Ammanabrolu 2025, §3) "makes
sure only action tokens contribute to the loss by masking out all state tokens", and Search-R1 masks
retrieved passages for the same reason. With \`mask.loss: all\` a successful trajectory also raises the
probability of the environment's own text, so the policy learns to write observations itself:
hallucinated tool output instead of calling the tool. Observations stay in the context (attention
sees them); they are just not targets (docs/semantics.md §1).`,
  check(ctx) {
    if (ctx.config.mask.loss !== "all") return;
    ctx.report({
      at: ["mask", "loss"],
      message:
        "mask.loss: all trains on prompt, tool and observation tokens: the policy is rewarded for text the environment wrote, and learns to hallucinate tool output (Practitioner's Guide §3: only action tokens contribute to the loss)",
      hint: "use `mask { loss: generated }` (the default): observations stay in the context but are not training targets",
    });
  },
};
