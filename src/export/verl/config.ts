// The plan's settings as veRL 0.9.1 `ppo_trainer` settings (verl/trainer/config/ppo_trainer.yaml
// and the dataclasses under verl/workers/config and verl/trainer/config). Each ARL setting with a
// veRL meaning is mapped; where veRL's arithmetic differs, or no veRL setting means the same, a
// finding says so (findings.ts). Pure: the plan in, the nested overrides and findings out. This
// module assembles the config; the algorithm's settings are in algorithm.ts, the rollout's in
// rollout.ts, and the settings veRL has no counterpart for in unmapped.ts.
import type { Plan } from "../../plan/schema.js";
import { advantage, DUAL_CLIP_OFF, kl, optimizer, reduction, tis } from "./algorithm.js";
import { type Finding, shown } from "./findings.js";
import { batches, multiTurn, responseLength, rolloutEngine, sampling } from "./rollout.js";
import { unmapped } from "./unmapped.js";
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

function logger(plan: Plan): string[] {
  const t = plan.tracking;
  return [
    "console",
    ...(t.tensorboard ? ["tensorboard"] : []),
    ...(t.wandb && t.wandb.mode !== "disabled" ? ["wandb"] : []),
    ...(t.mlflow ? ["mlflow"] : []),
  ];
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
    rollout.multi_turn = multiTurn(plan, paths.toolConfig, findings);
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
