// Executes one plan as a sequence of phases over one run context (run/context.ts): provision
// the trainer and envs, cold start, then per iteration rollout (sample tasks, play groups of
// isolated episodes), score (lags, log-probs, advantages), update through the trainer,
// evaluate, and commit (buffer, checkpoint, metrics, state). The plan is the only input; a run
// can always be repeated or resumed from its directory.
//
// The trainer writes an iteration's checkpoint in the background where it can (run/commit.ts):
// the iteration is committed once the checkpoint is durable, just after the next rollout, which
// generated meanwhile; a stop, the run's end or a failure commits it first.
//
// Asynchronous rollout (rollout.async) pipelines up to max_staleness (k) batches ahead: just
// before some updates the trainer snapshots its weights into the behaviour slot, and the batches
// after it are generated from that snapshot while the updates run (env steps, tool calls and
// generation overlap the train steps; run/pipeline.ts says which batches start at which
// snapshot). One batch ahead (k 1) the snapshot is taken before every update and iteration t+1
// is generated from the one before update t. Which weights generate a turn is fixed by request
// order, not timing (except under in_flight_updates, docs/semantics.md §7), so a run stays
// reproducible, and a resumed run redoes the rollouts that were in flight from the snapshot its
// checkpoint keeps. Samples older than max_policy_lag versions at their update are dropped or
// corrected by group (rl/lag.ts, in the score phase).
//
// With a generation replica (rollout.async.generation: replica; run/replica.ts) a second trainer
// process generates the batches while the trainer trains, given the weights wherever the
// snapshot is taken.
//
// With an inference engine (resources.rollout.engine vllm or sglang; run/engines.ts) the servers
// generate, and they serve exactly the trainer's weights of one policy version: synced at
// provision, after the cold start and after every update; under asynchronous rollout where the
// behaviour snapshot is taken instead (the servers are the behaviour policy, so they keep serving
// version t while update t runs and the rollout in flight is sampled by one version throughout),
// and before an evaluation, which waits for the rollout in flight first.
import type { RunState } from "./run-dir.js";
import { coldStart } from "./run/cold-start/phase.js";
import { commitIteration, recordEpisodes, saveIteration, type SavedIteration } from "./run/commit.js";
import {
  haltedError,
  RunError,
  TrainedOnNothingError,
  type EvalSummary,
  type RunContext,
  type RunOptions,
  type RunSummary,
} from "./run/context.js";
import { evaluatePolicy } from "./run/evaluate.js";
import { preflight } from "./run/preflight.js";
import { checkHost, checkRunnable, openRun, provision, shutdownEnvs } from "./run/provision.js";
import { reportIteration, type RunPace } from "./run/report.js";
import { collectRollout } from "./run/rollout.js";
import { launchedThrough, refreshesBefore, RolloutPipeline } from "./run/pipeline.js";
import { advantagesByIds, scoreBatch } from "./run/score.js";
import { updatePolicy } from "./run/update.js";
import { syncEngine } from "./run/engines.js";
import type { GenerationReplica } from "./run/replica.js";
import type { RunTracking } from "./run/tracking.js";
import { signalsOfMetrics } from "./run/watchdog.js";

export { RunError, type RunOptions, type RunSummary } from "./run/context.js";
export { PreflightError } from "./run/preflight.js";

/**
 * Asynchronous rollout: the trainer copies its current weights (policy version `version`) into
 * the behaviour slot the next rollout samples from; an engine's servers take the same weights.
 */
async function snapshotBehaviour(
  ctx: RunContext,
  replica: GenerationReplica | undefined,
  version: number,
): Promise<void> {
  await ctx.trainer.request("snapshot", {});
  await replica?.sync(ctx.trainer);
  await syncEngine(ctx, version);
}

