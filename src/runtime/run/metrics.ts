// The metrics line of one iteration (metrics.jsonl), from what its phases returned. The key
// order is the line's byte layout: reports and committed checksums read these lines as written.
import type { Plan } from "../../plan/schema.js";
import type { EngineMetrics } from "../../inference/engine/run-engine.js";
import type { ColdStartTime, SftSummary } from "../cold-start-state.js";
import type { EvalSummary } from "./context.js";
import type { Played } from "./episodes.js";
import type { Rollout } from "./rollout.js";
import type { ScoredBatch } from "./score.js";
import type { PolicyUpdate } from "./update.js";
import type { WatchdogWarning } from "./watchdog.js";

/** Wall-clock marks of one iteration (Date.now() milliseconds). */
export interface IterationTimes {
  /** The iteration began (after the evaluation before training, which is outside its time). */
  readonly begun: number;
  /** Its rollout was in hand (collected now, or awaited from the pipeline). */
  readonly rolledOut: number;
  readonly scored: number;
  readonly updated: number;
  /** Seconds of the evaluation before training (iteration 1 with eval.before_training), which ran before `begun`. */
  readonly evalBeforeSeconds?: number;
  /** Seconds between `rolledOut` and `scored` spent committing the iteration before (its background checkpoint awaited). */
  readonly commitBeforeSeconds?: number;
}

/** What the phases of one iteration produced, up to its checkpoint. */
export interface IterationOutcome {
  readonly iteration: number;
  readonly rollout: Rollout;
  readonly scored: ScoredBatch;
  readonly update: PolicyUpdate;
  /** eval.base's summary (before the cold start), reported with iteration 1. */
  readonly evalBase?: EvalSummary;
  /** The cold start's summary and losses, reported with iteration 1. */
  readonly sft?: SftSummary;
  /** The wall time of eval.base and the cold start, reported with iteration 1. */
  readonly coldStartTime?: ColdStartTime;
  /** eval.before_training's summary (the starting policy), reported with iteration 1. */
  readonly evalBefore?: EvalSummary;
  /** This iteration's own evaluation, when it had one. */
  readonly evaluation?: EvalSummary;
  /** The inference servers' counts since the previous line (engine vllm or sglang). */
  readonly engine?: EngineMetrics;
  readonly times: IterationTimes;
}

