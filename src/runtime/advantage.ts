// Advantages for a batch of scored trajectories (docs/semantics.md §3): group-relative outcome
// advantages applied to every target token, or token-level GAE with the critic's values; then
// the optional AgentRL task normalisation over target tokens.
import type { Plan } from "../plan/schema.js";
import { groupAdvantages, taskNormalize } from "../rl/advantages.js";
import { maskedGae } from "../rl/gae.js";
import { klEstimators } from "../rl/kl.js";
import { at, last } from "../contracts/checked.js";
import { STD_EPS } from "../rl/stats.js";
import { Role, type EndReason } from "../episode/buffer.js";
import { lossMask } from "./update/train-batches.js";

export interface ScoredTrajectory {
  readonly group: string;
  readonly env: string;
  readonly roles: Uint8Array;
  readonly reward: number;
  /** Reward at the end of each turn (sums to `reward`). */
  readonly perTurn: readonly number[];
  /** Index of each turn's last generated token. */
  readonly turnEnds: readonly number[];
  readonly end: EndReason;
  readonly oldLogprobs: Float32Array;
  readonly refLogprobs?: Float32Array;
  /** V(h_k) per position, for GAE. */
  readonly values?: Float32Array;
}

export interface AdvantageResult {
  readonly advantages: Float32Array[];
  readonly returns?: Float32Array[];
  /** Groups whose advantages are not all zero (the rest teach nothing). */
  readonly effectiveGroups: number;
  readonly groups: number;
  /** Mean KL to the reference over target tokens, when KL is placed in the reward. */
  readonly rewardKl?: number;
}

function klPenalties(plan: Plan, t: ScoredTrajectory, mask: Uint8Array): Float64Array {
  const out = new Float64Array(mask.length);
  const kl = plan.algorithm.kl;
  const ref = t.refLogprobs;
  if (!ref || kl.coef === 0 || kl.placement === "loss") return out;
  const estimate = klEstimators.get(kl.estimator);
  for (let k = 0; k < mask.length; k++) if (mask[k]) out[k] = kl.coef * estimate(at(ref, k) - at(t.oldLogprobs, k));
  return out;
}

export function computeAdvantages(plan: Plan, batch: readonly ScoredTrajectory[]): AdvantageResult {
  const a = plan.algorithm.advantage;
  const masks = batch.map((t) => lossMask(t.roles, "generated"));
  const penalties = batch.map((t, i) => klPenalties(plan, t, at(masks, i)));
  let klSum = 0;
  let klTokens = 0;
  penalties.forEach((p, i) => {
    const mask = at(masks, i);
    p.forEach((x, k) => {
      if (mask[k]) {
        klSum += x;
        klTokens++;
      }
    });
  });
  const rewardKl =
    plan.algorithm.kl.placement !== "loss" && plan.algorithm.kl.coef > 0
      ? klTokens
        ? klSum / klTokens / plan.algorithm.kl.coef
        : 0
      : undefined;

  let perToken: Float32Array[];
  let returns: Float32Array[] | undefined;
  const groupKeys = [...new Set(batch.map((t) => t.group))];
  let effectiveGroups = 0;

  if (a.estimator === "group") {
    const members = groupKeys.map((g) => batch.map((t, i) => (t.group === g ? i : -1)).filter((i) => i >= 0));
    const rewards = members.map((idx) =>
      idx.map((i) => at(batch, i).reward - at(penalties, i).reduce((s, x) => s + x, 0)),
    );
    const adv = groupAdvantages(rewards, { baseline: a.baseline, normalize: a.normalize });
    const perSeq = new Array<number>(batch.length).fill(0);
    members.forEach((idx, g) => {
      const groupAdv = at(adv, g);
      idx.forEach((i, j) => (perSeq[i] = at(groupAdv, j)));
      if (groupAdv.some((x) => x !== 0)) effectiveGroups++;
    });
    const normalized = a.task_norm
      ? taskNormalize(
          perSeq,
          batch.map((t) => t.env),
          masks.map((m) => m.reduce((s, x) => s + x, 0)),
        )
      : perSeq;
    perToken = masks.map((mask, i) => Float32Array.from(mask, (m) => (m ? at(normalized, i) : 0)));
  } else {
    const rets: Float32Array[] = [];
    returns = rets;
    perToken = batch.map((t, i) => {
      if (!t.values) throw new Error("GAE needs the critic's values of every trajectory");
      const tokenMask = at(masks, i);
      const penalty = at(penalties, i);
      const rewards = new Array<number>(t.roles.length).fill(0);
      t.turnEnds.forEach((k, turn) => {
        const credited = creditedToken(tokenMask, k);
        if (credited >= 0) rewards[credited] = (rewards[credited] ?? 0) + (t.perTurn[turn] ?? 0);
      });
      for (let k = 0; k < rewards.length; k++) rewards[k] = at(rewards, k) - at(penalty, k);
      const mask = Array.from(tokenMask);
      if (!mask.some((m) => m === 1)) {
        rets.push(new Float32Array(t.roles.length));
        return new Float32Array(t.roles.length);
      }
      const truncated = t.end === "truncated";
      const r = maskedGae({
        rewards,
        values: Array.from(t.values),
        mask,
        gamma: a.gamma,
        lambda: a.lambda,
        end: truncated ? "truncated" : "terminated",
        ...(truncated ? { bootstrapValue: last(t.values) } : {}),
      });
      rets.push(Float32Array.from(r.returns));
      return Float32Array.from(r.advantages);
    });
    effectiveGroups = groupKeys.length;
    if (a.normalize === "std") perToken = whiten(perToken, masks);
    if (a.task_norm)
      perToken = taskNormalizeTokens(
        perToken,
        masks,
        batch.map((t) => t.env),
      );
  }
  return {
    advantages: perToken,
    ...(returns ? { returns } : {}),
    effectiveGroups,
    groups: groupKeys.length,
    ...(rewardKl !== undefined ? { rewardKl } : {}),
  };
}

