// Commit: an iteration becomes part of the run. Its episodes are appended to the buffer (all of
// them, rejected groups included) before its evaluation; then the trainer saves a checkpoint,
// the metrics line is appended, and state.json names the iteration, the checkpoint and every
// committed file's length and checksum. Until state.json is replaced, a kill loses only the
// iterations not committed: a resume cuts what they appended.
//
// The save is asked for in the background (saveIteration): a trainer may answer before the files
// are durable and write them while the next rollout generates. The iteration is committed
// (commitIteration) once the trainer says they are (`saved`), and not before.
import path from "node:path";
import type { TrajectoryRecord } from "../../episode/buffer.js";
import type { RunState } from "../run-dir.js";
import type { RunContext } from "./context.js";
import { stepwiseBatch, type Played } from "./episodes.js";
import { iterationMetrics, type IterationMetrics, type IterationOutcome } from "./metrics.js";
import { watchIteration, type SignalOfIteration, type WatchdogVerdict, type WatchedEpisode } from "./watchdog.js";

/** Lets signal handlers and timers run between slices of long synchronous work. */
const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Records appended per slice between yields: a huge batch's frames take seconds to encode. */
const APPEND_SLICE = 1024;

/**
 * Appends every episode played in `iteration` to the buffer and syncs it (committed with the
 * iteration's state): one record per episode, or in a step-wise batch (stepwiseBatch) one per
 * sample (its own context and generated ids, with its step), each carrying its episode's outcome
 * and, where the update trained on it, the advantage of each token (`trained`, by the ids).
 */
export async function recordEpisodes(
  ctx: RunContext,
  iteration: number,
  played: readonly Played[],
  trained: ReadonlyMap<Int32Array, Float32Array> = new Map(),
): Promise<void> {
  const stepwise = stepwiseBatch(ctx.plan, played);
  const records: TrajectoryRecord[] = played.flatMap((p) =>
    // An episode without samples (an env error before its first call) keeps its one record.
    (stepwise && p.episode.samples.length > 0 ? p.episode.samples : [p.episode]).map((s, i) => ({
      iteration,
      env: p.task.env,
      task: p.task.id,
      group: p.group,
      sample: p.sample,
      ids: s.ids,
      roles: s.roles,
      versions: s.versions,
      logprobs: s.logprobs,
      generators: p.episode.generators,
      rewards: p.rewards.terms,
      reward: p.rewards.total,
      end: p.episode.end,
      turns: p.episode.episode.turns,
      toolCalls: p.episode.toolCalls,
      messages: p.episode.messages,
      tools: p.episode.templateTools,
      ...("step" in s && s.step !== undefined ? { step: s.step } : {}),
      ...(trained.has(s.ids) ? { advantages: trained.get(s.ids) } : {}),
      ...(i === 0 && p.transcript ? { transcript: p.transcript } : {}),
      ...(i === 0 && p.program ? { program: p.program } : {}),
    })),
  );
  for (let i = 0; i < records.length; i += APPEND_SLICE) {
    ctx.buffer.append(records.slice(i, i + APPEND_SLICE));
    await yieldToEventLoop();
  }
  ctx.buffer.sync();
}

export interface CommittedIteration {
  readonly state: RunState;
  readonly metrics: IterationMetrics;
  /** The watchdog's reading of the iteration (its warnings are in `metrics` too). */
  readonly watchdog: WatchdogVerdict;
}

/** An iteration whose checkpoint the trainer has taken, and may still be writing: not committed yet. */
export interface SavedIteration {
  readonly iteration: number;
  readonly checkpoint: string;
  /** The trainer answered before the checkpoint was durable: `saved` collects it. */
  readonly pending: boolean;
  /** Its metrics line, measured when the save was answered (its total_s ends there). */
  readonly measured: IterationMetrics;
  readonly episodes: readonly WatchedEpisode[];
}

/**
 * Asks the trainer to save the checkpoint of `outcome`'s iteration, in the background where it
 * can, and measures the iteration's metrics (over `state`, the state committed before it).
 */
export async function saveIteration(
  ctx: RunContext,
  state: RunState,
  outcome: IterationOutcome,
): Promise<SavedIteration> {
  const { plan, runDir } = ctx;
  const { iteration } = outcome;
  const checkpoint = runDir.checkpointDir(iteration);
  const saved = await ctx.trainer.request("save", { path: checkpoint, background: true });
  const evalBase = iteration === 1 ? state.baseEval : undefined;
  const sft = iteration === 1 ? state.sft : undefined;
  const coldStartTime = iteration === 1 ? state.coldStartTime : undefined;
  const engine = ctx.engine?.takeMetrics();
  const measured = iterationMetrics(
    plan,
    {
      ...outcome,
      ...(evalBase ? { evalBase } : {}),
      ...(sft ? { sft } : {}),
      ...(coldStartTime ? { coldStartTime } : {}),
      ...(engine ? { engine } : {}),
    },
    saved.policy_version,
  );
  const episodes = outcome.rollout.allPlayed.map((p) => ({
    reward: p.rewards.total,
    success: p.success,
    end: p.episode.end,
    turns: p.episode.episode.turns,
    ...(p.episode.error ? { error: p.episode.error } : {}),
  }));
  return { iteration, checkpoint, pending: saved.pending === true, measured, episodes };
}

/**
 * Commits `saved` over `state`, the state committed before it: waits until its checkpoint is
 * durable, appends its metrics (with the watchdog's warnings, given the signal of the iterations
 * committed before it, `earlier`) and writes the state; the previous checkpoint is removed once
 * the new state names its own.
 */
export async function commitIteration(
  ctx: RunContext,
  state: RunState,
  saved: SavedIteration,
  earlier: readonly SignalOfIteration[],
): Promise<CommittedIteration> {
  const { plan, runDir } = ctx;
  const { iteration, checkpoint, measured } = saved;
  if (saved.pending) {
    const written = await ctx.trainer.request("saved", {});
    if (written.path === null || path.resolve(written.path) !== path.resolve(checkpoint)) {
      throw new Error(
        `the trainer answered 'saved' with ${written.path === null ? "no save outstanding" : `the folder ${written.path}`} while iteration ${iteration}'s checkpoint ${checkpoint} was being written`,
      );
    }
  }
  const watchdog = watchIteration(plan.rollout.watchdog, earlier, measured, saved.episodes);
  const metrics: IterationMetrics = {
    ...(watchdog.warnings.length > 0 ? { ...measured, warnings: watchdog.warnings } : measured),
    ...(await ctx.tracking.counts()),
  };
  runDir.appendMetrics(metrics);
  const previous = state.checkpoint;
  const committed: RunState = {
    ...state,
    iteration,
    checkpoint,
    bufferOffset: ctx.buffer.offset,
    metricsOffset: runDir.metricsSize,
    policyVersion: metrics.policy_version,
    files: runDir.committedFiles(ctx.buffer.commit),
  };
  runDir.writeState(committed);
  // Committed lines only: a resumed run never sends an iteration twice.
  ctx.tracking.metrics(metrics);
  if (previous && previous !== checkpoint) runDir.removeCheckpoint(previous);
  return { state: committed, metrics, watchdog };
}
