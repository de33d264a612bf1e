// Score: turn an iteration's accepted groups into what the update trains on. Drop (or mark for
// correction) groups older than rollout.async.max_policy_lag, read reference log-probs, values and recomputed behaviour
// log-probs where the plan needs them, compute advantages, mask off-policy sequences, and measure
// (and with mask.tis correct) the gap between the sampler's log-probs and the trainer's. A
// sequence is an episode, or in a step-wise batch one sample of it (history: rerender, or an
// agent program that rewrote its history; episodes.ts stepwiseBatch).
import { at } from "../../contracts/checked.js";
import { filterByLag, type LagFilterResult } from "../../rl/lag.js";
import { ragged, row } from "../../contracts/trainer-protocol.js";
import {
  computeAdvantages,
  computeStepwiseAdvantages,
  type AdvantageResult,
  type ScoredTrajectory,
  type StepwiseEpisode,
} from "../advantage.js";
import type { Sample } from "../../episode/harness.js";
import { takesOnPolicyStep } from "../update/on-policy.js";
import {
  batchMismatch,
  measuresMismatch,
  recomputesOldLogprobs,
  type BatchMismatch,
} from "../update/mismatch-correction.js";
import { offPolicyMasked } from "../update/off-policy-mask.js";
import { lossMask } from "../update/train-batches.js";
import { RunError, type RunContext } from "./context.js";
import { stepwiseBatch, type Played } from "./episodes.js";

export interface ScoredBatch {
  /** The episodes the update trains on, group after group. */
  readonly batch: Played[];
  /** The trained sequences: each episode's own, or in a step-wise batch each of its samples, in episode order. */
  readonly ids: Int32Array[];
  readonly scored: ScoredTrajectory[];
  readonly advantages: AdvantageResult;
  /** Per sequence: masked as off-policy (it keeps its place in the denominators, without a policy-gradient term). */
  readonly masked: boolean[];
  /** Per sequence: the episode it belongs to, and the log-probs reported when it was sampled (the preflight compares them). */
  readonly owners: readonly Played[];
  readonly sampledLogprobs: readonly Float32Array[];
  readonly lagged: LagFilterResult<Played>;
  /** Groups past max_policy_lag kept and corrected (rollout.async.past_max_lag correct): their samples. */
  readonly lagCorrected: number;
  /** The sampler/trainer gap (docs/semantics.md §12) and, with mask.tis, each sequence's importance weights; absent when the plan measures none. */
  readonly mismatch?: BatchMismatch;
}

/** What each sequence of the batch trains with, token by token: its advantages, or 0 throughout when masked as off-policy. */
export function sequenceAdvantages(scored: ScoredBatch): Float32Array[] {
  return scored.scored.map((s, i) =>
    scored.masked[i] ? new Float32Array(s.roles.length) : at(scored.advantages.advantages, i),
  );
}

/** The same by the trained sequence's ids (the buffer records them with the episodes). */
export function advantagesByIds(scored: ScoredBatch): Map<Int32Array, Float32Array> {
  const advantages = sequenceAdvantages(scored);
  return new Map(scored.ids.map((ids, i) => [ids, at(advantages, i)]));
}

/**
 * Scores the accepted groups of `iteration` for an update that starts at policy version
 * `version`. Trainer requests, in this order and only where needed: reference log-probs,
 * values, recomputed behaviour log-probs, current log-probs.
 */
