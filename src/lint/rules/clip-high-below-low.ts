import type { LintRule } from "../rule.js";

export const clipHighBelowLow: LintRule = {
  code: "clip-high-below-low",
  severity: "warning",
  title: "The upper clip is tighter than the lower one",
  explanation: `PPO clips the ratio to [1 - low, 1 + high] (docs/semantics.md §4). For a positive advantage the
objective stops rewarding a probability increase at 1 + high, an absolute gain of only
high * pi_old(a) - tiny for rare tokens. DAPO (Yu et al. 2025, §3.1) links this early saturation to
entropy collapse and widens the upper bound (Clip-Higher: low 0.2, high 0.28). Setting high below
low does the opposite: good rare tokens can rise less than bad ones can fall, which narrows
exploration. Usually the two numbers were swapped.`,
  check(ctx) {
    const { clip } = ctx.config.algorithm;
    if (clip.high >= clip.low) return;
    ctx.report({
      at: ["algorithm", "clip", "high"],
      message: `clip.high ${clip.high} is below clip.low ${clip.low}: probability increases for good tokens saturate before decreases do, the opposite of DAPO's Clip-Higher (low 0.2, high 0.28), which counters entropy collapse`,
      hint: "set high >= low (e.g. `clip { low: 0.2, high: 0.28 }`); were the two swapped?",
    });
  },
};
