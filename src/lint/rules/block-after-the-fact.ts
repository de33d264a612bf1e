import { signalsOf } from "../../semantics/expressions.js";
import type { LintRule } from "../rule.js";
import { quoteList, signalName } from "../util.js";

export const blockAfterTheFact: LintRule = {
  code: "block-after-the-fact",
  severity: "warning",
  title: "A constraint that can only refuse calls after the forbidden one has run",
  explanation: `The harness judges each tool call before it runs: a constraint \`block(condition)\` refuses the
call when its condition holds, and the refusal is the observation (docs/semantics.md §2). The env's
signals at that moment are those of the previous step. A condition over them alone, such as
\`block(state.attempted_write)\`, becomes true only after the forbidden action has been executed:
the first violation goes through (the row is deleted, the file is written) and only the calls
after it are refused. A hard constraint has to judge the call itself: its tool (\`call.tool\`) and
its arguments (\`call.args.NAME\`, with \`contains\`, \`starts_with\` and \`matches\` for strings).`,
  check(ctx) {
    for (const [name, condition] of ctx.variant.constraints) {
      const signals = signalsOf(condition);
      // call.* judges the call itself; episode counters (turns, tool_calls) are known before it runs.
      if (signals.some((s) => s.namespace === "tool")) continue;
      const afterTheFact = [...new Set(signals.filter((s) => s.namespace !== "episode").map(signalName))];
      if (afterTheFact.length === 0) continue;
      const tool = ctx.variant.tools[0]?.name;
      ctx.report({
        at: ["constraints", name],
        message:
          `constraint '${name}' reads only what the env reports after a call (${quoteList(afterTheFact)}): the harness judges a call before it runs, ` +
          "against the previous step's signals, so the first forbidden call is executed and only the calls after it are refused",
        hint: `judge the call itself with call.tool and call.args.NAME, e.g. block(call.tool == "${tool ?? "TOOL"}") or block(starts_with(call.args.NAME, "..."))`,
      });
    }
  },
};
