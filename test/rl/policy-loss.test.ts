import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  microbatchLoss,
  partitionedLoss,
  policyLoss,
  reductionDenominators,
  reductions,
  tokenSurrogate,
  type ClipOptions,
  type PolicyBatch,
  type Reduction,
  type ReductionDenominators,
} from "../../src/rl/policy-loss.js";

const sym: ClipOptions = { low: 0.2, high: 0.2, dual: null };
const allReductions: Reduction[] = [
  { mode: "token_mean" },
  { mode: "seq_mean_token_mean" },
  { mode: "seq_mean_token_sum" },
  { mode: "constant", constant: 7 },
  { mode: "group_token_mean" },
];

/** One-token batch with ratio rho and advantage a. */
function token(rho: number, a: number): PolicyBatch {
  return { logp: [[-1 + Math.log(rho)]], logpOld: [[-1]], mask: [[1]], advantages: [a] };
}

describe("per-token clipped surrogate (docs/semantics.md §4)", () => {
  it("rho = 1.3, A = 1.732: u = min(2.2516, 2.0784) = 2.0784, flat in rho; loss = -u", () => {
    expect(tokenSurrogate(1.3, 1.732, sym)).toEqual({ u: 1.2 * 1.732, clipped: true, dualClipped: false });
    expect(policyLoss(token(1.3, 1.732), { clip: sym, reduction: { mode: "token_mean" } }).loss).toBeCloseTo(
      -2.0784,
      10,
    );
  });

  it("rho = 1.3, A = -0.577: u = -0.750, not clipped (the gradient pulls rho back)", () => {
    const s = tokenSurrogate(1.3, -0.577, sym);
    expect(s.u).toBeCloseTo(-0.7501, 12);
    expect(s.clipped).toBe(false);
    expect(policyLoss(token(1.3, -0.577), { clip: sym, reduction: { mode: "token_mean" } }).loss).toBeCloseTo(
      0.7501,
      10,
    );
  });

  it("seed: A = 1 stops at 1.2 above rho 1.2; A = -1 stops at -0.8 below rho 0.8", () => {
    expect(tokenSurrogate(1.7, 1, sym).u).toBeCloseTo(1.2, 12);
    expect(tokenSurrogate(0.5, -1, sym).u).toBeCloseTo(-0.8, 12);
    expect(tokenSurrogate(0.5, 1, sym).u).toBeCloseTo(0.5, 12);
    expect(tokenSurrogate(1.7, -1, sym).u).toBeCloseTo(-1.7, 12);
  });

  it("Clip-Higher widens only the upper bound", () => {
    const higher = { low: 0.2, high: 0.28, dual: null };
    expect(tokenSurrogate(1.25, 1, higher).u).toBeCloseTo(1.25, 12);
    expect(tokenSurrogate(1.5, 1, higher).u).toBeCloseTo(1.28, 12);
    expect(tokenSurrogate(0.5, -1, higher).u).toBeCloseTo(-0.8, 12);
  });

  it("dual clip bounds u below by c*A for negative advantages only", () => {
    const dual = { low: 0.2, high: 0.2, dual: 3 };
    expect(tokenSurrogate(5, -0.5, dual)).toEqual({ u: -1.5, clipped: false, dualClipped: true });
    expect(tokenSurrogate(2, -0.5, dual).u).toBeCloseTo(-1, 12);
    expect(tokenSurrogate(5, 0.5, dual).u).toBeCloseTo(0.6, 12);
  });
});

