import * as z from "zod";
import { doc, enumOf, nonNegativeInt, positiveInt, probability } from "./common.js";

const watchdogSchema = z.strictObject({
  no_signal_iterations: doc(
    positiveInt.default(3),
    "Consecutive iterations without a learning signal (effective group ratio 0: every group's rewards all equal, or a gradient norm of 0) before the watchdog speaks.",
  ),
  on_no_signal: doc(
    enumOf(["warn", "stop"]).default("warn"),
    "What the watchdog does then: `warn` in the run log and metrics.jsonl, with the likely cause read from the episodes; `stop` also ends the run cleanly after committing that iteration (its directory is complete, nothing to resume; `arl run` exits with status 4).",
  ),
  max_env_error_fraction: doc(
    probability.default(0.2),
    "Warn when more than this fraction of an iteration's episodes end in an env error.",
  ),
});

// Preflight (docs/semantics.md §11): named checks on the first training batch, before the first
// optimizer step; each one is a field, so the plan says which ran.
const preflightSchema = z.strictObject({
  logprobs_reproduce: doc(
    z.boolean().default(true),
    "Recompute the first batch's log-probs with the weights that sampled it and require max |log ratio| over the generated targets within logprob_tolerance (the mean, when an inference engine sampled: resources.rollout.engine).",
  ),
  boundaries: doc(
    z.boolean().default(true),
    "Require zero targets on prompt, tool, observation, rendered, pool and padding tokens (unless mask.loss: all), every generated end-of-turn token a target, and one task per group.",
  ),
  signs: doc(
    z.boolean().default(true),
    "Check the policy-gradient signs on the batch's own numbers: all-equal rewards give exactly zero gradient; past the clip a positive-advantage token gets none, a negative-advantage one still does.",
  ),
  logprob_tolerance: doc(
    z.number().positive().nullable().default(null),
    "The largest |log ratio| (nats) logprobs_reproduce accepts; none: 1e-3 for float32 weights, 0.05 for bfloat16 and float16 (their rounding alone moves log-probs by a few hundredths).",
  ),
});

