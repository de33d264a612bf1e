import { signalsOf } from "../../semantics/expressions.js";
import type { LintRule } from "../rule.js";
import { quoteList, signalDeclarations, signalName } from "../util.js";

export const multitaskRewardScale: LintRule = {
  code: "multitask-reward-scale",
  severity: "warning",
  title: "Multi-task rewards not on a common [0, 1] scale",
  explanation: `When several tasks train one policy, a task whose reward spans 0..10 pulls ten times harder
than one scored 0/1, and a shared term such as AgentRL's -0.2 abnormal-termination penalty means
something different on each. AgentRL (Zhang, Liu et al. 2025) therefore maps every task's reward to
[0, 1] (tasks without a graded score use 1 = correct, 0 = wrong) before the per-task advantage
normalization, and treats the two as separate layers (docs/semantics.md §2). This rule flags, in an
experiment with two or more envs, an env whose \`reward_range\` is not [0, 1] and a reward term that
reads a number signal some env declares outside [0, 1].`,
  check(ctx) {
    const { config } = ctx;
    const envs = Object.entries(config.env);
    if (envs.length < 2) return;
    for (const [name, env] of envs) {
      const [lo, hi] = env.reward_range;
      if (lo === 0 && hi === 1) continue;
      ctx.report({
        at: ctx.isWritten(["env", name, "reward_range"]) ? ["env", name, "reward_range"] : ["env", name],
        message: `env '${name}' maps its reward to [${lo}, ${hi}] while it shares the policy with ${envs.length - 1} other env${envs.length > 2 ? "s" : ""}: tasks on different scales pull with different strength (AgentRL maps every task's reward to [0, 1])`,
        hint: "set `reward_range: [0, 1]` and scale the env's score into it",
      });
    }
    for (const [term, t] of ctx.variant.rewardTerms) {
      const off = new Map<string, string[]>();
      for (const s of signalsOf(t.expr)) {
        if (s.type !== "number") continue;
        const wide = signalDeclarations(config, s).filter(
          (d) => (d.signal.min !== undefined && d.signal.min < 0) || (d.signal.max !== undefined && d.signal.max > 1),
        );
        if (wide.length > 0)
          off.set(
            signalName(s),
            wide.map((d) => `${d.env} [${d.signal.min ?? "?"}, ${d.signal.max ?? "?"}]`),
          );
      }
      const [first] = off;
      if (!first) continue;
      const [signal, where] = first;
      ctx.report({
        at: ["reward", term],
        message: `reward term '${term}' reads ${signal}, which env ${quoteList(where)} declares outside [0, 1], in a multi-task experiment: tasks on different scales pull with different strength (AgentRL maps every task's reward to [0, 1])`,
        hint: "normalise the signal into [0, 1] per env (e.g. divide by its maximum) before mixing tasks",
      });
    }
  },
};
