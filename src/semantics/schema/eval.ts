import * as z from "zod";
import { doc, enumOf, positiveInt, rewardExpression } from "./common.js";

export const evalSchema = z.strictObject({
  split: doc(enumOf(["train", "valid", "test"]).default("test"), "Split evaluated."),
  every: doc(positiveInt.default(10), "Evaluate every N iterations (and after the last)."),
  before_training: doc(
    z.boolean().default(true),
    "Also evaluate the starting policy (after any SFT cold start), as the baseline row of a table.",
  ),
  base: doc(
    z.boolean().default(false),
    "Also evaluate the policy before the SFT cold start: the base row of a base / +SFT / +RL table (eval/base.jsonl). Only with rollout.sft: without a cold start, before_training's row is that policy.",
  ),
  samples_per_task: doc(positiveInt.nullable().default(null), "Episodes per task (n of pass@k); none: the largest k."),
  k: doc(z.array(positiveInt).min(1).default([1]), "The k values of pass@k."),
  tasks: doc(positiveInt.nullable().default(null), "Tasks evaluated; none: the whole split."),
  temperature: doc(
    z.number().nonnegative().nullable().default(null),
    "Sampling temperature for eval; none: the policy's.",
  ),
  success: doc(
    rewardExpression.nullable().default(null),
    "When an episode counts as a success (train success rate, pass@k): a condition over signals, e.g. outcome.correct or outcome.score >= 0.5; none: the `success` signal every env declares.",
  ),
});
