// The plan's rollout block (src/plan/schema.ts): how episodes are generated and batched, the
// asynchronous rollout, curricula, the SFT cold start and the preflight checks. Apart from the
// rest of the plan's blocks as the largest one, the run loop's settings.
import * as z from "zod";
import { bounded, d, dataFileSchema, nonNegativeInt, positiveInt, probability } from "./schema-parts.js";

export const rolloutSchema = z.strictObject({
  tasks_per_batch: d(bounded("rollout.tasks_per_batch", positiveInt), "B: tasks sampled per iteration."),
  iterations: bounded("rollout.iterations", positiveInt),
  concurrency: bounded("rollout.concurrency", positiveInt),
  async: d(
    z
      .strictObject({
        max_staleness: d(
          bounded("rollout.async.max_staleness", positiveInt),
          "k: batches roll out up to k updates ahead of their own update (docs/semantics.md §7); 1: one batch ahead.",
        ),
        in_flight_updates: d(
          z.boolean(),
          "Partial rollouts: the snapshot is refreshed before every update and episodes in flight continue with it at their next generate request (timing decides which turn gets which weights); false: one snapshot per batch, by request order.",
        ),
        generation: d(
          z.enum(["trainer", "replica"]),
          "trainer: the trainer generates between its train steps; replica: a second trainer process holds the behaviour weights and generates while the trainer trains (synced by a policy-only save and load at every snapshot).",
        ),
        max_policy_lag: d(
          bounded("rollout.async.max_policy_lag", nonNegativeInt).nullable(),
          "Samples (whole groups) more versions old at their update are past the bound; null: no limit.",
        ),
        past_max_lag: d(
          z.enum(["drop", "correct"]),
          "A group past max_policy_lag: drop it whole (counted), or correct it (proximal ratio, truncated importance weight to each token's sampling version; needs mask.tis).",
        ),
      })
      .nullable(),
    "Batches generated from the behaviour snapshot while updates run (trainer protocol, behaviour policy), up to max_staleness ahead; null: synchronous.",
  ),
  cross_policy: d(
    z.strictObject({ pool: z.array(z.string().min(1)).min(1), probability }).nullable(),
    "Per training turn, with this probability a pool model (own trainer process) generates it; its text is encoded once by the policy's tokenizer as an assistant turn, role pool, never a target. null: off.",
  ),
  sft: d(
    z
      .strictObject({
        demos: d(
          bounded("rollout.sft.demos", positiveInt).nullable(),
          "Walkthroughs replayed; null: none (records only).",
        ),
        data: d(
          dataFileSchema.nullable(),
          "Chat-format record file (JSON lines) relative to the spec's folder, with its sha256; null: walkthroughs only.",
        ),
        max_data_bytes: d(
          bounded("rollout.sft.max_data_bytes", positiveInt),
          "The most bytes data's file may hold (checked when compiling and when the run reads it).",
        ),
        max_record_bytes: d(
          bounded("rollout.sft.max_record_bytes", positiveInt),
          "The most bytes one record (line) of data may hold; a longer one stops the run before it trains.",
        ),
        heldout: d(
          z.number().min(0).lt(1),
          "Fraction of data's records held out for the held-out loss (seeded split); 0 without data.",
        ),
        epochs: bounded("rollout.sft.epochs", positiveInt),
        batch: d(
          bounded("rollout.sft.batch", positiveInt).nullable(),
          "Demos per optimizer step; null: all (one step per epoch).",
        ),
        lr: d(z.number().positive().nullable(), "Peak learning rate of the SFT steps; null: algorithm.optimizer.lr."),
        checkpoint_every: d(
          bounded("rollout.sft.checkpoint_every", positiveInt).nullable(),
          "Optimizer steps between the cold start's resumable checkpoints; null: at the end of every epoch.",
        ),
        optimizer: d(
          z.enum(["fresh", "continue"]),
          "After the cold start's last step: fresh resets the policy's (and critic's) optimizer (trainer method reset_optimizer: moments zeroed, step count 0); continue keeps its state for RL.",
        ),
      })
      .nullable(),
    "Supervised cold start; null: off.",
  ),
  watchdog: d(
    z.strictObject({
      no_signal_iterations: d(
        bounded("rollout.watchdog.no_signal_iterations", positiveInt),
        "Consecutive iterations with effective group ratio 0 or gradient norm 0 before the no-signal warning.",
      ),
      on_no_signal: d(
        z.enum(["warn", "stop"]),
        "warn: log and record the warning; stop: also end the run after committing that iteration.",
      ),
      max_env_error_fraction: d(
        probability,
        "Warn when more than this fraction of an iteration's episodes end in env_error.",
      ),
    }),
    "Signal and end-reason warnings during the run (runtime/run/watchdog.ts).",
  ),
  preflight: d(
    z.strictObject({
      logprobs_reproduce: d(
        z.boolean(),
        "Recomputed log-probs of the first batch must match the sampled ones: max |log ratio| over generated targets <= logprob_tolerance (the mean |log ratio| when an inference engine sampled).",
      ),
      boundaries: d(
        z.boolean(),
        "Targets only where the mask says (never prompt/tool/observation unless mask.loss: all; never rendered, pool, padding), every generated end-of-turn token a target, one task per group.",
      ),
      signs: d(
        z.boolean(),
        "Policy-gradient signs on the batch's numbers (reference maths, src/rl): equal rewards give zero gradient; the clip stops positive advantages, not negative ones.",
      ),
      logprob_tolerance: d(
        z.number().positive(),
        "Nats (resolved from policy.dtype when the spec sets none: 1e-3 float32, 0.05 bfloat16/float16).",
      ),
    }),
    "Checks before the first optimizer step (runtime/preflight/); a failure stops the run before any weight changes.",
  ),
});
