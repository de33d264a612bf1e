import type { LintRule } from "../rule.js";

export const turnBudgetBelow2xOptimal: LintRule = {
  code: "turn-budget-below-2x-optimal",
  severity: "warning",
  title: "A turn budget below twice the optimal solution length",
  explanation: `An agent explores: it tries actions that fail, reads the result and recovers. In the
Practitioner's Guide to multi-turn agentic RL (Wang & Ammanabrolu 2025, Table 3), PPO on a TextWorld
quest whose optimal solution takes 4 steps reached 0.55 with 6 turns (1.5x), 0.73 with 8 (2x), 0.80
with 12 and 0.88 with 16: performance saturates from about twice the optimal length, and below it
exploration is starved. When an env declares \`optimal_steps\`, \`harness.max_turns\` should be at
least twice that.`,
  check(ctx) {
    const { config } = ctx;
    const turns = config.harness.max_turns;
    for (const [name, env] of Object.entries(config.env)) {
      const optimal = env.optimal_steps;
      if (optimal === null || turns >= 2 * optimal) continue;
      ctx.report({
        at: ["harness", "max_turns"],
        message: `harness.max_turns is ${turns}, below twice the optimal solution length of env '${name}' (${optimal} steps): with too little room to explore, PPO reached 0.55 at 1.5x the optimal length but 0.73 at 2x (Practitioner's Guide, Table 3)`,
        hint: `raise max_turns to at least ${2 * optimal}`,
      });
    }
  },
};
