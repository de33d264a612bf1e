// Groups are formed by group id, never by position: prime-rl PR#600 laid a batch out as
// [p1, p2, p1, p2] and grouped by position, so each "group" mixed two prompts. The batch order
// here is interleaved and shuffled; every trajectory's advantage must be that of its own group.
import { describe, expect, it } from "vitest";
import { computeAdvantages, type ScoredTrajectory } from "../../src/runtime/advantage.js";
import { Role } from "../../src/episode/buffer.js";
import { compilePlans, counterSpec } from "../helpers/plans.js";

function trajectory(group: string, reward: number): ScoredTrajectory {
  const roles = Uint8Array.from([Role.prompt, Role.generated, Role.generated]);
  return {
    group,
    env: "counter",
    roles,
    reward,
    perTurn: [reward],
    turnEnds: [2],
    end: "finished",
    oldLogprobs: new Float32Array(3),
  };
}

/** The advantage each trajectory gets, by its label, for a batch in the given order. */
function advantagesByLabel(
  advantage: string,
  batch: readonly (readonly [string, ScoredTrajectory])[],
): Record<string, number> {
  const [plan] = compilePlans(counterSpec(`algorithm { group_size: 3, advantage { ${advantage} } }`));
  const result = computeAdvantages(
    plan!,
    batch.map(([, t]) => t),
  );
  expect(result.groups).toBe(2);
  return Object.fromEntries(batch.map(([label], i) => [label, result.advantages[i]![1]!]));
}

const p1a = ["p1a", trajectory("iter1:p1", 1)] as const;
const p1b = ["p1b", trajectory("iter1:p1", 0)] as const;
const p1c = ["p1c", trajectory("iter1:p1", 0)] as const;
const p2a = ["p2a", trajectory("iter1:p2", 0.5)] as const;
const p2b = ["p2b", trajectory("iter1:p2", 0.25)] as const;
const p2c = ["p2c", trajectory("iter1:p2", 0)] as const;
const orders = {
  contiguous: [p1a, p1b, p1c, p2a, p2b, p2c],
  // Grouped by position in threes, this layout would mix the prompts: [p1, p2, p1], [p2, p1, p2].
  interleaved: [p1a, p2a, p1b, p2b, p1c, p2c],
  shuffled: [p2b, p1c, p2a, p1a, p2c, p1b],
};

describe("group-relative advantages by group id", () => {
  it("leave-one-out: R_i minus the mean of the others of the same prompt, in any batch order", () => {
    for (const [name, batch] of Object.entries(orders)) {
      const a = advantagesByLabel("estimator: group, baseline: leave_one_out, normalize: none", batch);
      // p1: 1 - (0 + 0) / 2, 0 - (1 + 0) / 2; p2: 0.5 - 0.125, 0.25 - 0.25, 0 - 0.375.
      expect([a.p1a, a.p1b, a.p1c], name).toEqual([1, -0.5, -0.5].map((x) => expect.closeTo(x, 6)));
      expect([a.p2a, a.p2b, a.p2c], name).toEqual([0.375, 0, -0.375].map((x) => expect.closeTo(x, 6)));
    }
  });

  it("GRPO: each group normalised by its own mean and std, in any batch order", () => {
    for (const [name, batch] of Object.entries(orders)) {
      const a = advantagesByLabel("estimator: group, baseline: mean, normalize: std", batch);
      // p1 = [1, 0, 0]: mean 1/3, population std sqrt(2)/3; p2 = [0.5, 0.25, 0]: mean 0.25, std sqrt(1/24).
      expect([a.p1a, a.p1b, a.p1c], name).toEqual(
        [Math.SQRT2, -Math.SQRT1_2, -Math.SQRT1_2].map((x) => expect.closeTo(x, 4)),
      );
      expect([a.p2a, a.p2b, a.p2c], name).toEqual(
        [Math.sqrt(1.5), 0, -Math.sqrt(1.5)].map((x) => expect.closeTo(x, 4)),
      );
    }
  });
});