describe("reductions (docs/semantics.md §5)", () => {
  // Rewards (1,0,0,0), lengths (2,4,4,6), rho = 1: u = A on every target.
  const s3 = Math.sqrt(3);
  const lengths = [2, 4, 4, 6];
  const batch: PolicyBatch = {
    logp: lengths.map(() => new Array(6).fill(-0.5)),
    logpOld: lengths.map(() => new Array(6).fill(-0.5)),
    mask: lengths.map((L) => Array.from({ length: 6 }, (_, k) => (k < L ? 1 : 0))),
    advantages: [s3, -1 / s3, -1 / s3, -1 / s3],
    groups: ["q", "q", "q", "q"],
  };
  const loss = (reduction: Reduction) => policyLoss(batch, { clip: sym, reduction }).loss;

  it("the §9 example: 0 / 1/(2 sqrt3) / 1/(3 sqrt3)", () => {
    expect(loss({ mode: "seq_mean_token_mean" })).toBeCloseTo(0, 12);
    expect(loss({ mode: "token_mean" })).toBeCloseTo(1 / (2 * s3), 12);
    expect(loss({ mode: "constant", constant: 6 })).toBeCloseTo(1 / (3 * s3), 12);
  });

  it("seq_mean_token_sum is (1/N) sum of token sums; one group's group_token_mean is its token_mean", () => {
    // Token sums: 2 sqrt3, -4/sqrt3, -4/sqrt3, -6/sqrt3 -> total -8/sqrt3.
    expect(loss({ mode: "seq_mean_token_sum" })).toBeCloseTo(8 / s3 / 4, 12);
    expect(loss({ mode: "group_token_mean" })).toBeCloseTo(loss({ mode: "token_mean" }), 12);
  });

  it("group_token_mean averages per-group token means, unlike token_mean over the batch", () => {
    const b: PolicyBatch = {
      logp: [
        [0, 0, 0],
        [0, 0, 0],
      ],
      logpOld: [
        [0, 0, 0],
        [0, 0, 0],
      ],
      mask: [
        [1, 1, 1],
        [1, 0, 0],
      ],
      advantages: [1, -1],
      groups: ["a", "b"],
    };
    // token_mean: (3 - 1)/4 = 0.5; group_token_mean: (1 + -1)/2 = 0.
    expect(policyLoss(b, { clip: sym, reduction: { mode: "token_mean" } }).loss).toBeCloseTo(-0.5, 12);
    expect(policyLoss(b, { clip: sym, reduction: { mode: "group_token_mean" } }).loss).toBeCloseTo(0, 12);
  });

  it("reports the clip fraction and ratio statistics over target tokens", () => {
    const b: PolicyBatch = {
      logp: [[Math.log(1.5), Math.log(0.9), 123]],
      logpOld: [[0, 0, 0]],
      mask: [[1, 1, 0]],
      advantages: [1],
    };
    const r = policyLoss(b, { clip: sym, reduction: { mode: "token_mean" } });
    expect(r.stats.tokens).toBe(2);
    expect(r.stats.clipFraction).toBe(0.5);
    expect(r.stats.ratioMean).toBeCloseTo(1.2, 12);
    expect(r.stats.ratioMin).toBeCloseTo(0.9, 12);
    expect(r.stats.ratioMax).toBeCloseTo(1.5, 12); // the padding's logp 123 is never exponentiated
  });

  it("adds beta * reduce(k) with the same reduction when a KL term is configured", () => {
    const b: PolicyBatch = {
      logp: [[-1, -2]],
      logpOld: [[-1, -2]],
      mask: [[1, 1]],
      advantages: [0.5],
      logpRef: [[-1.5, -2]],
    };
    const r = policyLoss(b, { clip: sym, reduction: { mode: "token_mean" }, kl: { coef: 0.1, estimator: "k1" } });
    expect(r.policyLoss).toBeCloseTo(-0.5, 12);
    expect(r.kl).toBeCloseTo(0.25, 12); // k1 = -(logp_ref - logp) = 0.5 and 0, mean 0.25
    expect(r.loss).toBeCloseTo(-0.5 + 0.025, 12);
    expect(() =>
      policyLoss(
        { ...b, logpRef: undefined },
        { clip: sym, reduction: { mode: "token_mean" }, kl: { coef: 0.1, estimator: "k1" } },
      ),
    ).toThrow(/reference log-probs/);
  });

  it("a sequence without targets counts in N but adds nothing; an empty step has loss 0", () => {
    const b: PolicyBatch = {
      logp: [
        [0, 0],
        [0, 0],
      ],
      logpOld: [
        [0, 0],
        [0, 0],
      ],
      mask: [
        [1, 1],
        [0, 0],
      ],
      advantages: [1, 5],
    };
    expect(policyLoss(b, { clip: sym, reduction: { mode: "seq_mean_token_mean" } }).loss).toBeCloseTo(-0.5, 12);
    expect(
      policyLoss(
        {
          ...b,
          mask: [
            [0, 0],
            [0, 0],
          ],
        },
        { clip: sym, reduction: { mode: "token_mean" } },
      ).loss,
    ).toBe(0);
  });

  it("rejects bad inputs with clear messages", () => {
    expect(() => policyLoss(batch, { clip: sym, reduction: { mode: "median" } as never })).toThrow(
      /unknown reduction 'median'/,
    );
    expect(() =>
      policyLoss({ ...batch, groups: undefined }, { clip: sym, reduction: { mode: "group_token_mean" } }),
    ).toThrow(/needs the group of every sequence/);
    expect(() =>
      policyLoss(batch, { clip: { low: 0.2, high: 0.2, dual: 0.5 }, reduction: { mode: "token_mean" } }),
    ).toThrow(/clip.dual must be > 1/);
    expect(() => policyLoss({ ...batch, mask: [[2]] }, { clip: sym, reduction: { mode: "token_mean" } })).toThrow(
      /mask\[0\]\[0\] must be 0 or 1/,
    );
    expect(() => policyLoss({ ...batch, advantages: [1] }, { clip: sym, reduction: { mode: "token_mean" } })).toThrow(
      /4 sequences but 1 advantages/,
    );
    expect(reductions.names()).toEqual([
      "token_mean",
      "seq_mean_token_mean",
      "seq_mean_token_sum",
      "constant",
      "group_token_mean",
    ]);
  });
});

