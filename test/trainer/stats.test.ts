// The embedded trainer's train_step statistics pooled over microbatches (stats.ts): means over
// the step's target tokens whatever the cut, the reference's pooling of the clip and ratio
// statistics, the NLL as a mean over target tokens, and the documented values of a step without targets.
import { describe, expect, it } from "vitest";
import { StatsPool, type MicrobatchStats } from "../../src/trainer/embedded/stats.js";

const part = (over: Partial<MicrobatchStats>): MicrobatchStats => ({
  loss: 0,
  policyLoss: 0,
  kl: 0,
  tokens: 1,
  entropySum: 0,
  logpSum: 0,
  clipped: 0,
  ratioSum: 1,
  ratioMin: 1,
  ratioMax: 1,
  ...over,
});

describe("train_step statistics over microbatches", () => {
  it("add the losses and take means, min and max over all target tokens, not means of microbatch means", () => {
    const pool = new StatsPool();
    pool.addPolicy(
      part({
        loss: 0.5,
        policyLoss: 0.4,
        kl: 1,
        tokens: 3,
        entropySum: 6,
        logpSum: -4.5,
        clipped: 1,
        ratioSum: 3.25,
        ratioMin: 0.9,
        ratioMax: 1.2,
      }),
    );
    pool.addPolicy(
      part({
        loss: -0.25,
        policyLoss: -0.3,
        kl: 0.5,
        tokens: 1,
        entropySum: 1,
        logpSum: -1.5,
        clipped: 1,
        ratioSum: 0.75,
        ratioMin: 0.75,
        ratioMax: 0.75,
      }),
    );
    pool.addValueLoss(0.125);
    pool.addValueLoss(0.25);
    expect(pool.result(true, 4)).toEqual({
      loss: 0.25,
      policy_loss: 0.4 - 0.3,
      kl: 1.5,
      entropy: 7 / 4,
      clip_fraction: 2 / 4,
      ratio_mean: 4 / 4,
      ratio_min: 0.75,
      ratio_max: 1.2,
      value_loss: 0.375,
      nll: 6 / 4,
      tokens: 4,
    });
  });

  it("report ratios 1 and fractions 0 for a step without target tokens (NaN is not JSON), and no value loss without a critic", () => {
    const r = new StatsPool().result(false, 0);
    expect(r).toEqual({
      loss: 0,
      policy_loss: 0,
      kl: 0,
      entropy: 0,
      clip_fraction: 0,
      ratio_mean: 1,
      ratio_min: 1,
      ratio_max: 1,
      nll: 0,
      tokens: 0,
    });
    expect(Object.is(r.policy_loss, -0)).toBe(false);
    expect("value_loss" in r).toBe(false);
  });
});
