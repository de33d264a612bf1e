import * as z from "zod";
import { doc, enumOf } from "./common.js";

export const maskSchema = z.strictObject({
  loss: doc(
    enumOf(["generated", "all"]).default("generated"),
    "Tokens the loss trains on: `generated` (what the policy sampled); `all` also trains on prompt and tool output.",
  ),
  keep_sampling_mask: doc(
    z.boolean().default(true),
    "Apply the top-p/top-k truncation used when sampling to the trained policy's distribution too (DeepSeek-V3.2).",
  ),
  off_policy_sequence_threshold: doc(
    z.number().positive().nullable().default(null),
    "Drop negative-advantage sequences whose mean log-ratio (old - current) exceeds this; none: keep all.",
  ),
});

