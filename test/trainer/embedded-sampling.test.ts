// The embedded trainer's cut of the sampling distribution where tokens tie: every token tied with
// the k-th largest is kept (docs/protocol.md, keep-sampling mask), and at the top-p cut tokens of
// equal probability are taken lower id first. The PyTorch trainer's test of the same cases is
// runtime-gpu/tests/test_sampling_exact.py (test_ties_are_cut_as_the_embedded_trainer_cuts_them).
import { describe, expect, it } from "vitest";
import { keepMask, type SamplingParams } from "../../src/trainer/embedded/sampling.js";

function kept(logits: number[], s: SamplingParams): number[] {
  const mask = keepMask(Float32Array.from(logits), 1, logits.length, s);
  return logits.map((_, i) => i).filter((i) => mask[i] === 0);
}

describe("the embedded trainer's cut with ties", () => {
  it("keeps every token tied with the k-th largest", () => {
    expect(kept([2, 1, 1, 1, 0], { temperature: 1, top_p: 1, top_k: 2 })).toEqual([0, 1, 2, 3]);
  });

  it("takes tokens of equal probability lower id first at the top-p cut", () => {
    // p(1) = p(2) = p(3) = 0.285: the mass before token 3 is 0.571, not below 0.5
    expect(kept([0, 1, 1, 1, -1], { temperature: 1, top_p: 0.5, top_k: 0 })).toEqual([1, 2]);
  });

  it("cuts top-p over the top-k set widened by its ties", () => {
    // four tokens tie at the 3rd largest: all kept by top-k, then 0.25 each, three reach 0.6
    expect(kept([1, 1, 1, 1, 0], { temperature: 1, top_p: 0.6, top_k: 3 })).toEqual([0, 1, 2]);
  });
});