export interface IterationMetrics {
  readonly iteration: number;
  readonly success: number;
  readonly reward: number;
  readonly reward_terms: Record<string, number>;
  readonly effective_group_ratio: number;
  /** Of the groups the update saw, the fraction whose rewards were not all equal (whatever the baseline). */
  readonly varied_group_ratio: number;
  readonly acceptance_rate: number;
  readonly rejected_groups: number;
  readonly rejected_tokens: number;
  readonly generated_length: number;
  readonly entropy: number;
  readonly ratio_mean: number;
  readonly ratio_min: number;
  readonly ratio_max: number;
  readonly clip_fraction: number;
  readonly kl: number;
  readonly grad_norm: number;
  readonly loss: number;
  /** The policy-gradient term of the loss alone (train_step's policy_loss; the loss adds KL and value terms). */
  readonly policy_loss: number;
  readonly env_errors: number;
  readonly lag_drops: number;
  readonly off_policy_masked: number;
  /** Sampler/trainer log-prob gap over the generated targets (docs/semantics.md §12); only where the plan measures it (an engine samples, or mask.tis). */
  readonly mismatch?: {
    readonly mean_abs: number;
    readonly max_abs: number;
    readonly frac_over: number;
    readonly tokens: number;
  };
  /** mask.tis: the importance weights' mean over the targets and the fraction the cap bound. */
  readonly tis?: { readonly mean_weight: number; readonly frac_capped: number };
  readonly policy_lag: number;
  /** Asynchronous rollout: the batch's mean lag (versions), and the samples kept past max_policy_lag to be corrected. */
  readonly policy_lag_mean?: number;
  readonly lag_corrected?: number;
  readonly cross_policy_turns: number;
  readonly tokens: number;
  readonly tool_calls: number;
  readonly invalid_calls: number;
  readonly end_reasons: Record<string, number>;
  /** Agent envs only (docs/semantics.md §10): model calls the gateway served, calls that rewrote the served history, agent episodes that ended in an env error. */
  readonly gateway_calls?: number;
  readonly gateway_rewrites?: number;
  readonly agent_errors?: number;
  /** Engine vllm or sglang only (docs/engines.md, "Metrics"): the servers' requests, retries, failures, sync time and served version. */
  readonly engine?: EngineMetrics;
  readonly policy_version: number;
  readonly eval_base?: EvalSummary;
  readonly sft?: SftSummary;
  readonly eval_before_training?: EvalSummary;
  readonly eval?: EvalSummary;
  /**
   * rollout_s: the rollout's own wall time; wait_s: how long this iteration waited for it (less
   * than rollout_s when it overlapped the previous update). Iteration 1 also carries the phases
   * before it (base_eval_s, sft_s, eval_before_s), counted in its total_s: the run's wall time
   * is the sum of total_s over its lines. commit_before_s: how long this iteration waited, after
   * its rollout, for the iteration before to be committed (its checkpoint, written in the
   * background during this rollout, made durable); present when it waited; not in reward_s.
   */
  readonly time: {
    readonly rollout_s: number;
    readonly wait_s: number;
    readonly reward_s: number;
    readonly update_s: number;
    readonly base_eval_s?: number;
    readonly sft_s?: number;
    readonly eval_before_s?: number;
    readonly commit_before_s?: number;
    readonly total_s: number;
  };
  /** The watchdog's warnings about this iteration (run/watchdog.ts); absent when it had none. */
  readonly warnings?: readonly WatchdogWarning[];
  /** Tracker failures so far (run/tracking.ts); present when plan.tracking enables a tracker. */
  readonly tracker_errors?: number;
}

/** The gateway's counts, in plans with agent envs (other plans' lines keep their layout). */
function agentMetrics(
  plan: Plan,
  played: readonly Played[],
): Pick<IterationMetrics, "gateway_calls" | "gateway_rewrites" | "agent_errors"> {
  if (!Object.values(plan.envs).some((e) => e.kind === "agent")) return {};
  const agents = played.filter((p) => p.agent !== undefined);
  return {
    gateway_calls: agents.reduce((s, p) => s + (p.agent?.calls ?? 0), 0),
    gateway_rewrites: agents.reduce((s, p) => s + (p.agent?.rewrites ?? 0), 0),
    agent_errors: agents.filter((p) => p.episode.end === "env_error").length,
  };
}

/** The mismatch keys, in plans that measure it (other plans' lines keep their layout). */
function mismatchMetrics(scored: ScoredBatch): Pick<IterationMetrics, "mismatch" | "tis"> {
  const m = scored.mismatch;
  if (!m) return {};
  const { meanAbs, maxAbs, fracOver, tokens } = m.stats;
  return {
    mismatch: { mean_abs: meanAbs, max_abs: maxAbs, frac_over: fracOver, tokens },
    ...(m.tis ? { tis: { mean_weight: m.tis.stats.meanWeight, frac_capped: m.tis.stats.fracCapped } } : {}),
  };
}

const mean = (xs: number[]) => (xs.length ? xs.reduce((s, x) => s + x, 0) / xs.length : 0);

