// The schema of one experiment variant (sweeps and ablations already applied and removed).
import * as z from "zod";
import { algorithmSchema } from "./algorithm.js";
import { doc, nonNegativeInt } from "./common.js";
import { envSchema } from "./env.js";
import { evalSchema } from "./eval.js";
import { harnessSchema } from "./harness.js";
import { maskSchema } from "./mask.js";
import { policySchema } from "./policy.js";
import { resourcesSchema } from "./resources.js";
import { constraintsSchema, rewardSchema } from "./reward.js";
import { rolloutSchema } from "./rollout.js";
import { toolSchema } from "./tool.js";
import { trackingSchema } from "./tracking.js";

export const experimentSchema = z.strictObject({
  description: doc(z.string().optional(), "What the experiment is for."),
  seed: doc(nonNegativeInt.default(0), "Seed of every random choice of the run (tasks, sampling, initialisation)."),
  policy: doc(policySchema, "The model being trained and how it samples."),
  env: doc(
    z
      .record(z.string(), envSchema)
      .refine((envs) => Object.keys(envs).length > 0, { message: "an experiment needs at least one env" }),
    "Environments, by name; several make a multi-task experiment.",
  ),
  tool: doc(z.record(z.string(), toolSchema).default({}), "Tools declared for this experiment, by name."),
  harness: doc(harnessSchema.default(harnessSchema.parse({})), "The agent loop: tools, call format, budgets."),
  reward: doc(rewardSchema.default(rewardSchema.parse({})), "Named reward terms over typed signals."),
  constraints: doc(constraintsSchema.default({}), "Hard blocks enforced by the harness: `NAME: block(condition)`."),
  mask: doc(maskSchema.default(maskSchema.parse({})), "Which tokens the loss trains on."),
  algorithm: doc(algorithmSchema.default(algorithmSchema.parse({})), "Advantages, loss, optimisation."),
  rollout: doc(rolloutSchema.default(rolloutSchema.parse({})), "How experience is collected."),
  eval: doc(evalSchema.default(evalSchema.parse({})), "Periodic evaluation on a held-out split."),
  resources: doc(resourcesSchema.default(resourcesSchema.parse({})), "Where the trainer runs."),
  tracking: doc(
    trackingSchema.default(trackingSchema.parse({})),
    "Trackers the run's metrics, plan and eval tables are copied to: TensorBoard, W&B, MLflow (all off by default).",
  ),
  allow: doc(
    z.record(z.string(), z.string().min(1, "give the reason for silencing the rule")).default({}),
    "Lint rules silenced for this experiment, each with its reason.",
  ),
});

export type ExperimentConfig = z.output<typeof experimentSchema>;

/** Blocks of an experiment that describe variants rather than one configuration. */
export const variantBlocks = ["sweep", "ablation"] as const;

/** Top-level declaration kinds and the schema each is checked against. */
export const declarationKinds = [
  "experiment",
  "env",
  "tool",
  "policy",
  "harness",
  "reward",
  "algorithm",
  "mask",
  "rollout",
  "eval",
  "resources",
  "tracking",
] as const;
