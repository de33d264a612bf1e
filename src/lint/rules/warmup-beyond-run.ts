import type { ExperimentConfig } from "../../semantics/schema/experiment.js";
import type { LintRule } from "../rule.js";

/** Optimizer steps of the policy: the cold start's (at most) and RL's iterations x epochs x minibatches. */
function policyOptimizerSteps(config: ExperimentConfig): { sft: number; rl: number } {
  const { algorithm, rollout } = config;
  const s = rollout.sft;
  // A record file (sft.data) is not read here: its steps are unknown, so no bound is claimed.
  if (s && s.data !== null)
    return { sft: Number.POSITIVE_INFINITY, rl: rollout.iterations * algorithm.epochs * algorithm.minibatches };
  const demos = s?.demos ?? 0;
  const sft = s && demos > 0 ? s.epochs * Math.ceil(demos / Math.min(s.batch ?? demos, demos)) : 0;
  return { sft, rl: rollout.iterations * algorithm.epochs * algorithm.minibatches };
}

export const warmupBeyondRun: LintRule = {
  code: "warmup-beyond-run",
  severity: "warning",
  title: "A learning-rate warm-up longer than the run's optimizer steps",
  explanation: `The learning-rate schedule counts optimizer steps, and a run takes
iterations x epochs x minibatches of them (plus the supervised cold start's steps, which share the
policy's optimizer). A schedule sized in other units (iterations, samples, tokens, or another
run's length) ends at the wrong point: a warm-up longer than the run never reaches the peak rate,
so the whole run trains at a fraction of the learning rate it was tuned with (ROLL#409: a schedule
sized for the wrong step count). ARL's schedule is a linear warm-up to a constant rate (no decay),
so the warm-up is the length to check.`,
  check(ctx) {
    const { algorithm } = ctx.config;
    const steps = policyOptimizerSteps(ctx.config);
    const policyTotal = steps.sft + steps.rl;
    const counted = `rollout.iterations x algorithm.epochs x algorithm.minibatches = ${ctx.config.rollout.iterations} x ${algorithm.epochs} x ${algorithm.minibatches} = ${steps.rl}${steps.sft ? `, plus up to ${steps.sft} cold-start steps` : ""}`;
    const check = (path: string[], warmup: number, total: number, what: string) => {
      if (warmup <= total) return;
      const reached = total / warmup;
      ctx.report({
        at: path,
        message: `${what} warms up over ${warmup} optimizer steps but the run takes only ${total} (${counted}): the learning rate never reaches its peak, ending at ${Math.round(reached * 100)}% of it (ROLL#409)`,
        hint: `count the warm-up in optimizer steps: at most ${total}, typically a few percent of them (e.g. warmup_steps: ${Math.max(1, Math.round(total * 0.05))})`,
      });
    };
    check(
      ["algorithm", "optimizer", "warmup_steps"],
      algorithm.optimizer.warmup_steps,
      policyTotal,
      "the policy's optimizer",
    );
    // The critic is trained by RL's steps only.
    if (algorithm.critic)
      check(
        ["algorithm", "critic", "optimizer", "warmup_steps"],
        algorithm.critic.optimizer.warmup_steps,
        steps.rl,
        "the critic's optimizer",
      );
  },
};
