import type { LintRule } from "../rule.js";

// Thresholds from practice. Full-parameter RL on pretrained LLMs runs at 1e-6..1e-5 (veRL's
// GRPO/PPO examples: actor lr 1e-6; TRL's GRPOTrainer default 1e-6). LoRA needs about 10x the
// full fine-tuning rate ("LoRA Without Regret", Schulman et al., Thinking Machines 2025: the
// optimal LoRA rate is ~10x FullFT's, for SL and RL alike; the Tinker docs put it at 20-100x
// depending on model size), so LoRA RL commonly runs at 1e-5..5e-5 x 10 = 1e-4..5e-4
// (supervised LoRA in the same range: QLoRA, Dettmers et al. 2023, 2e-4 for 7B-13B and 1e-4 for
// 33B-65B models). Below 5e-5 the adapters barely move; at or above
// 1e-4 full-parameter updates of a pretrained model drift away from it within a few steps.
const LORA_MIN_LR = 5e-5;
const FULL_MAX_LR = 1e-4;

// 1e-6, 2.5e-5: how learning rates are written
const fmt = (x: number) => x.toExponential();

export const loraLearningRate: LintRule = {
  code: "lora-learning-rate",
  severity: "warning",
  title: "A learning rate sized for the other kind of fine-tuning (LoRA vs full parameters)",
  explanation: `LoRA adapters need a far larger learning rate than the weights they adapt: the optimal LoRA rate
is about 10x the full fine-tuning rate, for supervised and RL training alike ("LoRA Without
Regret", Thinking Machines 2025; their Tinker docs put the factor at 20-100x by model size).
Full-parameter RL on a pretrained model commonly runs at 1e-6..1e-5 (veRL's examples and TRL's
GRPO default: 1e-6), so LoRA RL runs at about 1e-4..5e-4 (supervised LoRA too: QLoRA used 2e-4
on 7B-13B models and 1e-4 on 33B-65B).
Keeping a full fine-tuning rate when switching to LoRA (below 5e-5) leaves the adapters nearly
untrained, the most common mistake when porting a config; the reverse, a LoRA-sized rate (1e-4 or
more) on all the weights of a pretrained model, moves it far from where it started within a few
steps. builtin models are random and tiny, and not checked without LoRA.`,
  check(ctx) {
    const { policy, algorithm } = ctx.config;
    const lr = algorithm.optimizer.lr;
    const at = ["algorithm", "optimizer", "lr"];
    if (policy.lora !== null && lr < LORA_MIN_LR) {
      ctx.report({
        at: ctx.isWritten(at) ? at : ["policy", "lora"],
        message: `policy.lora trains adapters at learning rate ${fmt(lr)}, a full fine-tuning rate: LoRA needs about 10x more (LoRA RL commonly ${fmt(1e-4)}..${fmt(5e-4)})`,
        hint: `raise algorithm.optimizer.lr to about 10x the full fine-tuning rate (e.g. ${fmt(Math.min(Math.max(Number((lr * 10).toPrecision(2)), 1e-4), 5e-4))})`,
      });
    }
    if (policy.lora === null && !policy.model.startsWith("builtin:") && lr >= FULL_MAX_LR) {
      ctx.report({
        at,
        message: `learning rate ${fmt(lr)} on all the weights of the pretrained model ${policy.model} is a LoRA-sized rate: full-parameter RL commonly runs at ${fmt(1e-6)}..${fmt(1e-5)}`,
        hint: "lower algorithm.optimizer.lr to 1e-6..1e-5, or train adapters (policy.lora { rank: 32, alpha: 64 })",
      });
    }
  },
};