// ---- microbatching ----

const batchArb = fc
  .integer({ min: 1, max: 8 })
  .chain((n) =>
    fc.record({
      rows: fc.array(
        fc.integer({ min: 1, max: 6 }).chain((width) =>
          fc.record({
            logp: fc.array(fc.double({ min: -4, max: 0, noNaN: true }), { minLength: width, maxLength: width }),
            logpOld: fc.array(fc.double({ min: -4, max: 0, noNaN: true }), { minLength: width, maxLength: width }),
            mask: fc.array(fc.constantFrom(0, 1), { minLength: width, maxLength: width }),
            tokenAdvantages: fc.array(fc.double({ min: -3, max: 3, noNaN: true }), {
              minLength: width,
              maxLength: width,
            }),
          }),
        ),
        { minLength: n, maxLength: n },
      ),
      advantages: fc.array(fc.double({ min: -3, max: 3, noNaN: true }), { minLength: n, maxLength: n }),
      groups: fc.array(fc.constantFrom("a", "b", "c"), { minLength: n, maxLength: n }),
      perToken: fc.boolean(),
      // Microbatch id of each sequence: any partition, including empty and singleton parts.
      assignment: fc.array(fc.integer({ min: 0, max: 3 }), { minLength: n, maxLength: n }),
      clip: fc.record({
        low: fc.double({ min: 0, max: 0.5, noNaN: true }),
        high: fc.double({ min: 0, max: 0.5, noNaN: true }),
        dual: fc.option(fc.double({ min: 1.01, max: 5, noNaN: true }), { nil: null }),
      }),
    }),
  )
  .map(({ rows, advantages, groups, perToken, assignment, clip }) => {
    const batch: PolicyBatch = {
      logp: rows.map((r) => r.logp),
      logpOld: rows.map((r) => r.logpOld),
      mask: rows.map((r) => r.mask),
      advantages: perToken ? rows.map((r) => r.tokenAdvantages) : advantages,
      groups,
    };
    const partition = [0, 1, 2, 3].map((b) => assignment.flatMap((a, i) => (a === b ? [i] : [])));
    return { batch, partition, clip };
  });

