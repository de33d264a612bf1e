// Cold start (rollout.sft): once per run, before the first iteration. The base evaluation
// (eval.base) measures the policy as configured, then the supervised cold start trains on env
// walkthroughs and the spec's records (sft.ts). Every rollout.sft.checkpoint_every steps (or at
// the end of every epoch) its weights and optimizer state are saved and committed with how far
// it got (state.sftProgress), so an interrupted cold start resumes from there to the same result;
// at its end they are committed as checkpoint 0 with what it trained on and its losses (reported
// with iteration 1), so that a resumed run never repeats it. With rollout.sft.optimizer fresh
// (the default) the trainer's optimizers are reset before checkpoint 0 (reset_optimizer). See docs/architecture.md,
// "Interrupts and resume".
//
// With the cache of cold starts on (RunContext.coldStartCache) and a trainer that announces
// deterministic training, checkpoint 0 is looked up by the key of everything that decides it
// (cache-key.ts) once the demonstrations are built: found and verified, it is copied into the
// run and loaded, and its stored losses are reported as a trained cold start's are; otherwise
// the cold start is trained and checkpoint 0 stored for the next run (cache.ts).
import { defined } from "../../../contracts/checked.js";
import type { RunState } from "../../run-dir.js";
import { coldStartData, sftEpochLine, supervisedColdStart, type ColdStartData, type SftCheckpoints } from "./sft.js";
import type { RunContext } from "../context.js";
import { evaluatePolicy } from "../evaluate.js";
import { coldStartKey, uncacheable } from "./cache-key.js";
import { claimColdStart, lookupColdStart, restoreCheckpoint, storeColdStart } from "./cache.js";

export type ColdStarted =
  | {
      /** The committed state with sftDone, checkpoint 0, the base evaluation and the cold start's losses. */
      readonly state: RunState;
      /** The policy version of the saved cold-started weights. */
      readonly version: number;
      readonly stopped?: undefined;
    }
  | {
      /** Stopped on request at one of its checkpoints: the state committed there. */
      readonly state: RunState;
      readonly stopped: string;
    };

/** The cache's folder and this cold start's key there, or undefined when it is not cached (said in the run log when the cache is on). */
function cacheSlot(ctx: RunContext, state: RunState, data: ColdStartData): { dir: string; key: string } | undefined {
  const dir = ctx.coldStartCache;
  // A cold start resumed mid-way continues its own steps.
  if (dir === undefined || state.sftProgress) return undefined;
  const handshake = ctx.trainer.handshakeResult;
  const why = uncacheable(handshake);
  if (why !== undefined || !handshake) {
    ctx.log(`sft: not cached: ${why ?? "no handshake"}`);
    return undefined;
  }
  return { dir, key: coldStartKey(ctx.plan, handshake, ctx.configuration, data) };
}

/** Runs the cold start when the plan asks for one and `state` has not committed it yet (continuing from state.sftProgress); undefined otherwise. */
export async function coldStart(ctx: RunContext, state: RunState): Promise<ColdStarted | undefined> {
  const { plan } = ctx;
  if (!plan.rollout.sft || state.sftDone) return undefined;
  // The base row: the policy as configured, before it has seen a demonstration (measured once, kept by the cold start's first commit).
  const evalBegun = Date.now();
  const baseEval = state.baseEval ?? (plan.eval.base ? await evaluatePolicy(ctx, "base") : undefined);
  const baseEvalSeconds = state.coldStartTime?.base_eval_s ?? (plan.eval.base ? (Date.now() - evalBegun) / 1000 : 0);
  const committed: RunState = { ...state, ...(baseEval ? { baseEval } : {}) };
  const data = await coldStartData(ctx);
  const slot = cacheSlot(ctx, state, data);
  if (!slot) return trainColdStart(ctx, committed, data, undefined, baseEvalSeconds);
  // Another run of this process (arl run --jobs) training the same cold start: wait, then load it.
  const claim = await claimColdStart(slot.key, () =>
    ctx.log(`sft: waiting for another run of this process to train the same cold start (key ${slot.key})`),
  );
  if (claim.waited) ctx.log(`sft: waited for another run of this process to train the same cold start`);
  try {
    return (
      (await loadCached(ctx, committed, data, slot, baseEvalSeconds)) ??
      (await trainColdStart(ctx, committed, data, slot, baseEvalSeconds))
    );
  } finally {
    claim.release();
  }
}

