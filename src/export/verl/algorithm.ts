// The algorithm's settings as veRL's (verl/trainer/config/algorithm.py, the actor's optim and
// policy-loss settings): the optimizer, the advantage estimator, the loss reduction, the KL and
// truncated importance sampling, each with the findings where veRL's arithmetic differs from
// docs/semantics.md. Apart from the config's assembly (config.ts) as the RL arithmetic's part.
import type { Plan } from "../../plan/schema.js";
import { type Finding, shown } from "./findings.js";
import type { YamlMapping } from "./yaml.js";

/** veRL's AdamW has no eps setting of its own; torch's default is 1e-8. */
const TORCH_ADAMW_EPS = 1e-8;
/** veRL always applies the dual clip with clip_ratio_c; this large c never binds for a real ratio. */
export const DUAL_CLIP_OFF = 1e9;

export function optimizer(
  opt: NonNullable<Plan["algorithm"]["optimizer"]>,
  at: string,
  findings: Finding[],
): YamlMapping {
  if (opt.grad_clip === null) {
    findings.push({
      setting: `${at}.grad_clip`,
      arl: "null (no clip)",
      verl: `optim.clip_grad ${DUAL_CLIP_OFF}`,
      consequence: "veRL always clips; a bound this large never binds",
      handling: "exact",
    });
  }
  const mapped: Record<string, YamlMapping[string]> = {
    lr: opt.lr,
    betas: [opt.betas[0], opt.betas[1]],
    weight_decay: opt.weight_decay,
    clip_grad: opt.grad_clip ?? DUAL_CLIP_OFF,
    lr_warmup_steps: opt.warmup_steps,
    lr_scheduler_type: "constant",
  };
  if (opt.eps !== TORCH_ADAMW_EPS) mapped.override_optimizer_config = { eps: opt.eps };
  return mapped;
}

export function advantage(plan: Plan, findings: Finding[]): YamlMapping {
  const a = plan.algorithm.advantage;
  const g = plan.algorithm.group_size;
  if (a.task_norm) {
    findings.push({
      setting: "algorithm.advantage.task_norm",
      arl: "true",
      verl: "no per-env normalisation of advantages",
      consequence: "advantages keep each env's own scale; envs with larger reward spread dominate the gradient",
      handling: "refused",
    });
  }
  if (a.estimator === "gae") {
    if (a.normalize === "none") {
      findings.push({
        setting: "algorithm.advantage.normalize",
        arl: '"none" with gae',
        verl: "compute_gae_advantage_return always whitens the batch's advantages",
        consequence: "advantages are rescaled to mean 0, std 1 over the batch",
        handling: "refused",
      });
    }
    return { adv_estimator: "gae", gamma: a.gamma, lam: a.lambda };
  }
  if (a.baseline === "mean") {
    if (a.normalize === "std") {
      findings.push({
        setting: "algorithm.advantage.normalize",
        arl: '"std" (population std)',
        verl: "grpo divides by torch.std, Bessel-corrected (n - 1)",
        consequence: `advantages are sqrt((G-1)/G) = ${Math.sqrt((g - 1) / g).toFixed(4)} times ARL's at G = ${g}`,
        handling: "differs",
      });
    }
    if (g === 1) {
      findings.push({
        setting: "algorithm.group_size",
        arl: "1",
        verl: "grpo gives a group of one mean 0, std 1: the raw reward",
        consequence: "ARL gives such a group advantage 0 (no comparison signal); veRL trains on the raw reward",
        handling: "refused",
      });
    }
    return { adv_estimator: "grpo", norm_adv_by_std_in_grpo: a.normalize === "std" };
  }
  if (a.baseline === "leave_one_out" && a.normalize === "none") {
    if (g === 1)
      findings.push({
        setting: "algorithm.group_size",
        arl: "1",
        verl: "rloo leaves a group of one at its raw reward",
        consequence: "ARL gives it advantage 0",
        handling: "refused",
      });
    return { adv_estimator: "rloo" };
  }
  findings.push({
    setting: "algorithm.advantage",
    arl: `baseline ${shown(a.baseline)}, normalize ${shown(a.normalize)}`,
    verl: "no outcome estimator with this baseline and normalisation",
    consequence: "exported as grpo, which subtracts the group mean",
    handling: "refused",
  });
  return { adv_estimator: "grpo", norm_adv_by_std_in_grpo: a.normalize === "std" };
}

/** ARL's reduction as veRL's loss_agg_mode (core_algos.agg_loss). */
export function reduction(plan: Plan, findings: Finding[]): YamlMapping {
  const r = plan.algorithm.reduction;
  switch (r.mode) {
    case "token_mean":
      return { loss_agg_mode: "token-mean" };
    case "seq_mean_token_mean":
      return { loss_agg_mode: "seq-mean-token-mean" };
    case "seq_mean_token_sum":
      return { loss_agg_mode: "seq-mean-token-sum" };
    case "constant":
      // veRL 0.9.1's agg_loss divides the summed sequence losses by global_batch_size (N) and
      // then by loss_scale_factor, so constant(C) is loss_scale_factor = C; earlier veRL had no
      // 1/N here and needed N*C.
      findings.push({
        setting: "algorithm.reduction",
        arl: `constant(${r.constant})`,
        verl: `seq-mean-token-sum-norm, loss_scale_factor ${r.constant}`,
        consequence:
          "none in veRL 0.9.1 (sum / (N * C)); veRL before the global-batch normalisation had no 1/N and needed N*C",
        handling: "exact",
      });
      return { loss_agg_mode: "seq-mean-token-sum-norm", loss_scale_factor: r.constant };
    case "group_token_mean":
      findings.push({
        setting: "algorithm.reduction",
        arl: "group_token_mean",
        verl: "no per-group token mean; exported as token-mean",
        consequence: "groups with more tokens weigh more",
        handling: "refused",
      });
      return { loss_agg_mode: "token-mean" };
  }
}

export function kl(plan: Plan, findings: Finding[]): { actor: YamlMapping; algorithm: YamlMapping } {
  const k = plan.algorithm.kl;
  const on = k.coef > 0 && k.reference !== null;
  const inLoss = on && (k.placement === "loss" || k.placement === "both");
  const inReward = on && (k.placement === "reward" || k.placement === "both");
  if (on && k.estimator === "k3") {
    findings.push({
      setting: "algorithm.kl.estimator",
      arl: "k3",
      verl: "low_var_kl clamps the per-token log ratio to [-20, 20] and k3 to [-10, 10]",
      consequence: "tokens whose k3 exceeds 10 contribute 10 and no gradient",
      handling: "differs",
    });
  }
  if (on && k.reference?.kind === "refresh") {
    findings.push({
      setting: "algorithm.kl.reference",
      arl: `refresh every ${k.reference.every}`,
      verl: "the reference stays the initial policy",
      consequence: "KL grows against the start instead of the refreshed snapshot",
      handling: "refused",
    });
  }
  const actor: YamlMapping = { use_kl_loss: inLoss, kl_loss_coef: inLoss ? k.coef : 0, kl_loss_type: k.estimator };
  const algorithm: YamlMapping = {
    use_kl_in_reward: inReward,
    kl_penalty: k.estimator,
    kl_ctrl: { type: "fixed", kl_coef: inReward ? k.coef : 0 },
  };
  return { actor, algorithm };
}

export function tis(plan: Plan): YamlMapping {
  const t = plan.mask.tis;
  return t === null ? { rollout_is: null } : { rollout_is: t.level, rollout_is_threshold: t.cap };
}
