import type { LintRule } from "../rule.js";

export const engineSamplingMaskUnset: LintRule = {
  code: "engine-sampling-mask-unset",
  severity: "warning",
  title: "An inference engine samples with top-p/top-k and mask.keep_sampling_mask is left to its default",
  explanation: `With top-p or top-k the behaviour distribution lives on a truncated set of tokens, and the
update's ratio is only valid when the trained distribution is truncated the same way (the
keep-sampling mask, DeepSeek-V3.2; docs/semantics.md §7). When the trainer samples, it knows the
set it sampled from. vLLM and SGLang do not return their truncation set, only the sampled token
and its log-prob, so the trainer has to choose. With the mask on (the default), the trainer
rebuilds the set from its own logits: its numerics differ from the engine's, so near the top-p
boundary the sets differ, and a token the engine sampled at the boundary may fall outside the
trainer's set (the trainer keeps the target in it, at a log-prob that then differs from the
engine's by more than rounding). With the mask off, the trainer's ratio is over the full
vocabulary while the engine sampled from the truncated set: the supports differ. Either can be the
right call, but it is a choice, and the gap it leaves is what truncated importance sampling
against the engine's log-probs corrects (mask.tis, docs/semantics.md §12).`,
  check(ctx) {
    const { resources, policy } = ctx.config;
    const engine = resources.rollout.engine;
    if (engine === "trainer") return;
    const { top_p, top_k } = policy.sampling;
    if (top_p >= 1 && top_k <= 0) return;
    if (ctx.isWritten(["mask", "keep_sampling_mask"])) return;
    const how = [top_p < 1 ? `top_p ${top_p}` : "", top_k > 0 ? `top_k ${top_k}` : ""].filter(Boolean).join(" and ");
    ctx.report({
      at: ["resources", "rollout", "engine"],
      message:
        `${engine} samples with ${how} and does not return its truncation set, and mask.keep_sampling_mask is left to its default (true): the trainer rebuilds the kept set from its own logits, so a token ${engine} sampled at the boundary may fall outside it; ` +
        "turned off, the trainer's ratio would be over the full vocabulary while the engine sampled from the truncated one (docs/semantics.md §7, §12)",
      hint: "write `mask { keep_sampling_mask: true }` (or false) to make the choice explicit, and add `mask { tis { cap: 2 } }` to correct the gap against the engine's log-probs",
    });
  },
};
