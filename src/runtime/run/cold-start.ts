// Cold start (rollout.sft): once per run, before the first iteration. The base evaluation
// (eval.base) measures the policy as configured, then the supervised cold start trains on env
// walkthroughs and the spec's records (sft.ts), and its weights are saved and committed as
// checkpoint 0 with what it trained on and its losses (reported with iteration 1), so that a
// resumed run never repeats it.
import type { RunState } from "../run-dir.js";
import { supervisedColdStart } from "../sft.js";
import type { RunContext } from "./context.js";
import { evaluatePolicy } from "./evaluate.js";

export interface ColdStarted {
  /** The committed state with sftDone, checkpoint 0, the base evaluation and the cold start's losses. */
  readonly state: RunState;
  /** The policy version of the saved cold-started weights. */
  readonly version: number;
}

/** Runs the cold start when the plan asks for one and `state` has not committed it yet; undefined otherwise. */
export async function coldStart(ctx: RunContext, state: RunState): Promise<ColdStarted | undefined> {
  const { plan, runDir } = ctx;
  if (!plan.rollout.sft || state.sftDone) return undefined;
  // The base row: the policy as configured, before it has seen a demonstration.
  const baseEval = plan.eval.base ? await evaluatePolicy(ctx, "base") : undefined;
  const sft = await supervisedColdStart(ctx);
  const checkpoint = runDir.checkpointDir(0);
  const version = (await ctx.trainer.request("save", { path: checkpoint })).policy_version;
  const committed: RunState = { ...state, sftDone: true, checkpoint, ...(baseEval ? { baseEval } : {}), sft, files: runDir.committedFiles(ctx.buffer.commit) };
  runDir.writeState(committed);
  const records = ctx.sftData ? ` and ${sft.records} records (${sft.heldout_records} held out)` : "";
  ctx.log(`sft: trained on ${sft.demos} walkthroughs${records}`);
  return { state: committed, version };
}
