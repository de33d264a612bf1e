// The score phase's mismatch of one batch (runtime/mismatch-correction.ts): measured and
// weighted over the targets the sampler produced only; a target nobody sampled (prompt and
// observation tokens under mask.loss: all) has no sampler's log-prob, is not measured and keeps
// weight 1; which plans recompute logp_old and measure at all.
import { describe, expect, it } from "vitest";
import type { Plan } from "../../src/plan/schema.js";
import { Role } from "../../src/episode/buffer.js";
import {
  batchMismatch,
  measuresMismatch,
  recomputesOldLogprobs,
} from "../../src/runtime/update/mismatch-correction.js";

function plan(engine: "trainer" | "vllm", tis: Plan["mask"]["tis"], keep = true): Plan {
  return {
    resources: { rollout: { engine, mismatch_threshold: 0.1 } },
    mask: { tis, keep_sampling_mask: keep },
  } as unknown as Plan;
}

describe("batchMismatch", () => {
  const { prompt, generated, observation } = Role;
  const roles = [Uint8Array.from([prompt, prompt, generated, generated, observation, generated])];
  const all = [Uint8Array.from([0, 1, 1, 1, 1, 1])]; // mask.loss: all
  const old = [Float32Array.from([0, -2, -1, -0.5, -3, -0.2])];
  const sampled = [Float32Array.from([0, 0, -1.5, -0.5, 0, -0.25])];

  it("measures and weights only the sampled targets; the others keep weight 1", () => {
    const m = batchMismatch(plan("vllm", { cap: 1.5, level: "token" }), all, roles, old, sampled);
    expect(m.stats.tokens).toBe(3);
    expect(m.stats.maxAbs).toBeCloseTo(0.5, 6);
    expect(m.stats.fracOver).toBeCloseTo(1 / 3, 9);
    expect(Array.from(m.tis!.weights[0]!)).toEqual([0, 1, 1.5, 1, 1, Math.fround(Math.exp(0.05))]);
    expect(m.tis!.stats.fracCapped).toBeCloseTo(1 / 3, 9);
    expect(batchMismatch(plan("vllm", null), all, roles, old, sampled).tis).toBeUndefined();
  });

  it("recomputes and measures only with an engine or mask.tis (the keep mask off recomputes without measuring)", () => {
    expect([measuresMismatch(plan("trainer", null)), recomputesOldLogprobs(plan("trainer", null))]).toEqual([
      false,
      false,
    ]);
    expect([
      measuresMismatch(plan("trainer", null, false)),
      recomputesOldLogprobs(plan("trainer", null, false)),
    ]).toEqual([false, true]);
    expect([measuresMismatch(plan("vllm", null)), recomputesOldLogprobs(plan("vllm", null))]).toEqual([true, true]);
    expect(measuresMismatch(plan("trainer", { cap: 2, level: "sequence" }))).toBe(true);
  });
});
