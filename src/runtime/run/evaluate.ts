// Evaluate: the current policy on held-out tasks (eval.split), eval.samples_per_task episodes
// each at eval.temperature. Writes one row per task (pass@k unbiased over its samples) to the
// run directory and returns the mean over tasks with its 95% bootstrap interval.
import { bootstrapMeanInterval, passAtK } from "../../rl/eval.js";
import { shuffled } from "../../contracts/random.js";
import { splitTasks } from "../../plan/splits.js";
import { envNames, planEnv, type EvalSummary, type RunContext } from "./context.js";
import { phaseWatch } from "./progress.js";
import { requireServing } from "./engines.js";
import { groupBy, mapConcurrently, playEpisode, type Task } from "./episodes.js";

/** Bootstrap resamples of an evaluation's interval (report/stats.ts recomputes it with the same count). */
const EVAL_BOOTSTRAP_RESAMPLES = 2000;

/** The tasks an evaluation plays, by env in name order: the whole split, or eval.tasks of it drawn once per env. */
function evalTasks(ctx: RunContext): Task[] {
  const { plan } = ctx;
  const ev = plan.eval;
  const tasks: Task[] = [];
  for (const env of envNames(plan)) {
    const ids = splitTasks(env, planEnv(plan, env), ev.split);
    const chosen =
      ev.tasks === null
        ? ids
        : shuffled(ids, ctx.streams.evalTasks(env))
            .slice(0, ev.tasks)
            .sort((a, b) => a - b);
    for (const id of chosen) tasks.push({ env, id });
  }
  return tasks;
}

/**
 * Evaluates the current policy at iteration `at` (0: the starting policy, before training);
 * "base" is the policy before the cold start (its own seeds and file).
 */
export async function evaluatePolicy(ctx: RunContext, at: number | "base"): Promise<EvalSummary> {
  const { plan } = ctx;
  const iteration = at === "base" ? -1 : at;
  const ev = plan.eval;
  const tasks = evalTasks(ctx);
  const jobs = tasks.flatMap((task, group) =>
    Array.from({ length: ev.samples_per_task }, (_, sample) => ({ task, group, sample })),
  );
  const label = at === "base" ? "base eval:" : at === 0 ? "eval before training:" : `eval at iteration ${at}:`;
  const watch = phaseWatch(ctx.log, label, "episodes played");
  watch.planned(jobs.length);
  const played = await mapConcurrently(jobs, plan.rollout.concurrency, async (j) => {
    const episode = await playEpisode(ctx, { ...j, split: ev.split, iteration, temperature: ev.temperature });
    watch.done();
    return episode;
  }).finally(() => watch.end());
  requireServing(ctx);
  // Said here: no iteration line reports the evaluation before training or the base one.
  const failed = played.filter((p) => p.episode.end === "env_error");
  if (failed.length > 0)
    ctx.log(
      `${label} ${failed.length} of ${played.length} episodes ended in an env error (first: ${failed[0]?.episode.error ?? "?"})`,
    );
  const byGroup = groupBy(played);
  const rows = tasks.map((t, g) => {
    const mine = (byGroup.get(g) ?? []).filter((p) => p.episode.end !== "env_error");
    const c = mine.filter((p) => p.success).length;
    const passes: Record<string, number | null> = Object.fromEntries(
      ev.k.map((k) => [`pass@${k}`, mine.length >= k ? passAtK(mine.length, c, k) : null]),
    );
    return {
      env: t.env,
      task: t.id,
      n: mine.length,
      correct: c,
      env_errors: ev.samples_per_task - mine.length,
      ...passes,
    };
  });
  ctx.runDir.writeEval(at, rows);
  const summary: EvalSummary = {};
  for (const k of ev.k) {
    const per = rows
      .map((r) => (r as Record<string, unknown>)[`pass@${k}`] as number | null)
      .filter((x): x is number => x !== null);
    if (per.length === 0) continue;
    const interval = bootstrapMeanInterval(per, {
      seed: ctx.streams.bootstrapSeed(iteration, k),
      resamples: EVAL_BOOTSTRAP_RESAMPLES,
    });
    summary[`pass@${k}`] = interval.estimate;
    summary[`pass@${k}_low`] = interval.low;
    summary[`pass@${k}_high`] = interval.high;
  }
  return summary;
}
