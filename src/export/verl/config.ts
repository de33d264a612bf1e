// The plan's settings as veRL 0.9.1 `ppo_trainer` settings (verl/trainer/config/ppo_trainer.yaml
// and the dataclasses under verl/workers/config and verl/trainer/config). Each ARL setting with a
// veRL meaning is mapped; where veRL's arithmetic differs, or no veRL setting means the same, a
// finding says so (findings.ts). Pure: the plan in, the nested overrides and findings out.
import type { Plan } from "../../plan/schema.js";
import { type Finding, shown } from "./findings.js";
import type { YamlMapping } from "./yaml.js";

/** Where the other exported files sit, relative to the export folder (the config refers to them). */
export interface ExportPaths {
  readonly trainFile: string;
  readonly valFile: string | null;
  readonly rewardModule: string;
  readonly toolConfig: string | null;
}

export interface VerlConfig {
  /** Keys under the `ppo_trainer` defaults (the `_self_` part of the Hydra config). */
  readonly overrides: YamlMapping;
  readonly findings: Finding[];
}

/** veRL's AdamW has no eps setting of its own; torch's default is 1e-8. */
const TORCH_ADAMW_EPS = 1e-8;
/** veRL always applies the dual clip with clip_ratio_c; this large c never binds for a real ratio. */
const DUAL_CLIP_OFF = 1e9;

const DTYPES: Record<Plan["policy"]["dtype"], string> = { float32: "fp32", bfloat16: "bf16", float16: "fp16" };
const ROLLOUT_DTYPES: Record<Plan["policy"]["dtype"], string> = {
  float32: "float32",
  bfloat16: "bfloat16",
  float16: "float16",
};

/** The model a veRL worker loads: a hub name or a local path. */
function modelPath(plan: Plan, findings: Finding[]): string {
  const model = plan.policy.model;
  if (model.startsWith("hf:")) return model.slice(3);
  if (model.startsWith("builtin:")) {
    findings.push({
      setting: "policy.model",
      arl: shown(model),
      verl: "actor_rollout_ref.model.path needs a Hugging Face model",
      consequence: "the embedded CPU model does not exist outside ARL",
      handling: "refused",
    });
  }
  return model;
}

