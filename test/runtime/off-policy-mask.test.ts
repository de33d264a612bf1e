// Off-policy sequence masking (docs/semantics.md §7): which sequences lose their policy-gradient term.
import { describe, expect, it } from "vitest";
import { offPolicyMasked } from "../../src/runtime/update/off-policy-mask.js";

/** A sequence of 5 tokens whose targets are 2..4; log-ratio old - current = gap on every target. */
function sequence(advantage: number, gap: number, offTarget = 0) {
  const mask = Uint8Array.from([0, 0, 1, 1, 1]);
  return {
    mask,
    advantages: Float32Array.from(mask, (m) => (m ? advantage : 0)),
    oldLogprobs: Float32Array.from(mask, (m) => (m ? -1 : -1 + offTarget)),
    currentLogprobs: Float32Array.from(mask, (m) => (m ? -1 - gap : -1)),
  };
}

describe("off-policy sequence masking", () => {
  it("masks negative-advantage sequences whose mean log-ratio over targets exceeds the threshold, and no other", () => {
    expect(
      offPolicyMasked(
        [
          sequence(-0.5, 0.5), // stale and pushed down: masked
          sequence(0.5, 0.5), // stale but pushed up: the clip bounds it, kept
          sequence(-0.5, 0.125), // close enough: kept
          sequence(-0.5, 0.25), // at the threshold: kept (strictly above masks)
          sequence(-0.5, 0.125, 5), // off-target tokens do not count
        ],
        0.25,
      ),
    ).toEqual([true, false, false, false, false]);
  });

  it("keeps a sequence without targets", () => {
    const s = sequence(-1, 1);
    expect(offPolicyMasked([{ ...s, mask: new Uint8Array(5) }], 0.01)).toEqual([false]);
  });
});