/** The metrics of `outcome`, whose checkpoint was saved at policy version `savedVersion`; total_s runs to now. */
export function iterationMetrics(plan: Plan, outcome: IterationOutcome, savedVersion: number): IterationMetrics {
  const { iteration, rollout, scored, update, times } = outcome;
  const { allPlayed, rejectedGroups, playedGroups } = rollout;
  const { advantages: adv, lagged, masked } = scored;
  const { stepStats } = update;
  const last = stepStats[stepStats.length - 1] ?? {};
  const played = allPlayed.filter((p) => p.episode.end !== "env_error");
  const cold = outcome.coldStartTime;
  return {
    iteration,
    success: mean(played.map((p) => (p.success ? 1 : 0))),
    reward: mean(played.map((p) => p.rewards.total)),
    reward_terms: Object.fromEntries(
      Object.keys(plan.reward.terms).map((t) => [t, mean(played.map((p) => p.rewards.terms[t] ?? 0))]),
    ),
    effective_group_ratio: adv.groups ? adv.effectiveGroups / adv.groups : 0,
    varied_group_ratio: lagged.kept.length
      ? lagged.kept.filter((g) => new Set(g.map((p) => p.rewards.total)).size > 1).length / lagged.kept.length
      : 0,
    acceptance_rate: playedGroups ? (playedGroups - rejectedGroups) / playedGroups : 0,
    rejected_groups: rejectedGroups,
    rejected_tokens: rollout.rejectedTokens,
    generated_length: mean(allPlayed.map((p) => p.episode.episode.tokens)),
    entropy: mean(stepStats.map((s) => s.entropy ?? 0)),
    ratio_mean: mean(stepStats.map((s) => s.ratio_mean ?? 1)),
    ratio_min: Math.min(...stepStats.map((s) => s.ratio_min ?? 1)),
    ratio_max: Math.max(...stepStats.map((s) => s.ratio_max ?? 1)),
    clip_fraction: mean(stepStats.map((s) => s.clip_fraction ?? 0)),
    kl: adv.rewardKl ?? mean(stepStats.map((s) => s.kl ?? 0)),
    grad_norm: mean(stepStats.map((s) => s.grad_norm ?? 0)),
    loss: mean(stepStats.map((s) => s.loss ?? 0)),
    policy_loss: mean(stepStats.map((s) => s.policy_loss ?? 0)),
    env_errors: allPlayed.length - played.length,
    lag_drops: lagged.droppedSamples,
    off_policy_masked: masked.filter(Boolean).length,
    ...mismatchMetrics(scored),
    policy_lag: lagged.maxLag,
    ...(plan.rollout.async ? { policy_lag_mean: lagged.meanLag, lag_corrected: scored.lagCorrected } : {}),
    cross_policy_turns: allPlayed.reduce((s, p) => s + p.episode.generators.filter((g) => g !== "policy").length, 0),
    tokens: allPlayed.reduce((s, p) => s + p.episode.episode.tokens, 0),
    tool_calls: allPlayed.reduce((s, p) => s + p.episode.episode.tool_calls, 0),
    invalid_calls: allPlayed.reduce((s, p) => s + p.episode.episode.invalid_calls, 0),
    end_reasons: Object.fromEntries(
      ["finished", "truncated", "aborted", "env_error"].map((r) => [
        r,
        allPlayed.filter((p) => p.episode.end === r).length,
      ]),
    ),
    ...agentMetrics(plan, allPlayed),
    ...(outcome.engine ? { engine: outcome.engine } : {}),
    policy_version: last.policy_version ?? savedVersion,
    ...(outcome.evalBase ? { eval_base: outcome.evalBase } : {}),
    ...(outcome.sft ? { sft: outcome.sft } : {}),
    ...(outcome.evalBefore ? { eval_before_training: outcome.evalBefore } : {}),
    ...(outcome.evaluation ? { eval: outcome.evaluation } : {}),
    time: {
      rollout_s: rollout.seconds,
      wait_s: (times.rolledOut - times.begun) / 1000,
      reward_s: (times.scored - times.rolledOut) / 1000 - (times.commitBeforeSeconds ?? 0),
      update_s: (times.updated - times.scored) / 1000,
      ...(cold ? { base_eval_s: cold.base_eval_s, sft_s: cold.sft_s } : {}),
      ...(times.evalBeforeSeconds !== undefined ? { eval_before_s: times.evalBeforeSeconds } : {}),
      ...(times.commitBeforeSeconds !== undefined ? { commit_before_s: times.commitBeforeSeconds } : {}),
      total_s:
        (Date.now() - times.begun) / 1000 + (cold ? cold.base_eval_s + cold.sft_s : 0) + (times.evalBeforeSeconds ?? 0),
    },
  };
}
