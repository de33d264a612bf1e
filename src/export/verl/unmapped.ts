// The plan's settings veRL has no counterpart for: each one a finding (refused, or what veRL does
// instead), so the export's report names every setting it could not carry. Apart from the
// mapped settings (config.ts, algorithm.ts, rollout.ts) as the list of what is left out.
import type { Plan } from "../../plan/schema.js";
import { type Finding, shown } from "./findings.js";

export function unmapped(plan: Plan, findings: Finding[]): void {
  const push = (setting: string, arl: string, verl: string, consequence: string, handling: Finding["handling"]) =>
    findings.push({ setting, arl, verl, consequence, handling });
  if (plan.rollout.async !== null)
    push(
      "rollout.async",
      shown(plan.rollout.async),
      "main_ppo is synchronous (one-step-off-policy is a separate recipe)",
      "samples are on-policy: no lag, no stale-group drops",
      "refused",
    );
  if (plan.rollout.cross_policy !== null)
    push(
      "rollout.cross_policy",
      shown(plan.rollout.cross_policy),
      "no pool models generating turns",
      "every turn is the policy's own",
      "refused",
    );
  if (plan.rollout.sft !== null)
    push(
      "rollout.sft",
      "cold start",
      "no SFT before RL in ppo_trainer (run verl.trainer.sft_trainer first)",
      "RL starts from the base model",
      "refused",
    );
  if (plan.mask.off_policy_sequence_threshold !== null)
    push(
      "mask.off_policy_sequence_threshold",
      String(plan.mask.off_policy_sequence_threshold),
      "no off-policy sequence mask",
      "negative-advantage stale sequences stay in the loss",
      "refused",
    );
  if (plan.mask.loss === "all")
    push(
      "mask.loss",
      '"all"',
      "veRL trains on generated response tokens only",
      "prompt and observation tokens are not trained",
      "refused",
    );
  if (plan.algorithm.overlong !== null)
    push(
      "algorithm.overlong",
      shown(plan.algorithm.overlong),
      "DAPO's overlong buffer lives in the dapo reward manager, not ppo_trainer's",
      "no overlong penalty",
      "refused",
    );
  if (Object.keys(plan.constraints).length > 0)
    push(
      "constraints",
      Object.keys(plan.constraints).join(", "),
      "tools cannot be blocked by a condition",
      "blocked calls execute",
      "refused",
    );
  if (Object.values(plan.reward.terms).some((t) => t.kind === "potential"))
    push(
      "reward.terms",
      "potential shaping",
      "compute_score sees the finished trajectory only",
      "no per-step shaping",
      "refused",
    );
  if (plan.policy.lora && plan.policy.lora.dropout > 0)
    push(
      "policy.lora.dropout",
      String(plan.policy.lora.dropout),
      "veRL's LoRA has no dropout setting",
      "adapters train without dropout",
      "differs",
    );
  if (plan.policy.chat_template !== null)
    push(
      "policy.chat_template",
      "override",
      "the model's own chat template",
      "prompts are rendered with the model's template",
      "refused",
    );
  if (plan.eval.k.some((k) => k > 1))
    push(
      "eval.k",
      shown(plan.eval.k),
      "validation reports mean@n, best@n and maj@n, not pass@k",
      "compare best@n with pass@k only at k = n",
      "differs",
    );
  push(
    "rollout.watchdog, rollout.preflight",
    "on",
    "no counterpart",
    "the no-signal watchdog and preflight checks do not run",
    "differs",
  );
  push(
    "algorithm (reduction, microbatches)",
    "global denominators (docs/semantics.md §5)",
    "veRL 0.9.1's engine workers (trainer.use_v1) normalise by the global mini-batch's tokens/sequences (workers/utils/losses.py)",
    "none; the legacy FSDP actor's per-microbatch token means under gradient accumulation (veRL #5625) are not used",
    "exact",
  );
}
