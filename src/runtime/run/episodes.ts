// Playing episodes, for the rollout and evaluate phases: one isolated env instance per episode,
// the plan's harness around it, the episode's rewards and whether it meets eval.success.
import { at } from "../../contracts/checked.js";
import { poolChoice } from "../../episode/cross-policy.js";
import type { AgentTranscript } from "../../episode/agent-transcript.js";
import { RecordingEnv, signalSnapshot, type EnvTranscript } from "../../episode/env-transcript.js";
import { runEpisode, toolsFor, type Episode } from "../../episode/harness.js";
import { episodeRewards, holds, SignalError, type SignalSource } from "../../episode/rewards.js";
import type { Split } from "../../plan/splits.js";
import { playAgentEpisode, type AgentCalls } from "./agent-episode.js";
import { envKindOf, planEnv, type RunContext } from "./context.js";

export interface Task {
  readonly env: string;
  readonly id: number;
}

export interface EpisodeRewards {
  readonly terms: Record<string, number>;
  readonly perTurn: number[];
  readonly total: number;
}

export interface Played {
  readonly task: Task;
  readonly group: number;
  readonly sample: number;
  readonly episode: Episode;
  readonly rewards: EpisodeRewards;
  readonly success: boolean;
  /** An agent env's episode: what the gateway served it. */
  readonly agent?: AgentCalls;
  /** Every other env's episode: its exchanges with the env, for `arl replay` (recorded in the buffer). */
  readonly transcript?: EnvTranscript;
  /** An agent env's episode: its program's model calls and outcome, for `arl replay` (recorded in the buffer). */
  readonly program?: AgentTranscript;
}

/** Where an episode is played: its task, group and sample within the batch, split and iteration. */
export interface EpisodeSlot {
  readonly task: Task;
  readonly group: number;
  readonly sample: number;
  readonly split: Split;
  /** The iteration it belongs to: -1 for the base evaluation, 0 for the one before training. */
  readonly iteration: number;
  /** Set for evaluation episodes (eval.temperature); training episodes sample at the policy's own. */
  readonly temperature?: number;
}

/**
 * One episode. Training episodes (no eval temperature) sample from the rollout policy, with the
 * pool's turns when cross-policy is on; eval episodes from the current policy alone.
 */
export async function playEpisode(ctx: RunContext, slot: EpisodeSlot): Promise<Played> {
  const { plan } = ctx;
  const { task, group, sample, temperature } = slot;
  const envPlan = planEnv(plan, task.env);
  const episodeSeed = ctx.streams.episodeSeed(slot.split, slot.iteration, task.env, task.id, group, sample);
  // An agent program runs its own loop against the run's gateway.
  if (envPlan.kind === "agent") {
    const { episode, calls, program } = await playAgentEpisode(ctx, slot, envPlan, episodeSeed);
    return { ...scored(plan, task, group, sample, episode), agent: calls, program };
  }
  const kind = envKindOf(ctx.envs, envPlan);
  const env = new RecordingEnv(await kind.create(envPlan, task.id, episodeSeed), episodeSeed);
  const training = temperature === undefined;
  const cross = plan.rollout.cross_policy;
  const generators = training && cross ? ctx.pool?.generators : undefined;
  const turnGenerator =
    cross && generators
      ? (turn: number) => {
          const choice = poolChoice(episodeSeed, turn, cross.probability, generators.length);
          return choice === undefined ? undefined : generators[choice];
        }
      : undefined;
  const episode = await runEpisode({
    plan,
    envName: task.env,
    env,
    policy: training ? ctx.rolloutPolicy : ctx.policy,
    tools: toolsFor(plan, task.env),
    validator: ctx.validator,
    stopIds: ctx.stopIds,
    template: ctx.template,
    seed: (turn) => ctx.streams.turnSeed(episodeSeed, turn),
    ...(temperature !== undefined ? { temperature } : {}),
    ...(turnGenerator ? { turnGenerator } : {}),
  });
  const transcript: EnvTranscript = {
    ...env.end(),
    states: episode.states.map(signalSnapshot),
    final: signalSnapshot(episode.final),
  };
  return { ...scored(plan, task, group, sample, episode), transcript };
}

/**
 * An episode's rewards and whether it meets eval.success, from the signals it ended with; or the
 * message of a signal they read that was not reported as declared (the episode is then an env
 * error). `arl replay` scores a replayed episode so too.
 */
export function scoreSignals(
  plan: RunContext["plan"],
  states: readonly SignalSource[],
  final: SignalSource,
  end: Episode["end"],
): { readonly rewards: EpisodeRewards; readonly success: boolean } | { readonly signalError: string } {
  try {
    const rewards = episodeRewards(
      plan.reward.terms,
      states,
      final,
      end !== "truncated",
      plan.algorithm.advantage.gamma,
    );
    // The plan's success criterion (eval.success) on the episode's final signals.
    return { rewards, success: holds(plan.eval.success, final) };
  } catch (error) {
    if (!(error instanceof SignalError)) throw error;
    return { signalError: error.message };
  }
}

/**
 * An episode with its rewards and whether it meets eval.success; an env error gets none. A signal
 * the env owed the rewards or eval.success and did not give (or gave with another type) makes the
 * episode an env error, as any other fault of the env.
 */
function scored(plan: RunContext["plan"], task: Task, group: number, sample: number, episode: Episode): Played {
  if (episode.end !== "env_error") {
    const score = scoreSignals(plan, episode.states, episode.final, episode.end);
    if (!("signalError" in score)) return { task, group, sample, episode, ...score };
    episode = { ...episode, end: "env_error", error: `env '${task.env}' ${score.signalError}` };
  }
  const rewards = {
    terms: Object.fromEntries(Object.keys(plan.reward.terms).map((t) => [t, 0])),
    perTurn: episode.turnEnds.map(() => 0),
    total: 0,
  };
  return { task, group, sample, episode, rewards, success: false };
}

/**
 * Whether a batch trains step-wise, one sequence per sample rather than per episode: under
 * history rerender, or when any episode has samples with a step (an agent program that rewrote
 * its history; docs/semantics.md §10). An episode of one sample is then one step.
 */
export function stepwiseBatch(plan: RunContext["plan"], played: readonly Played[]): boolean {
  return (
    plan.harness.context.history === "rerender" ||
    played.some((p) => p.episode.samples.some((s) => s.step !== undefined))
  );
}

/** Runs `items` through `worker` with at most `limit` at once, keeping their order; after a failure no new item starts. */
export async function mapConcurrently<T, R>(
  items: readonly T[],
  limit: number,
  worker: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  let failed = false;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length && !failed) {
      const i = next++;
      try {
        out[i] = await worker(at(items, i), i);
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  });
  await Promise.all(lanes);
  return out;
}

/** Episodes by their group index, in order (one pass, where a filter per group is quadratic). */
export function groupBy(played: readonly Played[]): Map<number, Played[]> {
  const out = new Map<number, Played[]>();
  for (const p of played) {
    const group = out.get(p.group);
    if (group) group.push(p);
    else out.set(p.group, [p]);
  }
  return out;
}