/**
 * Where the reward of a turn ending at token `k` is placed for GAE: its own last token when the
 * policy generated it; for a cross-policy pool turn (not an action of the policy), the last
 * policy-generated token before it, since from the policy's side a pool turn is part of the
 * environment's answer to that action. -1 when the policy acted nowhere before (the reward
 * reaches no action of it).
 */
function creditedToken(mask: Uint8Array, k: number): number {
  for (let j = Math.min(k, mask.length - 1); j >= 0; j--) if (mask[j]) return j;
  return -1;
}

/** Batch whitening of token advantages over target tokens (population std). */
function whiten(adv: Float32Array[], masks: Uint8Array[]): Float32Array[] {
  let n = 0;
  let sum = 0;
  adv.forEach((row, i) => {
    const mask = at(masks, i);
    row.forEach((x, k) => mask[k] && (n++, (sum += x)));
  });
  if (n === 0) return adv;
  const mu = sum / n;
  let v = 0;
  adv.forEach((row, i) => {
    const mask = at(masks, i);
    row.forEach((x, k) => mask[k] && (v += (x - mu) ** 2));
  });
  const sd = Math.sqrt(v / n);
  return adv.map((row, i) => {
    const mask = at(masks, i);
    return row.map((x, k) => (mask[k] ? (x - mu) / (sd + STD_EPS) : 0));
  });
}

function taskNormalizeTokens(adv: Float32Array[], masks: Uint8Array[], envs: string[]): Float32Array[] {
  const flat: number[] = [];
  const tasks: string[] = [];
  adv.forEach((row, i) => {
    const mask = at(masks, i);
    const env = at(envs, i);
    row.forEach((x, k) => mask[k] && (flat.push(x), tasks.push(env)));
  });
  const normalized = taskNormalize(flat, tasks);
  let j = 0;
  return adv.map((row, i) => {
    const mask = at(masks, i);
    return row.map((_, k) => (mask[k] ? at(normalized, j++) : 0));
  });
}

/** One episode of step-wise samples (history: rerender): its outcome and each model call's scored sequence with its turn. */
export interface StepwiseEpisode {
  readonly group: string;
  readonly env: string;
  readonly reward: number;
  readonly perTurn: readonly number[];
  readonly end: EndReason;
  readonly steps: readonly { readonly turn: number; readonly scored: ScoredTrajectory }[];
}

/**
 * Advantages of step-wise samples. Each episode is scored once, as the trajectory of its calls'
 * generated tokens in order (after one leading context token, which is never a target): group
 * baselines count episodes, not calls, and GAE runs across the turns with each call's own values.
 * The result is broadcast back to each call's generated tokens; the arrays follow the steps of
 * every episode in order.
 */
export function computeStepwiseAdvantages(plan: Plan, episodes: readonly StepwiseEpisode[]): AdvantageResult {
  const views = episodes.map(episodeView);
  const result = computeAdvantages(
    plan,
    views.map((v) => v.trajectory),
  );
  const scatter = (perView: readonly Float32Array[]) =>
    views.flatMap((v, i) => {
      const source = at(perView, i);
      return v.positions.map((positions, s) => {
        const out = new Float32Array(at(at(episodes, i).steps, s).scored.roles.length);
        positions.forEach((k, j) => (out[k] = at(source, at(v.offsets, s) + j)));
        return out;
      });
    });
  return {
    ...result,
    advantages: scatter(result.advantages),
    ...(result.returns ? { returns: scatter(result.returns) } : {}),
  };
}

interface EpisodeView {
  readonly trajectory: ScoredTrajectory;
  /** Per step: the positions of its generated tokens in its own sequence. */
  readonly positions: readonly number[][];
  /** Per step: where its generated tokens start in the view. */
  readonly offsets: readonly number[];
}

function episodeView(e: StepwiseEpisode): EpisodeView {
  const roles: number[] = [Role.prompt];
  const oldLogprobs: number[] = [0];
  const refLogprobs: number[] = [0];
  const values: number[] = [0];
  const positions: number[][] = [];
  const offsets: number[] = [];
  const ends = new Map<number, number>();
  const withRef = e.steps.length > 0 && e.steps.every((s) => s.scored.refLogprobs);
  const withValues = e.steps.length > 0 && e.steps.every((s) => s.scored.values);
  for (const { turn, scored } of e.steps) {
    const mask = lossMask(scored.roles, "generated");
    const mine = [...mask.keys()].filter((k) => mask[k] === 1);
    offsets.push(roles.length);
    positions.push(mine);
    for (const k of mine) {
      roles.push(Role.generated);
      oldLogprobs.push(at(scored.oldLogprobs, k));
      refLogprobs.push(scored.refLogprobs ? at(scored.refLogprobs, k) : 0);
      values.push(scored.values ? at(scored.values, k) : 0);
    }
    ends.set(turn, roles.length - 1);
  }
  // A turn without a call of its own (a pool turn) ends at the last generated token before it.
  let lastEnd = 0;
  const turnEnds = e.perTurn.map((_, t) => (lastEnd = ends.get(t) ?? lastEnd));
  return {
    trajectory: {
      group: e.group,
      env: e.env,
      roles: Uint8Array.from(roles),
      reward: e.reward,
      perTurn: e.perTurn,
      turnEnds,
      end: e.end,
      oldLogprobs: Float32Array.from(oldLogprobs),
      ...(withRef ? { refLogprobs: Float32Array.from(refLogprobs) } : {}),
      ...(withValues ? { values: Float32Array.from(values) } : {}),
    },
    positions,
    offsets,
  };
}
