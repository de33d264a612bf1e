import * as z from "zod";
import { doc, enumOf, isPlainCall, rewardExpression, type PlainCall } from "./common.js";

/** Entries of `reward` other than these are named terms. */
export const rewardSettingNames = ["on_env_error"] as const;

export const rewardSchema = z
  .object({
    on_env_error: doc(
      enumOf(["exclude", "score_zero"]).default("exclude"),
      "Episodes whose env failed: `exclude` them from the update (counted apart), or score them 0 like a policy failure.",
    ),
  })
  .catchall(rewardExpression);

export type Reward = z.output<typeof rewardSchema>;

/** `constraints { NAME: block(condition) }`: hard blocks, enforced by the harness. */
export const constraintSchema = z.custom<PlainCall>((v) => isPlainCall(v) && v.$call === "block" && v.args.length === 1, {
  message: "expected block(condition), e.g. block(tool.name == \"execute\")",
});

export const constraintsSchema = z.record(z.string(), constraintSchema);