export const rolloutSchema = z.strictObject({
  tasks_per_batch: doc(positiveInt.default(8), "Tasks sampled per iteration (B)."),
  iterations: doc(positiveInt.default(10), "Training iterations."),
  concurrency: doc(positiveInt.default(8), "Episodes running at once."),
  async: doc(
    z
      .strictObject({
        max_staleness: doc(
          positiveInt.default(1),
          "How many updates a batch may be generated ahead of its own (k; AReaL's max_head_offpolicyness, prime-rl's max_off_policy_steps, counted in updates): up to k batches roll out at once, sharing rollout.concurrency, while the updates run; a batch's samples are 1 to k updates old at their update. 1: one batch ahead.",
        ),
        in_flight_updates: doc(
          z.boolean().default(false),
          "Partial rollouts: the behaviour snapshot is refreshed before every update and an episode in flight continues with the new weights at its next generate request, each token recording the version that sampled it. Which turn gets which weights then depends on timing (docs/semantics.md §7); false: each batch is sampled by one snapshot, decided by request order, and a seeded run repeats exactly.",
        ),
        generation: doc(
          enumOf(["trainer", "replica"]).default("trainer"),
          "Which process samples the batches: `trainer`, between its train steps (generation waits while it trains); `replica`, a second process of the same trainer that holds the behaviour weights and generates while the trainer trains, given the trainer's weights by a policy-only save and load at every snapshot (docs/semantics.md §7). Needs one trainer process and resources.rollout.engine trainer.",
        ),
        max_policy_lag: doc(
          nonNegativeInt.nullable().default(null),
          "Samples (whole groups) more than this many policy versions old at their update are past the bound; one batch ahead they are epochs x minibatches versions old. none: unbounded.",
        ),
        past_max_lag: doc(
          enumOf(["drop", "correct"]).default("drop"),
          "What happens to a group past max_policy_lag: `drop` it whole (counted, metrics lag_drops); `correct` keeps it, its ratio clipped around the weights that start the update and each token weighted by the truncated importance weight to the version that sampled it (needs mask.tis; docs/semantics.md §7).",
        ),
      })
      .nullable()
      .default(null),
    "Asynchronous rollout: batches are generated from a behaviour snapshot of the policy while the updates run, up to max_staleness batches ahead (one batch ahead by default: iteration t+1's episodes come from the snapshot taken just before update t); none: synchronous (every sample from the current policy).",
  ),
  cross_policy: doc(
    z
      .strictObject({
        pool: doc(
          z.array(z.string().min(1)).min(1),
          "Other models that may generate a turn, each served by its own trainer process (generation only).",
        ),
        probability: doc(probability, "Probability that a turn is generated by a model drawn from the pool."),
      })
      .nullable()
      .default(null),
    "Cross-policy sampling (AgentRL): a pool turn's text enters the policy's context encoded once by the policy's tokenizer, as an assistant turn; its tokens are context, never trained on (they have no behaviour log-probs), and the buffer records each turn's generator. none: off.",
  ),
  sft: doc(
    z
      .strictObject({
        demos: doc(
          positiveInt.nullable().default(null),
          "Env walkthroughs replayed and trained on before RL; none: no walkthroughs (then data is required).",
        ),
        data: doc(
          z.string().min(1).nullable().default(null),
          'A file of chat-format records (JSON lines: {"messages": [{role, content, tool_calls?}], "tools"?: [...]}), relative to the spec, trained on besides the walkthroughs: assistant turns are the targets, everything else context; none: walkthroughs only.',
        ),
        max_data_bytes: doc(
          positiveInt.default(256 * 1024 ** 2),
          "The most bytes data's file may hold (256 MiB); a larger file is an error at `arl check`. Its records and their tokens are held in memory through the cold start: raise it for a larger file (at most 1 GiB: the records take about 2.5 times the file in memory), or cut the file.",
        ),
        max_record_bytes: doc(
          positiveInt.default(4 * 1024 ** 2),
          "The most bytes one record (line) of data may hold (4 MiB, about a million tokens of text); a longer record stops the run before it trains, named by file:line. Raise it for longer records (at most 256 MiB).",
        ),
        heldout: doc(
          z.number().min(0).lt(1).nullable().default(null),
          "Fraction of data's records kept out of training (a seeded split) for the held-out loss measured after each epoch; none: 0.1 with data, 0 without.",
        ),
        epochs: doc(positiveInt.default(1), "Passes over the demonstrations."),
        batch: doc(
          positiveInt.nullable().default(null),
          "Demonstrations per optimizer step (the last step of an epoch takes the rest); none: all of them, one step per epoch.",
        ),
        lr: doc(
          z.number().positive().nullable().default(null),
          "Peak learning rate of the cold start's steps; none: algorithm.optimizer.lr. Supervised steps on demonstrations tolerate a far larger rate than policy-gradient steps on sampled advantages.",
        ),
        checkpoint_every: doc(
          positiveInt.nullable().default(null),
          "Optimizer steps between the cold start's checkpoints (weights, optimizer state and how far it got), from which `arl run --resume` continues an interrupted cold start to the same result; none: at the end of every epoch.",
        ),
        optimizer: doc(
          enumOf(["fresh", "continue"]).default("fresh"),
          "What RL's optimizer starts from. fresh: the cold start's AdamW state is dropped after its last step (moments zeroed, step count 0, so algorithm.optimizer.warmup_steps counts RL's steps), as two-stage SFT-then-RL pipelines start RL with a new optimizer; continue: RL carries on the cold start's moments and step count (its second moments remember the larger SFT gradients for ~1/(1-beta2) steps and damp RL's first steps).",
        ),
      })
      .nullable()
      .default(null),
    "Supervised cold start on env walkthroughs and/or your own chat records before RL; none: off.",
  ),
  watchdog: doc(
    watchdogSchema.default(watchdogSchema.parse({})),
    "Warnings during the run: no learning signal for several iterations, every episode truncated at its first turn, too many env errors.",
  ),
  preflight: doc(
    preflightSchema.default(preflightSchema.parse({})),
    "Checks on the first training batch before the first optimizer step (after any cold start); a failing check stops the run before any weight changes, naming the check and its numbers.",
  ),
});
