import * as z from "zod";
import { doc, enumOf } from "./common.js";

// Truncated importance sampling (docs/semantics.md §12): the engine that sampled a token and the
// trainer disagree on its probability; each token's (or sequence's) ratio trainer/engine,
// capped, weights its policy-gradient term.
const tisSchema = z.strictObject({
  cap: doc(z.number().gt(1).default(2), "C: the importance weight min(pi_trainer / pi_engine, C)."),
  level: doc(
    enumOf(["token", "sequence"]).default("token"),
    "`token`: each token's own ratio; `sequence`: the product of a sequence's token ratios (the exp of their summed log-ratios), capped, for every token of it.",
  ),
});

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
  tis: doc(
    tisSchema.nullable().default(null),
    "Correct the train/inference mismatch by truncated importance sampling (`tis { cap: 2 }`); none: no correction.",
  ),
});
