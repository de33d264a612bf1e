import { signalsOf } from "../../semantics/expressions.js";
import type { LintRule } from "../rule.js";
import { isPositive, signOf } from "../sign.js";
import { signalDeclarations, signalName } from "../util.js";

export const nonPotentialShaping: LintRule = {
  code: "non-potential-shaping",
  severity: "warning",
  title: "A positive per-step or per-count reward that is not potential-based",
  explanation: `A bonus paid per step or per action ("+0.1 per test run") changes what is optimal: the policy
can collect it by repeating the action instead of solving the task. Ng, Harada & Russell (1999) show
that shaping preserves the ranking of policies exactly when it has the form
r' = r + gamma * Phi(h') - Phi(h) with Phi(terminal) = 0: the intermediate terms telescope, and the
shaped return differs from the original by a constant of the initial state (docs/semantics.md §2). ARL
writes such a term as \`potential(Phi)\`. This rule flags a plain reward term that reads a state signal
or an episode count (turns, tool_calls, invalid_calls, tokens) and can only be positive; a cost (a
negative term such as \`-0.02 * episode.tool_calls\`) does not invite repetition and is not flagged.`,
  check(ctx) {
    const { config } = ctx;
    const range = (s: Parameters<typeof signalDeclarations>[1]) => {
      const decls = signalDeclarations(config, s).map((d) => d.signal);
      if (decls.length === 0) return undefined;
      const mins = decls.map((d) => d.min);
      const maxs = decls.map((d) => d.max);
      return {
        min: mins.every((m) => m !== undefined)
          ? mins.reduce((m, x) => Math.min(m, x), Number.POSITIVE_INFINITY)
          : undefined,
        max: maxs.every((m) => m !== undefined)
          ? maxs.reduce((m, x) => Math.max(m, x), Number.NEGATIVE_INFINITY)
          : undefined,
      };
    };
    for (const [name, term] of ctx.variant.rewardTerms) {
      if (term.kind !== "plain") continue;
      const stepwise = signalsOf(term.expr).filter((s) => s.timing === "state" && s.namespace !== "tool");
      if (stepwise.length === 0 || !isPositive(signOf(term.expr, range))) continue;
      const read = [...new Set(stepwise.map(signalName))].join(", ");
      ctx.report({
        at: ["reward", name],
        message: `reward term '${name}' pays a positive amount that grows with ${read} and is not potential-based: the policy can earn it by repeating steps instead of solving the task (Ng, Harada & Russell 1999: only r + gamma*Phi(h') - Phi(h) keeps the ranking of policies)`,
        hint: `write it as \`${name}: potential(...)\` over a state quantity that measures progress, or make it a cost (a negative term)`,
      });
    }
  },
};
