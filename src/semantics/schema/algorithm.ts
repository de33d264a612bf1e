import * as z from "zod";
import { doc, enumOf, positiveInt, probability, shorthand } from "./common.js";

/** `token_mean` or `constant(1024)` in the spec; `{ mode, constant? }` in the plan. */
const reductionSchema = shorthand(
  {
    token_mean: { mode: "token_mean" },
    seq_mean_token_mean: { mode: "seq_mean_token_mean" },
    seq_mean_token_sum: { mode: "seq_mean_token_sum" },
    group_token_mean: { mode: "group_token_mean" },
  },
  {
    constant: {
      form: "constant(N)",
      arg: z.number().positive(),
      argText: "a positive number of tokens (e.g. the generation budget)",
      build: (constant) => ({ mode: "constant", constant }),
    },
  },
  z.discriminatedUnion("mode", [
    z.strictObject({ mode: z.literal("token_mean") }),
    z.strictObject({ mode: z.literal("seq_mean_token_mean") }),
    z.strictObject({ mode: z.literal("seq_mean_token_sum") }),
    z.strictObject({ mode: z.literal("group_token_mean") }),
    z.strictObject({ mode: z.literal("constant"), constant: z.number().positive() }),
  ]),
  "mode",
);

const advantageSchema = z.strictObject({
  estimator: doc(
    enumOf(["group", "gae"]).default("group"),
    "`group`: outcome advantages relative to the group (GRPO, RLOO, REINFORCE); `gae`: token-level GAE with a critic (PPO).",
  ),
  baseline: doc(
    enumOf(["mean", "leave_one_out", "none"]).default("none"),
    "Group baseline: the group mean (includes the sample itself), the mean of the others (RLOO), or none.",
  ),
  normalize: doc(
    enumOf(["std", "none"]).default("none"),
    "Divide by the group's population std + 1e-6 (GRPO), or not (Dr. GRPO).",
  ),
  task_norm: doc(z.boolean().default(false), "Normalise advantages per task across the batch (AgentRL)."),
  gamma: doc(probability.default(1.0), "Discount factor."),
  lambda: doc(probability.default(1.0), "GAE lambda."),
});

const clipSchema = z.strictObject({
  low: doc(
    z.number().nonnegative().default(0.2),
    "Lower clip: ratios below 1 - low stop the gradient for positive advantages.",
  ),
  high: doc(z.number().nonnegative().default(0.2), "Upper clip: 1 + high; above low is Clip-Higher (DAPO)."),
  dual: doc(z.number().gt(1).nullable().default(null), "Dual clip c > 1 for negative advantages; none: off."),
});

/** `initial` or `refresh(N)` in the spec; `{ kind, every? }` in the plan. */
const klReferenceSchema = shorthand(
  { initial: { kind: "initial" } },
  {
    refresh: {
      form: "refresh(N)",
      arg: positiveInt,
      argText: "a positive whole number of steps",
      build: (every) => ({ kind: "refresh", every }),
    },
  },
  z
    .discriminatedUnion("kind", [
      z.strictObject({ kind: z.literal("initial") }),
      z.strictObject({ kind: z.literal("refresh"), every: positiveInt }),
    ])
    .nullable(),
  "kind",
);

const klSchema = z.strictObject({
  coef: doc(z.number().nonnegative().default(0), "KL coefficient beta; 0 turns KL off."),
  estimator: doc(
    enumOf(["k1", "k2", "k3"]).default("k3"),
    "KL estimator on target tokens (k3 is unbiased and non-negative).",
  ),
  placement: doc(
    enumOf(["loss", "reward", "both"]).default("loss"),
    "Add beta*KL to the loss, subtract it from the per-token reward, or (rarely wanted) both.",
  ),
  reference: doc(
    klReferenceSchema.default(null),
    "Reference policy: `initial` (the policy RL starts from, i.e. after any SFT cold start) or `refresh(N)` (re-snapshot every N steps).",
  ),
});

const optimizerSchema = z.strictObject({
  name: doc(enumOf(["adamw"]).default("adamw"), "Optimizer."),
  lr: doc(z.number().positive().default(1e-6), "Learning rate."),
  betas: doc(z.tuple([probability, probability]).default([0.9, 0.999]), "Adam betas."),
  eps: doc(z.number().positive().default(1e-8), "Adam epsilon."),
  weight_decay: doc(z.number().nonnegative().default(0.01), "Decoupled weight decay."),
  grad_clip: doc(z.number().positive().nullable().default(1.0), "Clip the global gradient norm to this; none: off."),
  warmup_steps: doc(z.number().int().nonnegative().default(0), "Linear learning-rate warm-up."),
});

const criticSchema = z.strictObject({
  optimizer: doc(optimizerSchema.default(optimizerSchema.parse({ lr: 1e-5 })), "The critic's optimizer."),
  value_clip: doc(
    z.number().positive().nullable().default(null),
    "Clip value updates to this distance from the old values; none: off.",
  ),
  init: doc(
    enumOf(["policy", "random"]).default("policy"),
    "Initialise the value head's trunk from the policy, or randomly.",
  ),
});

const dynamicSamplingSchema = z.strictObject({
  max_rounds: doc(positiveInt.nullable().default(null), "Most resampling rounds per batch; none: unbounded."),
});

const overlongSchema = z.strictObject({
  buffer: doc(positiveInt, "Tokens before the response limit where the soft penalty starts."),
  penalty: doc(z.number().nonnegative().default(1.0), "Penalty reached at the limit."),
});

export const algorithmSchema = z.strictObject({
  name: doc(z.string().default("custom"), "Name of the recipe (set by the stdlib presets), for reports."),
  group_size: doc(positiveInt.default(1), "Trajectories started from the same task (G)."),
  advantage: doc(advantageSchema.default(advantageSchema.parse({})), "How advantages are computed."),
  clip: doc(clipSchema.default(clipSchema.parse({})), "PPO ratio clipping."),
  kl: doc(klSchema.default(klSchema.parse({})), "KL regularisation to a reference policy."),
  reduction: doc(
    reductionSchema.default({ mode: "token_mean" }),
    "How token contributions are averaged into the loss.",
  ),
  epochs: doc(positiveInt.default(1), "Passes over each batch."),
  minibatches: doc(positiveInt.default(1), "Optimizer steps per epoch."),
  microbatches: doc(positiveInt.default(1), "Gradient-accumulation slices of a minibatch (does not change the loss)."),
  batch_size: doc(
    positiveInt.nullable().default(null),
    "Trajectories per iteration; none: tasks_per_batch * group_size.",
  ),
  optimizer: doc(optimizerSchema.default(optimizerSchema.parse({})), "The policy's optimizer."),
  critic: doc(criticSchema.nullable().default(null), "Value model for GAE; none: no critic."),
  dynamic_sampling: doc(
    dynamicSamplingSchema.nullable().default(null),
    "Drop all-equal groups and resample (DAPO); none: off.",
  ),
  overlong: doc(
    overlongSchema.nullable().default(null),
    "Soft penalty for responses near the length limit (DAPO); none: off.",
  ),
});
