// The lint driver's own codes (the rules of src/lint/rules/ carry their own explanations).
// Each code with the paragraph `arl explain CODE` prints.
import type { CodeExplanation } from "./explanation.js";

export const lintDriverCodes = {
  "unknown-rule": {
    stage: "lint",
    title: "An allow entry names no lint rule",
    explanation: `'allow { CODE: "reason" }' silences an RL lint rule for one experiment; the code must be one of
the lint rules ('arl explain --list'). Syntax and schema errors cannot be allowed: they must be
fixed.`,
  },
  "unused-allow": {
    stage: "lint",
    title: "An allow entry for a rule that does not fire",
    explanation: `The allowed rule reports nothing in any variant of this experiment. Remove the entry, so the
rule speaks up if the problem appears later.`,
  },
} as const satisfies Record<string, CodeExplanation>;