export async function executePlan(options: RunOptions): Promise<RunSummary> {
  const { plan } = options;
  const asyncRollout = plan.rollout.async;
  checkRunnable(plan, options.envs, options.engineCommand);
  await checkHost(plan, options.envs, options.log);
  const opened = await openRun(options);
  const { buffer, trainers } = opened;
  let state: RunState = opened.state;
  let stopped = false;
  let lastEval: EvalSummary | undefined;
  let watchdogStop: string | undefined;
  let tracking: RunTracking | undefined;
  let gateway: RunContext["gateway"];
  try {
    const provisioned = await provision(options, opened);
    const { ctx } = provisioned;
    tracking = ctx.tracking;
    gateway = ctx.gateway;
    let { version } = provisioned;
    const cold = await coldStart(ctx, state);
    if (cold) state = cold.state;
    if (cold?.stopped !== undefined) {
      // Asked to stop during the cold start: it committed a checkpoint and stopped there.
      options.log(`stopped after ${cold.stopped} (committed)`);
      options.log(await trainers.shutdown());
      return { dir: options.runDir.dir, iterations: 0, stopped: true, stoppedAt: cold.stopped };
    }
    if (cold) version = cold.version;
    // The servers sample the first batch from the cold-started weights.
    await syncEngine(ctx, version);

    const pace: RunPace = { started: Date.now(), firstIteration: state.iteration + 1 };
    // The watchdog's no-signal streak continues across a resume from the committed lines.
    const signals = signalsOfMetrics(options.runDir.readMetrics());
    // The rollouts of the next iterations, running while this one updates (asynchronous rollout).
    const pipeline = new RolloutPipeline(ctx, state.iteration);
    // The preflight waits for the first batch with a target; a run resumed past iteration 1 has
    // taken its first steps already.
    let preflightPending = state.iteration === 0;
    // The iteration whose checkpoint the trainer is writing in the background while the next
    // rollout generates: committed once it is durable, before anything else is (run/commit.ts).
    let saving:
      | {
          saved: SavedIteration;
          rolloutSeconds: number;
          evaluation: EvalSummary | undefined;
          firstEnvError: string | undefined;
        }
      | undefined;
    /** Commits the iteration being saved, if any; whether its watchdog stops the run. */
    const commitSaving = async (): Promise<boolean> => {
      if (!saving) return false;
      const { saved, rolloutSeconds, evaluation, firstEnvError } = saving;
      saving = undefined;
      const committed = await commitIteration(ctx, state, saved, signals);
      state = committed.state;
      signals.push(committed.metrics);
      reportIteration(ctx, committed.metrics, rolloutSeconds, pace, evaluation, firstEnvError);
      if (!committed.watchdog.stop) return false;
      watchdogStop = committed.watchdog.warnings.find((w) => w.code === "no-signal")?.message ?? "no learning signal";
      return true;
    };
    try {
      for (let iteration = state.iteration + 1; iteration <= plan.rollout.iterations; iteration++) {
        if (options.stop?.aborted) {
          await commitSaving();
          stopped = true;
          break;
        }
        // The starting policy's evaluation is reported with iteration 1's metrics, outside its time.
        const evalBegun = Date.now();
        const evalBefore = iteration === 1 && plan.eval.before_training ? await evaluatePolicy(ctx, 0) : undefined;
        if (evalBefore) lastEval = evalBefore;
        const begun = Date.now();
        // The first batch of an asynchronous run samples from the starting weights; a resumed
        // run's behaviour slot comes back with its checkpoint, except with an engine: its servers
        // were synced to the committed weights, and the behaviour slot is made to match them.
        if (asyncRollout && pipeline.size === 0 && (iteration === 1 || ctx.engine))
          await snapshotBehaviour(ctx, trainers.replica, version);
        // A resumed run restarts the rollouts the uninterrupted run had in flight at this point,
        // from the snapshot its checkpoint keeps.
        if (asyncRollout && iteration > 1 && pipeline.size === 0)
          pipeline.startThrough(launchedThrough(asyncRollout, iteration - 1, plan.rollout.iterations));
        const rollout = await (pipeline.take(iteration) ?? collectRollout(ctx, iteration));
        const rolledOut = Date.now();
        // The iteration before is committed now that its checkpoint has had this rollout's time to
        // be written; a watchdog stop there leaves this rollout uncommitted.
        const commitBefore = saving ? Date.now() : undefined;
        if (await commitSaving()) break;
        const commitBeforeSeconds = commitBefore === undefined ? undefined : (Date.now() - commitBefore) / 1000;

        const scored = await scoreBatch(ctx, iteration, rollout.accepted, version);
        // Before the first optimizer step (and before the next rollout starts): a failed check
        // stops the run with every weight as it was.
        if (preflightPending) preflightPending = !(await preflight(ctx, iteration, scored));
        const scoredAt = Date.now();

        // Asynchronous rollout: the next batches sample from the weights before this update.
        if (asyncRollout) {
          if (refreshesBefore(asyncRollout, iteration)) await snapshotBehaviour(ctx, trainers.replica, version);
          if (!options.stop?.aborted)
            pipeline.startThrough(launchedThrough(asyncRollout, iteration, plan.rollout.iterations));
        }

        const update = await updatePolicy(ctx, iteration, scored, version);
        version = update.version;
        // Synchronous rollout: the servers take the updated weights before anything generates again.
        if (!asyncRollout) await syncEngine(ctx, version);
        const updated = Date.now();

        await recordEpisodes(ctx, iteration, rollout.allPlayed, advantagesByIds(scored));
        const isEval = iteration % plan.eval.every === 0 || iteration === plan.rollout.iterations;
        // An evaluation is of the updated weights: an engine's servers take them once the
        // rollout in flight, sampled by the version before, is done.
        if (isEval && asyncRollout && ctx.engine) {
          await pipeline.settle();
          await syncEngine(ctx, version);
        }
        const evaluation = isEval ? await evaluatePolicy(ctx, iteration) : undefined;
        if (evaluation) lastEval = evaluation;
        const saved = await saveIteration(ctx, state, {
          iteration,
          rollout,
          scored,
          update,
          ...(evalBefore ? { evalBefore } : {}),
          ...(evaluation ? { evaluation } : {}),
          times: {
            begun,
            rolledOut,
            scored: scoredAt,
            updated,
            ...(evalBefore ? { evalBeforeSeconds: (begun - evalBegun) / 1000 } : {}),
            ...(commitBeforeSeconds !== undefined ? { commitBeforeSeconds } : {}),
          },
        });
        saving = {
          saved,
          rolloutSeconds: rollout.seconds,
          evaluation,
          firstEnvError: rollout.allPlayed.find((p) => p.episode.end === "env_error")?.episode.error,
        };
        // Written already (a trainer that saves before it answers): committed at once.
        if (!saved.pending && (await commitSaving())) break;
      }
      // The last iteration (or the one before a stop) is committed before the run ends.
      await commitSaving();
    } catch (error) {
      // A failure after an iteration was saved (a rollout's, say) still commits it when its
      // checkpoint can be confirmed: the work is kept, not redone on resume. A halt does not wait.
      if (!options.halt?.aborted) await commitSaving().catch(() => undefined);
      // Failing with a rollout in flight: stop the trainers first so that it fails fast, then
      // let it end (its envs close) before reporting.
      await trainers.kill();
      await pipeline.settle();
      throw error;
    }
    // Stopped with a rollout in flight: it ends (and closes its envs) before the trainers do.
    // What it played is not committed; a resumed run redoes it from the checkpoint's snapshot.
    await pipeline.settle();
    await trainers.replica?.settle();
    options.log(await trainers.shutdown());
    await tracking.finish(options.runDir.dir, state.iteration);
  } catch (error) {
    await trainers.kill();
    if (options.halt?.aborted) throw haltedError(state);
    // The run directory says the run failed, and why, beside what it committed.
    if (error instanceof TrainedOnNothingError) options.runDir.writeState({ ...state, failed: error.message });
    if (error instanceof RunError) throw error;
    const tail = (error as { stderrTail?: string[] }).stderrTail ?? trainers.main.stderrTail();
    throw new RunError((error as Error).message, tail);
  } finally {
    buffer.close();
    // A failed or halted run's trackers keep what they were sent (closing them never throws).
    await tracking?.close(options.halt?.aborted ? 5_000 : undefined);
    await gateway?.close().catch(() => undefined);
    await shutdownEnvs(options.envs);
  }
  return {
    dir: options.runDir.dir,
    iterations: state.iteration,
    stopped,
    ...(watchdogStop ? { watchdogStop } : {}),
    ...(lastEval ? { lastEval } : {}),
  };
}