/** The reductions written out directly over the whole batch, as in docs/semantics.md §5. */
function directLoss(batch: PolicyBatch, clip: ClipOptions, reduction: Reduction): number {
  const N = batch.mask.length;
  const s: number[] = [];
  const L: number[] = [];
  for (let i = 0; i < N; i++) {
    let tot = 0;
    let len = 0;
    batch.mask[i]!.forEach((m, k) => {
      if (!m) return;
      const a = batch.advantages[i]!;
      const adv = typeof a === "number" ? a : a[k]!;
      const rho = Math.exp(batch.logp[i]![k]! - batch.logpOld[i]![k]!);
      let u = Math.min(rho * adv, Math.min(Math.max(rho, 1 - clip.low), 1 + clip.high) * adv);
      if (clip.dual !== null && adv < 0) u = Math.max(u, clip.dual * adv);
      tot += u;
      len += 1;
    });
    s.push(tot);
    L.push(len);
  }
  const T = L.reduce((x, y) => x + y, 0);
  const sum = s.reduce((x, y) => x + y, 0);
  switch (reduction.mode) {
    case "token_mean":
      return T === 0 ? 0 : -sum / T;
    case "seq_mean_token_mean":
      return -s.reduce((acc, si, i) => acc + (L[i] ? si / L[i] : 0), 0) / N;
    case "seq_mean_token_sum":
      return -sum / N;
    case "constant":
      return -sum / (N * reduction.constant);
    case "group_token_mean": {
      const names = [...new Set(batch.groups)];
      const per = names.map((g) => {
        const idx = batch.groups!.flatMap((x, i) => (x === g ? [i] : []));
        const gl = idx.reduce((acc, i) => acc + L[i]!, 0);
        return gl === 0 ? 0 : idx.reduce((acc, i) => acc + s[i]!, 0) / gl;
      });
      return -per.reduce((x, y) => x + y, 0) / names.length;
    }
  }
}

