// Rollout: an iteration's training batch. B tasks from the train split (envs mixed by weight),
// G episodes per task, and under dynamic sampling more rounds in place of the groups whose
// rewards are all equal. Under asynchronous rollout this runs while the previous update does.
import { at, defined, last } from "../../contracts/checked.js";
import { splitTasks } from "../../plan/splits.js";
import { envNames, planEnv, refusal, TrainedOnNothingError, type RunContext } from "./context.js";
import { phaseWatch } from "./progress.js";
import { requireServing } from "./engines.js";
import { groupBy, mapConcurrently, playEpisode, type Played, type Task } from "./episodes.js";

/** The episodes of one iteration's training batch. */
export interface Rollout {
  /** Groups kept for the update (complete, env errors excluded when the plan says so). */
  readonly accepted: Played[][];
  /** Every episode played, rejected groups included (all go to the buffer). */
  readonly allPlayed: Played[];
  readonly rejectedGroups: number;
  readonly rejectedTokens: number;
  readonly playedGroups: number;
  /** Wall time of the rollout itself (it may have overlapped the previous update). */
  readonly seconds: number;
}

/** How many distinct first env errors a stop quotes. */
const QUOTED_ERRORS = 3;

/** The first distinct errors of `played` (env errors), quoted for a message. */
function firstEnvErrors(played: readonly Played[]): string {
  const errors = [...new Set(played.flatMap((p) => (p.episode.end === "env_error" ? [p.episode.error ?? "?"] : [])))];
  const shown = errors
    .slice(0, QUOTED_ERRORS)
    .map((e) => `\n    ${e}`)
    .join("");
  return `${errors.length > QUOTED_ERRORS ? `the first ${QUOTED_ERRORS} of ${errors.length} distinct errors` : errors.length === 1 ? "the error" : "the errors"}:${shown}`;
}

/**
 * The run's first training batch: an env none of whose episodes it could play is broken (a server
 * down, a signal it never reports, a program that cannot start), not unlucky. The run stops before
 * its first update rather than train on nothing, or on the other envs alone (docs/envs.md, "Faults").
 */
function refuseBrokenEnvs(played: readonly Played[]): void {
  const byEnv = new Map<string, Played[]>();
  for (const p of played) byEnv.set(p.task.env, [...(byEnv.get(p.task.env) ?? []), p]);
  const broken = [...byEnv].filter(([, episodes]) => episodes.every((p) => p.episode.end === "env_error"));
  if (broken.length === 0) return;
  const failed = broken.flatMap(([, episodes]) => episodes);
  const message =
    broken.length === byEnv.size
      ? `every episode of the first batch (${played.length}) ended in an env error, so the run stops rather than train on nothing; ${firstEnvErrors(failed)}`
      : `every episode of env${broken.length > 1 ? "s" : ""} ${broken.map(([env, e]) => `'${env}' (${e.length})`).join(", ")} in the first batch ended in an env error, so the run stops rather than train without ${broken.length > 1 ? "them" : "it"}; ${firstEnvErrors(failed)}`;
  throw new TrainedOnNothingError(message);
}

/** Samples B tasks of `iteration` and plays their groups (resampling all-equal groups under dynamic sampling). */
export async function collectRollout(ctx: RunContext, iteration: number): Promise<Rollout> {
  const { plan } = ctx;
  const begun = Date.now();
  // Tasks: B from the train split, envs mixed by weight.
  const random = ctx.streams.tasks(iteration);
  const names = envNames(plan);
  const weights = names.map((n) => planEnv(plan, n).weight);
  const totalWeight = weights.reduce((s, w) => s + w, 0);
  const pickEnv = () => {
    let x = random() * totalWeight;
    for (let i = 0; i < names.length; i++) if ((x -= at(weights, i)) < 0) return at(names, i);
    return last(names);
  };
  const dynamic = plan.algorithm.dynamic_sampling;
  const maxRounds = dynamic ? (dynamic.max_rounds ?? Number.POSITIVE_INFINITY) : 1;
  const accepted: Played[][] = [];
  let rejectedGroups = 0;
  let rejectedTokens = 0;
  let playedGroups = 0;
  const allPlayed: Played[] = [];
  // Each env's training split, computed once (it hashes every task id) rather than per task drawn.
  const trainIds = new Map(names.map((n) => [n, splitTasks(n, planEnv(plan, n), "train")]));
  // Progress within a batch that takes a while.
  const watch = phaseWatch(ctx.log, `iteration ${iteration}/${plan.rollout.iterations}: rollout`, "episodes played");
  try {
    for (let round = 0; round < maxRounds && accepted.length < plan.rollout.tasks_per_batch; round++) {
      const need = plan.rollout.tasks_per_batch - accepted.length;
      const tasks: Task[] = Array.from({ length: need }, () => {
        const env = pickEnv();
        const ids = defined(trainIds.get(env), `the training split of env '${env}'`);
        if (ids.length === 0)
          throw refusal(
            `env '${env}' has no training tasks (tasks ${planEnv(plan, env).tasks}, split.train ${planEnv(plan, env).split.train})`,
          );
        return { env, id: at(ids, Math.floor(random() * ids.length)) };
      });
      const jobs = tasks.flatMap((task, g) =>
        Array.from({ length: plan.algorithm.group_size }, (_, sample) => ({ task, group: playedGroups + g, sample })),
      );
      watch.planned(jobs.length);
      // The lanes are shared with the other batches in flight (asynchronous rollout, run/lanes.ts).
      const played = await mapConcurrently(jobs, plan.rollout.concurrency, async (j) => {
        const episode = await ctx.lanes.run(() => playEpisode(ctx, { ...j, split: "train", iteration }));
        watch.done();
        return episode;
      });
      for (const p of played) allPlayed.push(p); // a spread of a huge batch would overflow the stack
      if (iteration === 1 && round === 0) refuseBrokenEnvs(played);
      playedGroups += tasks.length;
      const byGroup = groupBy(played);
      for (let g = playedGroups - tasks.length; g < playedGroups; g++) {
        const group = byGroup.get(g) ?? [];
        const usable =
          plan.reward.on_env_error === "exclude" ? group.filter((p) => p.episode.end !== "env_error") : group;
        const rewards = usable.map((p) => p.rewards.total);
        if (dynamic && rewards.length > 0 && rewards.every((r) => r === rewards[0])) {
          rejectedGroups++;
          rejectedTokens += group.reduce((s, p) => s + p.episode.episode.tokens, 0);
          continue;
        }
        if (usable.length > 0) accepted.push(usable);
      }
      // Another round of an env that failed every episode of this one would only fail again.
      if (!dynamic || played.every((p) => p.episode.end === "env_error")) break;
    }
  } finally {
    watch.end();
  }
  requireServing(ctx);
  return { accepted, allPlayed, rejectedGroups, rejectedTokens, playedGroups, seconds: (Date.now() - begun) / 1000 };
}
