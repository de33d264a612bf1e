// The JSON Schema a YAML user would write for the front-end benchmark's files, which ajv compiles
// and validates against (the YAML side of the comparison).

const obj = (properties: Record<string, object>, extra: object = {}): object => ({
  type: "object",
  additionalProperties: false,
  properties,
  ...extra,
});
const mapOf = (values: object): object => ({ type: "object", additionalProperties: values });
const S = { type: "string" };
const N = { type: "number" };
const I = { type: "integer" };
const B = { type: "boolean" };
const numOrExpr = { type: ["number", "string"] };

export function yamlSchema(): object {
  const sampling = obj({ temperature: N, top_p: N, top_k: I, max_new_tokens: I });
  const split = obj({ train: N, valid: N, test: N });
  const toolParam = obj(
    {
      type: { enum: ["string", "number", "integer", "boolean", "array", "object"] },
      description: S,
      minimum: N,
      maximum: N,
      default: {},
      items: { type: "object" },
      enum: { type: "array" },
    },
    { required: ["type"] },
  );
  const env = obj({
    extends: S,
    kind: { enum: ["builtin", "subprocess", "server"] },
    command: { type: "array", items: S },
    timeout_s: I,
    split,
    signals: mapOf({ enum: ["bool", "int", "float"] }),
    params: mapOf({ type: ["number", "string", "boolean"] }),
    optimal_length: I,
    tools: { type: "array", items: S },
    weight: N,
  });
  const tool = obj(
    { extends: S, description: S, parameters: mapOf(toolParam), returns: S },
    { required: ["description"] },
  );
  const optimizer = obj({
    lr: N,
    weight_decay: N,
    betas: { type: "array", items: N, minItems: 2, maxItems: 2 },
    schedule: S,
  });
  const experiment = obj({
    extends: S,
    description: S,
    seed: I,
    policy: obj({ model: S, chat_template: S, sampling, reference: S }),
    env: mapOf(env),
    harness: obj({
      tools: { type: "array", items: S },
      format: { enum: ["function_call", "text_action"] },
      max_turns: { type: "integer", minimum: 1 },
      max_response_tokens: I,
      on_budget: { enum: ["truncate", "terminate"] },
      observation: obj({ max_tokens: I, overflow: { enum: ["keep_head", "keep_tail", "error"] } }),
      system_prompt: S,
    }),
    reward: mapOf(numOrExpr),
    constraints: mapOf(S),
    mask: obj({ loss: S, keep_sampling: B }),
    algorithm: obj({
      estimator: { enum: ["ppo", "grpo", "rloo", "reinforce", "dr_grpo"] },
      group_size: { type: "integer", minimum: 1 },
      advantage: obj({ baseline: S, normalize: B, task_norm: B, gamma: N, lambda: N }),
      clip: obj({ low: N, high: N, dual: N }),
      kl: obj({ coef: N, estimator: S, placement: S, reference: S }),
      optimizer,
      critic: obj({ optimizer }),
      reduction: S,
      epochs: I,
      minibatches: I,
    }),
    rollout: obj({ tasks_per_batch: I, iterations: I, concurrency: I, async: obj({ max_policy_lag: I }) }),
    eval: obj({ split: S, every: I, episodes: I, k: { type: "array", items: I }, seeds: { type: "array", items: I } }),
    resources: obj({ backend: { enum: ["local", "torch"] }, gpus: I, launcher: S }),
    allow: mapOf(S),
    sweep: mapOf({ type: "array", minItems: 1 }),
    ablation: mapOf({ type: "object" }),
  });
  return {
    $schema: "http://json-schema.org/draft-07/schema#",
    ...obj({
      imports: { type: "array", items: obj({ path: S, as: S }, { required: ["path"] }) },
      env: mapOf(env),
      tool: mapOf(tool),
      experiment: mapOf(experiment),
    }),
  };
}
