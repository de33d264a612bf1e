// What state.json commits of the cold start (run-dir.ts): what it trained on and its losses,
// how far an interrupted one got, the time it took, and its use of the cache of cold starts.
import * as z from "zod";

const sftEpochSchema = z.strictObject({
  epoch: z.number().int().positive(),
  train_nll: z.number(),
  heldout_nll: z.number().nullable(),
});
export const sftSummarySchema = z.strictObject({
  demos: z.number().int().nonnegative(),
  records: z.number().int().nonnegative(),
  heldout_records: z.number().int().nonnegative(),
  truncated: z.number().int().nonnegative(),
  skipped: z.number().int().nonnegative(),
  epochs: z.array(sftEpochSchema),
});
/** One cold-start epoch: the train NLL per target token (each step's, measured before it) and the held-out records' after it (null: none held out). */
export type SftEpoch = z.infer<typeof sftEpochSchema>;
/** The cold start: walkthroughs, records trained on and held out, records truncated and skipped, and each epoch's losses. */
export type SftSummary = z.infer<typeof sftSummarySchema>;

export const sftProgressSchema = z.strictObject({
  step: z.number().int().positive(),
  /** The demonstrations the cold start trains on: a resume rebuilds them and checks the count. */
  sequences: z.number().int().positive(),
  epochs: z.array(sftEpochSchema),
  nll: z.number(),
  targets: z.number().int().nonnegative(),
  seconds: z.number().nonnegative(),
});
/**
 * How far an interrupted cold start got, committed with its checkpoint: optimizer steps taken
 * over all epochs, the losses of the epochs finished, the summed NLL and target tokens of the
 * epoch in progress (so the resumed cold start reports what an uninterrupted one would) and its
 * wall time so far.
 */
export type SftProgress = z.infer<typeof sftProgressSchema>;
export const coldStartTimeSchema = z.strictObject({
  base_eval_s: z.number().nonnegative(),
  sft_s: z.number().nonnegative(),
});
/** Seconds spent in eval.base and in the cold start. */
export type ColdStartTime = z.infer<typeof coldStartTimeSchema>;

export const coldStartCacheSchema = z.strictObject({
  key: z.string(),
  loaded: z.boolean(),
  entry: z.string().nullable(),
  trained_by: z.string().optional(),
  trained_s: z.number().nonnegative().optional(),
});
/**
 * The cold start's use of the cache of cold starts (run/cold-start/cache.ts): its `key` (cache-key.ts),
 * whether checkpoint 0 was `loaded` from the `entry` folder (then the run that trained it and
 * its cold start's seconds there) or trained here and stored there (entry null: not stored).
 */
export type ColdStartCacheUse = z.infer<typeof coldStartCacheSchema>;
