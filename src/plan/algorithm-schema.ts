// The plan's algorithm block (src/plan/schema.ts): the advantage, the loss and its reduction, the
// KL, the optimizers, the critic and the penalties, every default explicit. Apart from the rest
// of the plan's blocks as the RL arithmetic's settings (docs/semantics.md).
import * as z from "zod";
import type { BoundedField } from "./bounds.js";
import { bounded, d, nonNegativeInt, positiveInt, probability } from "./schema-parts.js";

export const reductionSchema = z
  .discriminatedUnion("mode", [
    z.strictObject({ mode: z.literal("token_mean") }),
    z.strictObject({ mode: z.literal("seq_mean_token_mean") }),
    z.strictObject({ mode: z.literal("seq_mean_token_sum") }),
    z.strictObject({ mode: z.literal("group_token_mean") }),
    z.strictObject({
      mode: z.literal("constant"),
      constant: d(
        bounded("algorithm.reduction.constant", z.number().positive()),
        "L of constant(L): the sum is divided by N*L.",
      ),
    }),
  ])
  .meta({ id: "Reduction", description: "How token contributions are averaged (docs/semantics.md §5)." });

const optimizerSchema = (warmup: BoundedField) =>
  z.strictObject({
    name: z.enum(["adamw"]),
    lr: z.number().positive(),
    betas: z.tuple([probability, probability]),
    eps: z.number().positive(),
    weight_decay: z.number().nonnegative(),
    grad_clip: d(z.number().positive().nullable(), "Global gradient-norm clip; null: off."),
    warmup_steps: bounded(warmup, nonNegativeInt),
  });

export const algorithmSchema = z.strictObject({
  name: d(z.string(), "Recipe name, for reports."),
  group_size: d(bounded("algorithm.group_size", positiveInt), "G: trajectories started from the same task."),
  advantage: z.strictObject({
    estimator: z.enum(["group", "gae"]),
    baseline: z.enum(["mean", "leave_one_out", "none"]),
    normalize: z.enum(["std", "none"]),
    task_norm: z.boolean(),
    gamma: probability,
    lambda: probability,
  }),
  clip: z.strictObject({
    low: bounded("algorithm.clip.low", z.number().nonnegative()),
    high: z.number().nonnegative(),
    dual: d(z.number().gt(1).nullable(), "Dual clip c; null: off."),
  }),
  kl: z.strictObject({
    coef: d(z.number().nonnegative(), "beta; 0: KL off."),
    estimator: z.enum(["k1", "k2", "k3"]),
    placement: z.enum(["loss", "reward", "both"]),
    reference: d(
      z
        .discriminatedUnion("kind", [
          z.strictObject({ kind: z.literal("initial") }),
          z.strictObject({ kind: z.literal("refresh"), every: bounded("algorithm.kl.reference.every", positiveInt) }),
        ])
        .nullable(),
      "The reference policy; null: none.",
    ),
  }),
  reduction: reductionSchema,
  epochs: bounded("algorithm.epochs", positiveInt),
  minibatches: bounded("algorithm.minibatches", positiveInt),
  microbatches: bounded("algorithm.microbatches", positiveInt),
  batch_size: d(
    bounded("algorithm.batch_size", positiveInt),
    "Trajectories per iteration (resolved: tasks_per_batch * group_size when the spec sets none).",
  ),
  optimizer: optimizerSchema("algorithm.optimizer.warmup_steps"),
  critic: d(
    z
      .strictObject({
        optimizer: optimizerSchema("algorithm.critic.optimizer.warmup_steps"),
        value_clip: z.number().positive().nullable(),
        init: z.enum(["policy", "random"]),
      })
      .nullable(),
    "Value model for GAE; null: none.",
  ),
  dynamic_sampling: d(
    z.strictObject({ max_rounds: bounded("algorithm.dynamic_sampling.max_rounds", positiveInt).nullable() }).nullable(),
    "Drop all-equal groups and resample; null: off.",
  ),
  overlong: d(
    z
      .strictObject({ buffer: bounded("algorithm.overlong.buffer", positiveInt), penalty: z.number().nonnegative() })
      .nullable(),
    "Soft overlong penalty; null: off.",
  ),
});