/** Checkpoint 0 from the cache's entry, loaded and committed; undefined when there is none to trust (a damaged one is said). */
async function loadCached(
  ctx: RunContext,
  committed: RunState,
  data: ColdStartData,
  slot: { dir: string; key: string },
  baseEvalSeconds: number,
): Promise<ColdStarted | undefined> {
  const { runDir } = ctx;
  const lookup = lookupColdStart(slot.dir, slot.key);
  if ("damaged" in lookup) {
    ctx.log(
      `sft: warning: the cached cold start ${slot.key} in ${slot.dir} is damaged (${lookup.damaged}); training it afresh, and it will be replaced`,
    );
    return undefined;
  }
  if ("missing" in lookup) return undefined;
  const cached = lookup.found;
  const checkpoint = runDir.checkpointDir(0);
  restoreCheckpoint(cached, checkpoint);
  const version = (await ctx.trainer.request("load", { path: checkpoint })).policy_version;
  ctx.log(
    `sft: loaded the cold start from the cache, key ${slot.key} (in ${slot.dir}; trained in ${cached.trainedSeconds.toFixed(1)} s by ${cached.run})`,
  );
  const sft = cached.summary;
  const epochs = sftOf(ctx).epochs;
  for (const e of sft.epochs) ctx.log(sftEpochLine(e, epochs, data));
  const previous = committed.checkpoint;
  const next: RunState = {
    ...committed,
    sftDone: true,
    checkpoint,
    sft,
    coldStartTime: { base_eval_s: baseEvalSeconds, sft_s: (Date.now() - data.begun) / 1000 },
    coldStartCache: {
      key: slot.key,
      loaded: true,
      entry: cached.dir,
      trained_by: cached.run,
      trained_s: cached.trainedSeconds,
    },
    files: runDir.committedFiles(ctx.buffer.commit),
  };
  runDir.writeState(next);
  if (previous && previous !== checkpoint) runDir.removeCheckpoint(previous);
  logTrainedOn(ctx, sft);
  return { state: next, version };
}

const sftOf = (ctx: RunContext) => defined(ctx.plan.rollout.sft, "rollout.sft of a plan with a cold start");

function logTrainedOn(ctx: RunContext, sft: NonNullable<RunState["sft"]>): void {
  const records = ctx.sftData ? ` and ${sft.records} records (${sft.heldout_records} held out)` : "";
  ctx.log(`sft: trained on ${sft.demos} walkthroughs${records}`);
}

/** Trains the cold start (from state.sftProgress when resumed), commits checkpoint 0 and, with a cache slot, stores it there. */
async function trainColdStart(
  ctx: RunContext,
  start: RunState,
  data: ColdStartData,
  slot: { dir: string; key: string } | undefined,
  baseEvalSeconds: number,
): Promise<ColdStarted> {
  const { runDir } = ctx;
  let committed = start;
  const checkpoints: SftCheckpoints = {
    resume: start.sftProgress,
    commit: async (progress) => {
      const checkpoint = runDir.sftCheckpointDir(progress.step);
      await ctx.trainer.request("save", { path: checkpoint });
      const previous = committed.checkpoint;
      committed = {
        ...committed,
        checkpoint,
        sftProgress: progress,
        coldStartTime: { base_eval_s: baseEvalSeconds, sft_s: progress.seconds },
        files: runDir.committedFiles(ctx.buffer.commit),
      };
      runDir.writeState(committed);
      if (previous && previous !== checkpoint) runDir.removeCheckpoint(previous);
      return ctx.stop?.aborted === true;
    },
  };
  const outcome = await supervisedColdStart(ctx, data, checkpoints);
  if ("stopped" in outcome) return { state: committed, stopped: `the cold start's step ${outcome.stopped.step}` };
  const sft = outcome.done;
  // Before checkpoint 0, so that a run resumed from it starts RL from the same fresh state.
  if (sftOf(ctx).optimizer === "fresh") await ctx.trainer.request("reset_optimizer", {});
  const checkpoint = runDir.checkpointDir(0);
  const version = (await ctx.trainer.request("save", { path: checkpoint })).policy_version;
  const entry = slot ? storeEntry(ctx, slot, checkpoint, sft, outcome.seconds) : undefined;
  const previous = committed.checkpoint;
  const { sftProgress: _done, ...rest } = committed;
  committed = {
    ...rest,
    sftDone: true,
    checkpoint,
    sft,
    coldStartTime: { base_eval_s: baseEvalSeconds, sft_s: outcome.seconds },
    ...(slot ? { coldStartCache: { key: slot.key, loaded: false, entry: entry ?? null } } : {}),
    files: runDir.committedFiles(ctx.buffer.commit),
  };
  runDir.writeState(committed);
  if (previous && previous !== checkpoint) runDir.removeCheckpoint(previous);
  logTrainedOn(ctx, sft);
  return { state: committed, version };
}

/** Stores checkpoint 0 in the cache; a failure to write there is a warning, never the run's failure. */
function storeEntry(
  ctx: RunContext,
  slot: { dir: string; key: string },
  checkpoint: string,
  summary: NonNullable<RunState["sft"]>,
  seconds: number,
): string | undefined {
  try {
    const entry = storeColdStart(slot.dir, slot.key, checkpoint, {
      summary,
      trainedSeconds: seconds,
      run: ctx.runDir.dir,
    });
    ctx.log(`sft: stored the cold start in the cache, key ${slot.key} (in ${slot.dir})`);
    return entry;
  } catch (error) {
    ctx.log(`sft: warning: the cold start could not be stored in the cache ${slot.dir}: ${(error as Error).message}`);
    return undefined;
  }
}