export async function scoreBatch(
  ctx: RunContext,
  iteration: number,
  accepted: readonly Played[][],
  version: number,
): Promise<ScoredBatch> {
  const { plan, trainer } = ctx;
  const asyncRollout = plan.rollout.async;
  // Policy lag: whole groups older than max_policy_lag versions are dropped and counted, or under
  // past_max_lag correct kept, with their ratio taken around the weights that start this update
  // and each token weighted by min(pi_start / mu_t, cap) to the version mu_t that sampled it
  // (decoupled PPO; docs/semantics.md §7): the TIS weights below, with logp_old the start's.
  const correcting = asyncRollout?.past_max_lag === "correct";
  const filtered = filterByLag(accepted, (p) => p.episode.versions, version, asyncRollout?.max_policy_lag ?? null);
  const lagged = correcting
    ? { ...filtered, kept: accepted.map((g) => [...g]), droppedSamples: 0, droppedGroups: 0 }
    : filtered;
  const past = new Set(correcting ? filtered.past.flat() : []);
  if (lagged.kept.length === 0 && accepted.length > 0 && !correcting) {
    throw new RunError(
      `iteration ${iteration}: every sample is up to ${lagged.maxLag} policy versions old, above rollout.async.max_policy_lag ${asyncRollout?.max_policy_lag}; ` +
        "stopping rather than updating on nothing (raise max_policy_lag, or take fewer optimizer steps per update)",
    );
  }

  // Scores, reference log-probs and values where the algorithm needs them.
  const batch = lagged.kept.flat();
  const stepwise = stepwiseBatch(plan, batch);
  const owned = batch.flatMap((p) =>
    (stepwise ? p.episode.samples : [p.episode]).map((sample: Sample) => ({ p, sample })),
  );
  const needRef = plan.algorithm.kl.coef > 0 && plan.algorithm.kl.reference !== null;
  const idsBatch = ragged(
    owned.map((o) => o.sample.ids),
    Int32Array,
  );
  const sampling = {
    temperature: plan.policy.sampling.temperature,
    top_p: plan.mask.keep_sampling_mask ? plan.policy.sampling.top_p : 1,
    top_k: plan.mask.keep_sampling_mask ? plan.policy.sampling.top_k : 0,
  };
  // Old and reference log-probs are read only where the update trains (docs/protocol.md, logprobs mask).
  const masks = owned.map((o) => lossMask(o.sample.roles, plan.mask.loss));
  const lossMasks = ragged(masks, Uint8Array);
  const any = owned.length > 0;
  const refLogprobs =
    needRef && any
      ? (await trainer.request("logprobs", { ids: idsBatch, policy: "reference", sampling, mask: lossMasks })).logprobs
      : undefined;
  const values =
    plan.algorithm.advantage.estimator === "gae" && any
      ? (await trainer.request("values", { ids: idsBatch })).values
      : undefined;
  // The behaviour log-probs are recomputed by the weights that sampled, under the distribution
  // the update will use: the behaviour snapshot under asynchronous rollout (it still holds them:
  // the next snapshot is taken after this phase), so that pi/mu keeps the staleness instead of
  // starting at 1. Needed without the keep-sampling mask (the update's distribution is then the
  // full, temperature-only one) and wherever the sampled log-probs are an engine's or mask.tis
  // corrects them (docs/semantics.md §12: the trainer's own numerics are the ratio's denominator).
  // A single on-policy step takes them from its own forward pass instead (on-policy-update.ts).
  // Under in_flight_updates the snapshot has moved on since some tokens were sampled: each token's
  // sampled log-prob is its own version's (the plan refuses what would need a recompute then).
  const recompute =
    recomputesOldLogprobs(plan) &&
    !takesOnPolicyStep(plan, trainer.handshakeResult) &&
    !asyncRollout?.in_flight_updates;
  const recomputed =
    recompute && any
      ? (
          await trainer.request("logprobs", {
            ids: idsBatch,
            policy: asyncRollout ? "behaviour" : "current",
            sampling,
            mask: lossMasks,
          })
        ).logprobs
      : undefined;
  // The weights that take the update's first step: the off-policy mask's measure, and the
  // proximal policy of the groups corrected past max_policy_lag.
  const threshold = plan.mask.off_policy_sequence_threshold;
  const correctedAny = owned.some((o) => past.has(o.p));
  const current =
    (threshold !== null || correctedAny) && any
      ? (await trainer.request("logprobs", { ids: idsBatch, policy: "current", sampling, mask: lossMasks })).logprobs
      : undefined;
  const scored: ScoredTrajectory[] = owned.map(({ p, sample }, i) => ({
    group: `${iteration}:${p.group}`,
    env: p.task.env,
    roles: sample.roles,
    reward: p.rewards.total,
    perTurn: p.rewards.perTurn,
    turnEnds: sample.turnEnds,
    end: p.episode.end,
    oldLogprobs:
      current && past.has(p) ? row(current, i).slice() : recomputed ? row(recomputed, i).slice() : sample.logprobs,
    ...(refLogprobs ? { refLogprobs: row(refLogprobs, i).slice() } : {}),
    ...(values ? { values: row(values, i).slice() } : {}),
  }));
  // Step-wise samples take their episode's advantages (docs/semantics.md §10).
  const advantages = stepwise
    ? computeStepwiseAdvantages(plan, stepwiseEpisodes(iteration, batch, owned, scored))
    : computeAdvantages(plan, scored);
  // Off-policy sequence masking (mask.off_policy_sequence_threshold): measured against the
  // weights that take the update's first step; a masked sequence keeps its place in the
  // reduction's denominators but gets no policy-gradient term (advantage 0).
  let masked = owned.map(() => false);
  if (threshold !== null && current) {
    masked = offPolicyMasked(
      scored.map((s, i) => ({
        mask: at(masks, i),
        advantages: at(advantages.advantages, i),
        oldLogprobs: s.oldLogprobs,
        currentLogprobs: row(current, i),
      })),
      threshold,
    );
  }
  const sampledLogprobs = owned.map((o) => o.sample.logprobs);
  const mismatch = measuresMismatch(plan)
    ? batchMismatch(
        plan,
        masks,
        scored.map((s) => s.roles),
        scored.map((s) => s.oldLogprobs),
        sampledLogprobs,
      )
    : undefined;
  return {
    batch,
    ids: owned.map((o) => o.sample.ids),
    scored,
    advantages,
    masked,
    lagged,
    lagCorrected: past.size,
    owners: owned.map((o) => o.p),
    sampledLogprobs,
    ...(mismatch ? { mismatch } : {}),
  };
}

/** The scored calls of each episode, with the turn each call is, for computeStepwiseAdvantages. */
function stepwiseEpisodes(
  iteration: number,
  batch: readonly Played[],
  owned: readonly { p: Played; sample: Sample }[],
  scored: readonly ScoredTrajectory[],
): StepwiseEpisode[] {
  const steps = new Map<Played, StepwiseEpisode["steps"][number][]>(batch.map((p) => [p, []]));
  owned.forEach((o, i) => steps.get(o.p)?.push({ turn: o.sample.step ?? 0, scored: at(scored, i) }));
  return batch.map((p) => ({
    group: `${iteration}:${p.group}`,
    env: p.task.env,
    reward: p.rewards.total,
    perTurn: p.rewards.perTurn,
    end: p.episode.end,
    steps: steps.get(p) ?? [],
  }));
}
