import { signalsOf } from "../../semantics/expressions.js";
import type { LintRule } from "../rule.js";
import { quoteList, signalDeclarations, signalName } from "../util.js";

export const penaltyAsConstraint: LintRule = {
  code: "penalty-as-constraint",
  severity: "warning",
  title: "A rule violation priced as a reward instead of blocked",
  explanation: `An env marks a signal \`violation: true\` when it reports breaking a rule (writing to a read-only
database, touching files outside the sandbox). A reward term over it turns the rule into a price: a
large negative reward is still a soft objective, and a policy that gains more from success than it
loses from the penalty learns to break the rule (docs/semantics.md §2): a -5 for a policy violation reads,
mathematically, as "violating is fine when the reward is large enough". Regulation, permissions and
security are not trade-offs. Rules belong in the harness as hard constraints:
\`constraints { NAME: block(condition) }\` refuses the action and returns the refusal as the
observation, so the forbidden behaviour never pays.`,
  check(ctx) {
    const { config } = ctx;
    for (const [name, term] of ctx.variant.rewardTerms) {
      const violations = new Map<string, string[]>();
      for (const s of signalsOf(term.expr)) {
        const envs = signalDeclarations(config, s)
          .filter((d) => d.signal.violation)
          .map((d) => d.env);
        if (envs.length > 0) violations.set(signalName(s), envs);
      }
      const [first] = violations;
      if (!first) continue;
      const [signal, envs] = first;
      ctx.report({
        at: ["reward", name],
        message: `reward term '${name}' prices the rule violation ${signal} (declared violation: true by env ${quoteList(envs)}): a penalty is a soft objective the policy can trade against success, so breaking the rule can still pay`,
        hint: `remove the term and block the action in the harness: \`constraints { NAME: block(condition) }\`, judged before the call runs, e.g. block(call.tool == "...") or block(matches(call.args.NAME, "..."))`,
      });
    }
  },
};