describe("microbatching never changes the loss", () => {
  for (const reduction of allReductions) {
    it(`${reduction.mode}: the sum of microbatch contributions equals the whole-batch loss, for any partition`, () => {
      fc.assert(
        fc.property(batchArb, ({ batch, partition, clip }) => {
          const whole = policyLoss(batch, { clip, reduction });
          const direct = directLoss(batch, clip, reduction);
          expect(whole.loss).toBeCloseTo(direct, 9);
          const { total, parts } = partitionedLoss(batch, partition, { clip, reduction });
          expect(parts).toHaveLength(partition.length);
          expect(Math.abs(total.loss - whole.loss)).toBeLessThanOrEqual(1e-12 * Math.max(1, Math.abs(whole.loss)));
          expect(total.stats.tokens).toBe(whole.stats.tokens);
          expect(total.stats.clipped).toBe(whole.stats.clipped);
          expect(total.stats.dualClipped).toBe(whole.stats.dualClipped);
        }),
        { numRuns: 300 },
      );
    });
  }

  it("the naive mean of microbatch token means DOES differ from the whole-step token_mean (the bug made impossible)", () => {
    // Sequence 0: one target with u = 1; sequence 1: three targets with u = 0.
    const batch: PolicyBatch = {
      logp: [
        [0, 0, 0],
        [0, 0, 0],
      ],
      logpOld: [
        [0, 0, 0],
        [0, 0, 0],
      ],
      mask: [
        [1, 0, 0],
        [1, 1, 1],
      ],
      advantages: [1, 0],
    };
    const options = { clip: sym, reduction: { mode: "token_mean" } as const };
    const global = policyLoss(batch, options).loss;
    expect(global).toBeCloseTo(-0.25, 12);
    // What a trainer that averages per-microbatch means gets: (-1 + 0)/2.
    const naive = ([[0], [1]] as const).map(
      (mb) =>
        policyLoss(
          {
            ...batch,
            logp: mb.map((i) => batch.logp[i]!),
            logpOld: mb.map((i) => batch.logpOld[i]!),
            mask: mb.map((i) => batch.mask[i]!),
            advantages: mb.map((i) => (batch.advantages as number[])[i]!),
          },
          options,
        ).loss,
    );
    expect((naive[0]! + naive[1]!) / 2).toBeCloseTo(-0.5, 12);
    // Through the API, each microbatch is divided by the global count and the sum is exact.
    const d = reductionDenominators(batch);
    const parts = [microbatchLoss(batch, [0], d, options).loss, microbatchLoss(batch, [1], d, options).loss];
    expect(parts[0]! + parts[1]!).toBeCloseTo(global, 15);

    // And on random batches, the naive mean differs in general.
    let differs = 0;
    for (const { batch: b, partition } of fc.sample(batchArb, { numRuns: 200, seed: 7 })) {
      const nonEmpty = partition.filter((p) => p.length > 0 && p.some((i) => b.mask[i]!.some((m) => m === 1)));
      if (nonEmpty.length < 2) continue;
      const sub = (idx: number[]): PolicyBatch => ({
        logp: idx.map((i) => b.logp[i]!),
        logpOld: idx.map((i) => b.logpOld[i]!),
        mask: idx.map((i) => b.mask[i]!),
        advantages: idx.map((i) => b.advantages[i]!) as PolicyBatch["advantages"],
      });
      const naiveMean =
        nonEmpty.map((p) => policyLoss(sub(p), options).loss).reduce((x, y) => x + y, 0) / nonEmpty.length;
      if (Math.abs(naiveMean - policyLoss(b, options).loss) > 1e-9) differs++;
    }
    expect(differs).toBeGreaterThan(50);
  });

  it("denominators belong to one batch: a microbatch's own counts are refused", () => {
    const batch: PolicyBatch = {
      logp: [
        [0, 0],
        [0, 0],
      ],
      logpOld: [
        [0, 0],
        [0, 0],
      ],
      mask: [
        [1, 1],
        [1, 0],
      ],
      advantages: [1, 2],
    };
    const options = { clip: sym, reduction: { mode: "token_mean" } as const };
    const own = reductionDenominators({ mask: [batch.mask[0]!] });
    expect(() => microbatchLoss(batch, [0], own, options)).toThrow(/compute them once over the whole optimizer step/);
    const other = reductionDenominators({
      mask: [
        [1, 0],
        [1, 0],
      ],
    });
    expect(() => microbatchLoss(batch, [0], other, options)).toThrow(/belong to another batch/);
    expect(() => partitionedLoss(batch, [[0], [0, 1]], options)).toThrow(/partition.*sequence 0 appears 2 times/);
    expect(() => partitionedLoss(batch, [[0]], options)).toThrow(/sequence 1 appears 0 times/);
    // Denominators cannot be written by hand: only reductionDenominators makes them.
    // @ts-expect-error the brand is missing
    const forged: ReductionDenominators = {
      tokens: 1,
      sequences: 2,
      sequenceTokens: [2, 1],
      groups: 0,
      groupTokens: [],
      groupOf: [],
    };
    expect(forged.tokens).toBe(1);
  });

  it("counts what the trainer protocol sends: tokens, sequences, per-sequence and per-group tokens", () => {
    const d = reductionDenominators({
      mask: [
        [1, 1, 0],
        [1, 0, 0],
        [0, 0, 0],
        [1, 1, 1],
      ],
      groups: ["x", "y", "x", "y"],
    });
    expect({
      tokens: d.tokens,
      sequences: d.sequences,
      sequenceTokens: d.sequenceTokens,
      groups: d.groups,
      groupTokens: d.groupTokens,
      groupOf: d.groupOf,
    }).toEqual({
      tokens: 6,
      sequences: 4,
      sequenceTokens: [2, 1, 0, 3],
      groups: 2,
      groupTokens: [2, 4],
      groupOf: [0, 1, 0, 1],
    });
  });
});
