// The quick-start benchmark's reading of a run: evaluations in order, with the RL episodes
// played before each (samples to 0.8 = demos + those episodes).
import { describe, expect, it } from "vitest";
import { evalCurve } from "../../src/bench/quickstart.js";

describe("quick-start benchmark", () => {
  it("reads the starting evaluation and each later one with the RL episodes played before it", () => {
    const curve = evalCurve(
      [
        { iteration: 1, eval_before_training: { "pass@1": 0.7 } },
        { iteration: 2 },
        { iteration: 3, eval: { "pass@1": 0.8, "pass@1_low": 0.7 } },
        { iteration: 4, eval: { "pass@4": 1 } },
      ],
      64,
    );
    expect(curve).toEqual([
      { iteration: 0, pass1: 0.7, episodes: 0 },
      { iteration: 3, pass1: 0.8, episodes: 192 },
    ]);
  });
});
