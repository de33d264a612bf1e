// The miniature-reproduction benchmark's reading of its runs: seeds grouped per variant, and the
// samples (demos + RL episodes) each seed took to reach the fixed held-out level.
import { describe, expect, it } from "vitest";
import {
  miniBudgetS,
  miniRows,
  samplesToTarget,
  summarizeMini,
  variantWithoutSeed,
  type MiniRun,
} from "../../src/bench/mini.js";

const run = (variant: string, wallS: number, pass: readonly number[]): MiniRun => ({
  variant,
  wallS,
  demos: 400,
  // A base row before the cold start, then the starting policy and one evaluation every 8 iterations of 64 episodes.
  curve: [
    { iteration: -1, pass1: 0.9, episodes: 0 },
    ...pass.map((p, i) => ({ iteration: i * 8, pass1: p, episodes: i * 8 * 64 })),
  ],
});

describe("mini benchmark", () => {
  it("names a variant without its seed", () => {
    expect(variantWithoutSeed("max_turns=8,seed=2")).toBe("max_turns=8");
    expect(variantWithoutSeed("dense,seed=0")).toBe("dense");
    expect(variantWithoutSeed("seed=1")).toBe("default");
    expect(variantWithoutSeed("bonus")).toBe("bonus");
  });

  it("counts demos + RL episodes to the first evaluation at or above the level, never the base row before the cold start", () => {
    expect(samplesToTarget(run("a,seed=0", 1, [0.1, 0.25, 0.3]), 0.2)).toBe(400 + 512);
    expect(samplesToTarget(run("a,seed=0", 1, [0.2, 0.1]), 0.2)).toBe(400);
    expect(samplesToTarget(run("a,seed=0", 1, [0.1, 0.15]), 0.2)).toBeUndefined();
  });

  it("groups seeds per variant in order of appearance, with mean wall time and final pass@1, and only the seeds that reached the level", () => {
    const runs = [
      run("x=6,seed=0", 10, [0.1, 0.3]),
      run("x=6,seed=1", 20, [0.1, 0.1]),
      run("x=8,seed=0", 30, [0.2, 0.4]),
    ];
    expect(summarizeMini(runs, 0.2)).toEqual([
      { variant: "x=6", seeds: 2, meanWallS: 15, meanFinalPass1: 0.2, samplesToTarget: [912] },
      { variant: "x=8", seeds: 1, meanWallS: 30, meanFinalPass1: 0.4, samplesToTarget: [400] },
    ]);
  });

  it("judges the spec's wall time (its runs at once) against the 10-minute budget and a variant's level as met only when every seed reached it", () => {
    const rows = miniRows([run("x=6,seed=0", 400, [0.1, 0.3]), run("x=6,seed=1", 300, [0.1, 0.1])], 0.2, 700, 1);
    expect(rows[0]).toMatchObject({ value: 700, goal: "<= 600 s", met: false, note: "2 runs, 1 at once" });
    // Two at once: the spec's wall time is the pool's, not the sum of its runs'.
    expect(
      miniRows([run("x=6,seed=0", 400, [0.1, 0.3]), run("x=6,seed=1", 300, [0.1, 0.1])], 0.2, 410, 2)[0],
    ).toMatchObject({ value: 410, met: true, note: "2 runs, 2 at once" });
    expect(rows[1]).toMatchObject({ name: "x=6: wall time per seed", value: 350 });
    expect(rows[2]).toMatchObject({
      name: "x=6: samples to 0.2 held-out pass@1",
      value: 912,
      met: false,
      note: "1 of 2 seeds reached it (mean over those; demos + RL episodes)",
    });
  });

  it("gives the real-TextWorld table 3 its 45-minute budget and every other spec the 10-minute one", () => {
    expect(miniBudgetS("/x/experiments/mini/textworld-table3-turn-budget.arl")).toBe(2700);
    expect(miniBudgetS("/x/experiments/mini/table3-turn-budget.arl")).toBe(600);
    const rows = miniRows(
      [run("x=6,seed=0", 400, [0.1, 0.3])],
      0.2,
      2000,
      2,
      miniBudgetS("textworld-table3-turn-budget.arl"),
    );
    expect(rows[0]).toMatchObject({ value: 2000, goal: "<= 2700 s", met: true });
  });
});
