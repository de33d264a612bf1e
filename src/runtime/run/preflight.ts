// Preflight (rollout.preflight, docs/semantics.md §11): the checks a run must pass on its first
// training batch before its first optimizer step. It runs after the score phase of the first
// iteration, so after any SFT cold start: the cold start changes the weights, and the checks are
// about the weights and the batch the first RL update will use. Nothing it does changes a weight
// or an optimizer state (one logprobs request), so a run with it trains exactly as one without.
// Its verdict is written to preflight.json; a failure ends the run with a PreflightError before
// the update, naming the check and its numbers. Once passed in a run directory it is not redone
// on resume (the batch a resumed run redoes is the same one).
import { at } from "../../contracts/checked.js";
import { ragged, row } from "../../contracts/trainer-protocol.js";
import {
  offCheck,
  type PreflightCheckResult,
  type PreflightReport,
  type PreflightSequence,
} from "../preflight/batch.js";
import { checkBoundaries } from "../preflight/boundaries.js";
import { checkLogprobsReproduce } from "../preflight/logprobs.js";
import { checkSigns } from "../preflight/signs.js";
import { lossMask } from "../update/train-batches.js";
import { RunError, type RunContext } from "./context.js";
import type { ScoredBatch } from "./score.js";

/** A preflight check failed: the run stops before any weight changes; resuming would fail the same way. */
export class PreflightError extends RunError {}

/** The first batch's trained sequences as the checks read them. */
function preflightSequences(ctx: RunContext, scored: ScoredBatch): PreflightSequence[] {
  return scored.scored.map((s, i) => {
    const p = at(scored.owners, i);
    return {
      ids: at(scored.ids, i),
      roles: s.roles,
      lossMask: lossMask(s.roles, ctx.plan.mask.loss),
      sampled: at(scored.sampledLogprobs, i),
      advantages: at(scored.advantages.advantages, i),
      group: s.group,
      env: p.task.env,
      task: `${p.task.env}/${p.task.id}`,
      reward: s.reward,
      label: `${p.task.env} task ${p.task.id}, group ${p.group}, sample ${p.sample}`,
    };
  });
}

/** The trainer's log-probs of every sequence under the distribution the batch was sampled from (temperature, top-p, top-k). */
async function recomputedLogprobs(ctx: RunContext, sequences: readonly PreflightSequence[]): Promise<Float32Array[]> {
  const { sampling } = ctx.plan.policy;
  const result = await ctx.trainer.request("logprobs", {
    ids: ragged(
      sequences.map((s) => s.ids),
      Int32Array,
    ),
    policy: "current",
    sampling: { temperature: sampling.temperature, top_p: sampling.top_p, top_k: sampling.top_k },
    mask: ragged(
      sequences.map((s) => s.lossMask),
      Uint8Array,
    ),
  });
  return sequences.map((_, i) => row(result.logprobs, i).slice());
}

/** The one-line verdict of a check, for the run log. */
function logLine(r: PreflightCheckResult): string {
  return `preflight ${r.check}: ${r.status === "off" ? r.summary : `${r.status}; ${r.summary}`}`;
}

/** The error of a failed preflight: every failed check with its numbers and the usual causes. */
function failureMessage(report: PreflightReport, file: string): string {
  const failed = report.checks.filter((c) => c.status === "failed");
  const parts = failed.map((c) =>
    [
      `preflight check '${c.check}' failed: ${c.summary}`,
      ...c.failures.map((f) => `  - ${f}`),
      ...(c.hint ? [`  ${c.hint}`] : []),
    ].join("\n"),
  );
  return `${parts.join("\n")}\nthe run stopped before its first optimizer step (no weight changed); the checks' numbers are in ${file}`;
}

/** Whether this run directory has already passed its preflight (a resumed run does not redo it). */
function alreadyPassed(ctx: RunContext): boolean {
  return ctx.runDir.readPreflight()?.passed === true;
}

/**
 * Runs the plan's preflight checks on `scored`, before its update. Returns whether the preflight
 * is done (it passed now or before, or the plan turned every check off), false when this batch
 * has no target (no optimizer step follows: the checks wait for the next batch); throws a
 * PreflightError when a check failed.
 */
export async function preflight(ctx: RunContext, iteration: number, scored: ScoredBatch): Promise<boolean> {
  const settings = ctx.plan.rollout.preflight;
  if (!settings.logprobs_reproduce && !settings.boundaries && !settings.signs) return true;
  if (alreadyPassed(ctx)) return true;
  const sequences = preflightSequences(ctx, scored);
  const targets = sequences.reduce((n, s) => n + s.lossMask.reduce((a, b) => a + b, 0), 0);
  if (targets === 0) return false;
  // Without the keep-sampling mask the update recomputes its old log-probs itself (score.ts), so
  // its first ratios are 1 by construction; the sampled ones are still what the policy did.
  // With an inference engine the sampled log-probs are the engine's: their gap to the trainer's
  // is the mismatch (docs/semantics.md §12), so the check bounds its mean, not its maximum.
  const engine = ctx.plan.resources.rollout.engine;
  const notes = [
    ...(ctx.plan.mask.keep_sampling_mask
      ? []
      : [
          "the update recomputes its old log-probs untruncated (mask.keep_sampling_mask: false), this compares the sampled ones",
        ]),
    ...(engine === "trainer"
      ? []
      : [`the sampled log-probs are ${engine}'s: the check bounds the mean gap, the metrics report the mismatch`]),
  ];
  const note = notes.length > 0 ? notes.join("; ") : undefined;
  const checks: PreflightCheckResult[] = [
    settings.logprobs_reproduce
      ? checkLogprobsReproduce(
          sequences,
          await recomputedLogprobs(ctx, sequences),
          settings.logprob_tolerance,
          note,
          engine === "trainer" ? "max" : "mean",
        )
      : offCheck("logprobs_reproduce"),
    settings.boundaries ? checkBoundaries(sequences, ctx.stopIds, ctx.plan.mask.loss) : offCheck("boundaries"),
    settings.signs ? checkSigns(ctx.plan, sequences) : offCheck("signs"),
  ];
  const report: PreflightReport = {
    passed: checks.every((c) => c.status !== "failed"),
    iteration,
    sequences: sequences.length,
    targets,
    checks,
  };
  ctx.runDir.writePreflight(report);
  for (const c of checks) ctx.log(logLine(c));
  if (!report.passed) throw new PreflightError(failureMessage(report, ctx.runDir.preflightPath));
  return true;
}
