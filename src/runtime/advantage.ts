// Advantages for a batch of scored trajectories (docs/semantics.md §3): group-relative outcome
// advantages applied to every target token, or token-level GAE with the critic's values; then
// the optional AgentRL task normalisation over target tokens.
import type { Plan } from "../plan/schema.js";
import { groupAdvantages, taskNormalize } from "../rl/advantages.js";
import { maskedGae } from "../rl/gae.js";
import { klEstimators } from "../rl/kl.js";
import { at, last } from "../contracts/checked.js";
import { STD_EPS } from "../rl/stats.js";
import type { EndReason } from "./buffer.js";
import { lossMask } from "./update.js";

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
  const rewardKl = plan.algorithm.kl.placement !== "loss" && plan.algorithm.kl.coef > 0 ? (klTokens ? klSum / klTokens / plan.algorithm.kl.coef : 0) : undefined;

  let perToken: Float32Array[];
  let returns: Float32Array[] | undefined;
  const groupKeys = [...new Set(batch.map((t) => t.group))];
  let effectiveGroups = 0;

  if (a.estimator === "group") {
    const members = groupKeys.map((g) => batch.map((t, i) => (t.group === g ? i : -1)).filter((i) => i >= 0));
    const rewards = members.map((idx) => idx.map((i) => at(batch, i).reward - at(penalties, i).reduce((s, x) => s + x, 0)));
    const adv = groupAdvantages(rewards, { baseline: a.baseline, normalize: a.normalize });
    const perSeq = new Array<number>(batch.length).fill(0);
    members.forEach((idx, g) => {
      const groupAdv = at(adv, g);
      idx.forEach((i, j) => (perSeq[i] = at(groupAdv, j)));
      if (groupAdv.some((x) => x !== 0)) effectiveGroups++;
    });
    const normalized = a.task_norm
      ? taskNormalize(perSeq, batch.map((t) => t.env), masks.map((m) => m.reduce((s, x) => s + x, 0)))
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
    if (a.task_norm) perToken = taskNormalizeTokens(perToken, masks, batch.map((t) => t.env));
  }
  return { advantages: perToken, ...(returns ? { returns } : {}), effectiveGroups, groups: groupKeys.length, ...(rewardKl !== undefined ? { rewardKl } : {}) };
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
