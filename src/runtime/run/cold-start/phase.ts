// Cold start (rollout.sft): once per run, before the first iteration. The base evaluation
// (eval.base) measures the policy as configured, then the supervised cold start trains on env
// walkthroughs and the spec's records (sft.ts). Every rollout.sft.checkpoint_every steps (or at
// the end of every epoch) its weights and optimizer state are saved and committed with how far
// it got (state.sftProgress), so an interrupted cold start resumes from there to the same result;
// at its end they are committed as checkpoint 0 with what it trained on and its losses (reported
// with iteration 1), so that a resumed run never repeats it. With rollout.sft.optimizer fresh
// (the default) the trainer's optimizers are reset before checkpoint 0 (reset_optimizer). See docs/architecture.md,
// "Interrupts and resume".
import type { RunState } from "../../run-dir.js";
import { supervisedColdStart, type SftCheckpoints } from "./sft.js";
import type { RunContext } from "../context.js";
import { evaluatePolicy } from "../evaluate.js";

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

/** Runs the cold start when the plan asks for one and `state` has not committed it yet (continuing from state.sftProgress); undefined otherwise. */
export async function coldStart(ctx: RunContext, state: RunState): Promise<ColdStarted | undefined> {
  const { plan, runDir } = ctx;
  if (!plan.rollout.sft || state.sftDone) return undefined;
  // The base row: the policy as configured, before it has seen a demonstration (measured once, kept by the cold start's first commit).
  const evalBegun = Date.now();
  const baseEval = state.baseEval ?? (plan.eval.base ? await evaluatePolicy(ctx, "base") : undefined);
  const baseEvalSeconds = state.coldStartTime?.base_eval_s ?? (plan.eval.base ? (Date.now() - evalBegun) / 1000 : 0);
  let committed: RunState = { ...state, ...(baseEval ? { baseEval } : {}) };
  const checkpoints: SftCheckpoints = {
    resume: state.sftProgress,
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
  const outcome = await supervisedColdStart(ctx, checkpoints);
  if ("stopped" in outcome) return { state: committed, stopped: `the cold start's step ${outcome.stopped.step}` };
  const sft = outcome.done;
  // Before checkpoint 0, so that a run resumed from it starts RL from the same fresh state.
  if (plan.rollout.sft.optimizer === "fresh") await ctx.trainer.request("reset_optimizer", {});
  const checkpoint = runDir.checkpointDir(0);
  const version = (await ctx.trainer.request("save", { path: checkpoint })).policy_version;
  const previous = committed.checkpoint;
  const { sftProgress: _done, ...rest } = committed;
  committed = {
    ...rest,
    sftDone: true,
    checkpoint,
    sft,
    coldStartTime: { base_eval_s: baseEvalSeconds, sft_s: outcome.seconds },
    files: runDir.committedFiles(ctx.buffer.commit),
  };
  runDir.writeState(committed);
  if (previous && previous !== checkpoint) runDir.removeCheckpoint(previous);
  const records = ctx.sftData ? ` and ${sft.records} records (${sft.heldout_records} held out)` : "";
  ctx.log(`sft: trained on ${sft.demos} walkthroughs${records}`);
  return { state: committed, version };
}