function optimizer(opt: NonNullable<Plan["algorithm"]["optimizer"]>, at: string, findings: Finding[]): YamlMapping {
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

function advantage(plan: Plan, findings: Finding[]): YamlMapping {
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
function reduction(plan: Plan, findings: Finding[]): YamlMapping {
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

function kl(plan: Plan, findings: Finding[]): { actor: YamlMapping; algorithm: YamlMapping } {
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

function batches(plan: Plan, gpus: number, findings: Finding[]): { data: number; mini: number; micro: number } {
  const { tasks_per_batch: prompts } = plan.rollout;
  const { group_size: g, minibatches, microbatches, batch_size } = plan.algorithm;
  if (batch_size !== prompts * g) {
    findings.push({
      setting: "algorithm.batch_size",
      arl: `${batch_size} (tasks_per_batch ${prompts} x group_size ${g} = ${prompts * g})`,
      verl: "a step trains on train_batch_size x rollout.n sequences",
      consequence: `veRL trains on ${prompts * g} sequences per step`,
      handling: "refused",
    });
  }
  if (prompts % minibatches !== 0) {
    findings.push({
      setting: "algorithm.minibatches",
      arl: String(minibatches),
      verl: "ppo_mini_batch_size counts prompts and must divide train_batch_size",
      consequence: `${prompts} prompts cannot be cut into ${minibatches} equal minibatches`,
      handling: "refused",
    });
  }
  const mini = Math.max(1, Math.floor(prompts / minibatches));
  const perGpu = (mini * g) / gpus / microbatches;
  if (!Number.isInteger(perGpu) || perGpu < 1) {
    findings.push({
      setting: "algorithm.microbatches",
      arl: String(microbatches),
      verl: "ppo_micro_batch_size_per_gpu is a whole number of sequences per GPU",
      consequence: `${mini * g} sequences over ${gpus} GPUs in ${microbatches} microbatches is ${perGpu}; exported as ${Math.max(1, Math.floor(perGpu))} (gradient accumulation only: the loss is unchanged)`,
      handling: "differs",
    });
  }
  return { data: prompts, mini, micro: Math.max(1, Math.floor(perGpu)) };
}

function rolloutEngine(plan: Plan, findings: Finding[]): string {
  const engine = plan.resources.rollout.engine;
  if (engine === "trainer") {
    findings.push({
      setting: "resources.rollout.engine",
      arl: '"trainer"',
      verl: "veRL samples with an inference engine; exported as vllm",
      consequence:
        "sampling numerics are vLLM's, not the trainer's generate (train/inference mismatch, docs/semantics.md §12)",
      handling: "differs",
    });
    return "vllm";
  }
  return engine;
}

function sampling(plan: Plan, findings: Finding[]): YamlMapping {
  const s = plan.policy.sampling;
  const truncated = s.top_p < 1 || s.top_k > 0;
  if (truncated && plan.mask.keep_sampling_mask) {
    findings.push({
      setting: "mask.keep_sampling_mask",
      arl: "true with top-p/top-k sampling",
      verl: "the trainer's log-probs use the full (temperature-only) distribution",
      consequence:
        "the ratio pi/mu compares different supports; tokens outside the kept set are never sampled but still shape pi",
      handling: "refused",
    });
  }
  if (truncated && plan.mask.tis === null) {
    findings.push({
      setting: "mask.tis",
      arl: "null",
      verl: "rollout_correction off",
      consequence: "no correction for the engine/trainer mismatch that truncated sampling adds",
      handling: "differs",
    });
  }
  return { temperature: s.temperature, top_p: s.top_p, top_k: s.top_k === 0 ? -1 : s.top_k };
}

function tis(plan: Plan): YamlMapping {
  const t = plan.mask.tis;
  return t === null ? { rollout_is: null } : { rollout_is: t.level, rollout_is_threshold: t.cap };
}

/** The response budget veRL enforces per trajectory (all turns together). */
function responseLength(plan: Plan, multiTurn: boolean, findings: Finding[]): number {
  const perTurn = Math.min(plan.policy.sampling.max_new_tokens, plan.harness.max_response_tokens);
  if (!multiTurn) return perTurn;
  const total = plan.harness.max_turns * (perTurn + plan.harness.observation.max_tokens);
  findings.push({
    setting: "harness.max_response_tokens",
    arl: `${perTurn} per turn, ${plan.harness.max_turns} turns, ${plan.harness.observation.max_tokens} observation tokens`,
    verl: `response_length ${total}: one budget for all turns and tool responses together`,
    consequence: "a single long turn is not cut at the per-turn budget (ARL aborts that episode)",
    handling: "differs",
  });
  return total;
}

function multiTurn(plan: Plan, paths: ExportPaths, findings: Finding[]): YamlMapping {
  const h = plan.harness;
  if (h.format === "text_action") {
    findings.push({
      setting: "harness.format",
      arl: '"text_action"',
      verl: "tools are called in the hermes function-call format",
      consequence: "the model is asked for a different action syntax than ARL's text actions",
      handling: "refused",
    });
  }
  if (h.context.history === "rerender") {
    findings.push({
      setting: "harness.context.history",
      arl: '"rerender"',
      verl: "the tool agent loop appends each turn's tokens",
      consequence: "one trajectory per episode instead of one sample per model call",
      handling: "refused",
    });
  }
  const side = { keep_head: "right", keep_tail: "left", keep_head_tail: "middle", error: "right" } as const;
  if (h.observation.overflow === "error") {
    findings.push({
      setting: "harness.observation.overflow",
      arl: '"error"',
      verl: "tool_response_truncate_side right",
      consequence: "an overlong observation is truncated instead of ending the episode",
      handling: "refused",
    });
  }
  findings.push({
    setting: "harness.observation.max_tokens",
    arl: String(h.observation.max_tokens),
    verl: `max_tool_response_length ${h.observation.max_tokens}, counted in characters`,
    consequence: "observations are cut at that many characters (fewer tokens than ARL keeps)",
    handling: "differs",
  });
  return {
    enable: true,
    max_assistant_turns: h.max_turns,
    max_user_turns: h.max_turns,
    tool_config_path: paths.toolConfig,
    max_tool_response_length: h.observation.max_tokens,
    tool_response_truncate_side: side[h.observation.overflow],
    format: "hermes",
  };
}

function logger(plan: Plan): string[] {
  const t = plan.tracking;
  return [
    "console",
    ...(t.tensorboard ? ["tensorboard"] : []),
    ...(t.wandb && t.wandb.mode !== "disabled" ? ["wandb"] : []),
    ...(t.mlflow ? ["mlflow"] : []),
  ];
}

function unmapped(plan: Plan, findings: Finding[]): void {
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

/**
 * `promptLength`: a bound on the first prompt's tokens (data.ts: characters of the rendered
 * prompt, which no tokenizer exceeds for text, plus the chat template's markers).
 */
export function verlConfig(plan: Plan, paths: ExportPaths, promptLength: number): VerlConfig {
  const findings: Finding[] = [];
  const gpus = plan.resources.gpus;
  if (gpus === 0)
    findings.push({
      setting: "resources.gpus",
      arl: "0",
      verl: "veRL needs GPUs",
      consequence: "no CPU run",
      handling: "refused",
    });
  const perNode = Math.max(1, Math.floor(gpus / plan.resources.nodes));
  const worldGpus = perNode * plan.resources.nodes;
  const size = batches(plan, worldGpus, findings);
  const tools = plan.tools.length > 0;
  const lora = plan.policy.lora;
  const clip = plan.algorithm.clip;
  const klMap = kl(plan, findings);
  const critic = plan.algorithm.critic;
  if (plan.algorithm.advantage.estimator === "gae" && critic === null)
    findings.push({
      setting: "algorithm.critic",
      arl: "null with gae",
      verl: "gae needs a critic",
      consequence: "no values to bootstrap",
      handling: "refused",
    });
  if (critic?.init === "random")
    findings.push({
      setting: "algorithm.critic.init",
      arl: '"random"',
      verl: "the critic starts from the model's weights with a fresh value head",
      consequence: "the critic's body is pretrained",
      handling: "refused",
    });
  const model: Record<string, YamlMapping[string]> = { path: modelPath(plan, findings) };
  if (lora) Object.assign(model, { lora_rank: lora.rank, lora_alpha: lora.alpha, target_modules: [...lora.targets] });
  const actor: Record<string, YamlMapping[string]> = {
    optim: optimizer(plan.algorithm.optimizer, "algorithm.optimizer", findings),
    ppo_mini_batch_size: size.mini,
    ppo_micro_batch_size_per_gpu: size.micro,
    ppo_epochs: plan.algorithm.epochs,
    clip_ratio_low: clip.low,
    clip_ratio_high: clip.high,
    clip_ratio_c: clip.dual ?? DUAL_CLIP_OFF,
    ...reduction(plan, findings),
    ...klMap.actor,
    entropy_coeff: 0,
    data_loader_seed: plan.seed,
    fsdp_config: { model_dtype: DTYPES[plan.policy.dtype], seed: plan.seed },
  };
  const val = plan.eval;
  const rollout: Record<string, YamlMapping[string]> = {
    name: rolloutEngine(plan, findings),
    n: plan.algorithm.group_size,
    ...sampling(plan, findings),
    seed: plan.seed,
    dtype: ROLLOUT_DTYPES[plan.policy.dtype],
    log_prob_micro_batch_size_per_gpu: size.micro,
    calculate_log_probs: true,
    val_kwargs: {
      temperature: val.temperature,
      top_p: plan.policy.sampling.top_p,
      top_k: plan.policy.sampling.top_k === 0 ? -1 : plan.policy.sampling.top_k,
      n: val.samples_per_task,
      do_sample: val.temperature > 0,
    },
  };
  if (tools) {
    rollout.multi_turn = multiTurn(plan, paths, findings);
    rollout.agent = { default_agent_loop: "tool_agent" };
  }
  const response = responseLength(plan, tools, findings);
  unmapped(plan, findings);
  const overrides: Record<string, YamlMapping | YamlMapping[string]> = {
    data: {
      train_files: paths.trainFile,
      val_files: paths.valFile ?? paths.trainFile,
      train_batch_size: size.data,
      max_prompt_length: promptLength,
      max_response_length: response,
      return_raw_chat: true,
      seed: plan.seed,
    },
    actor_rollout_ref: {
      model,
      actor,
      ref: { log_prob_micro_batch_size_per_gpu: size.micro },
      rollout,
    },
    algorithm: {
      ...advantage(plan, findings),
      ...klMap.algorithm,
      rollout_correction: tis(plan),
      filter_groups:
        plan.algorithm.dynamic_sampling === null
          ? { enable: false }
          : { enable: true, metric: "reward", max_num_gen_batches: plan.algorithm.dynamic_sampling.max_rounds ?? 0 },
    },
    reward: { custom_reward_function: { path: paths.rewardModule, name: "compute_score" } },
    trainer: {
      project_name: plan.tracking.wandb?.project ?? plan.experiment,
      experiment_name: `${plan.experiment}/${plan.variant}`,
      logger: logger(plan),
      nnodes: plan.resources.nodes,
      n_gpus_per_node: perNode,
      total_training_steps: plan.rollout.iterations,
      total_epochs: plan.rollout.iterations,
      test_freq: val.every,
      val_before_train: val.before_training,
      save_freq: -1,
    },
  };
  if (critic) {
    overrides.critic = {
      enable: true,
      optim: optimizer(critic.optimizer, "algorithm.critic.optimizer", findings),
      cliprange_value: critic.value_clip ?? DUAL_CLIP_OFF,
      ppo_micro_batch_size_per_gpu: size.micro,
      model: { path: model.path as string },
    };
    if (critic.value_clip === null)
      findings.push({
        setting: "algorithm.critic.value_clip",
        arl: "null (no clip)",
        verl: `cliprange_value ${DUAL_CLIP_OFF}`,
        consequence: "a range this large never binds",
        handling: "exact",
      });
  }
  if (gpus !== worldGpus)
    findings.push({
      setting: "resources.gpus",
      arl: String(gpus),
      verl: `${perNode} per node on ${plan.resources.nodes} nodes`,
      consequence: `${worldGpus} GPUs used`,
      handling: "differs",
    });
  if (plan.rollout.iterations > 0 && plan.algorithm.dynamic_sampling !== null)
    findings.push({
      setting: "algorithm.dynamic_sampling",
      arl: shown(plan.algorithm.dynamic_sampling),
      verl: "filter_groups drops groups whose final rewards have std 0 and generates more batches",
      consequence: "same rule; max_rounds null maps to max_num_gen_batches 0 (no cap)",
      handling: "exact",
    });
  return { overrides, findings };
}
