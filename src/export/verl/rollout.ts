// The rollout's settings as veRL's (the actor_rollout_ref.rollout and data settings): batch
// sizes, the inference engine, sampling, the response budget and the multi-turn tool loop, each
// with the findings where veRL samples or cuts differently from ARL. Apart from the config's
// assembly (config.ts) as the part that says how episodes are generated.
import type { Plan } from "../../plan/schema.js";
import type { Finding } from "./findings.js";
import type { YamlMapping } from "./yaml.js";

export function batches(plan: Plan, gpus: number, findings: Finding[]): { data: number; mini: number; micro: number } {
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

export function rolloutEngine(plan: Plan, findings: Finding[]): string {
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

export function sampling(plan: Plan, findings: Finding[]): YamlMapping {
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

/** The response budget veRL enforces per trajectory (all turns together). */
export function responseLength(plan: Plan, multiTurn: boolean, findings: Finding[]): number {
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

/** `toolConfig`: the exported tool config's path (ExportPaths.toolConfig). */
export function multiTurn(plan: Plan, toolConfig: string | null, findings: Finding[]): YamlMapping {
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
    tool_config_path: toolConfig,
    max_tool_response_length: h.observation.max_tokens,
    tool_response_truncate_side: side[h.observation.overflow],
    format: "hermes",
  };
}
