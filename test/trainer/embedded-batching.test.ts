// How the embedded trainer cuts a batch into chunks (batching.ts) and answers running out of its
// WebAssembly memory (errors.ts). A chunk's read-out attention holds [B, heads, Tq, T] scores, so
// a batch of long generated sequences used to be one chunk past the 4 GB heap, and a train_step
// failed as an internal "memory access out of bounds"; its logits hold [B x Tq, vocabulary].
import { describe, expect, it } from "vitest";
import { ragged, type TrainStepParams } from "../../src/contracts/trainer-protocol.js";
import { denominatorsOf } from "../../src/runtime/update/train-batches.js";
import { tf } from "../../src/trainer/embedded/backend.js";
import { chunksByCost } from "../../src/trainer/embedded/batching.js";
import { outOfMemory } from "../../src/trainer/embedded/errors.js";
import { chunkBudget, READOUT_LOGITS_PER_CHUNK, READOUT_SCORES_PER_CHUNK } from "../../src/trainer/embedded/state.js";
import { EOS, ROLE_IDS } from "../../src/trainer/embedded/tokenizer.js";
import { TinyTrainer } from "../../src/trainer/embedded/trainer.js";
import { tinyConfigure } from "../helpers/tiny-policy.js";

describe("embedded trainer batching", () => {
  const lengths = [10, 10, 10, 10];

  it("keeps a batch whole while both budgets hold", () => {
    expect(
      chunksByCost(
        [0, 1, 2, 3],
        (i) => lengths[i]!,
        () => 5,
        { tokens: 40, scores: 200, rows: 1e9 },
      ),
    ).toEqual([[0, 1, 2, 3]]);
  });

  it("cuts by padded tokens (max length x count)", () => {
    expect(
      chunksByCost(
        [0, 1, 2, 3],
        (i) => lengths[i]!,
        () => 5,
        { tokens: 20, scores: 1e9, rows: 1e9 },
      ),
    ).toEqual([
      [0, 1],
      [2, 3],
    ]);
  });

  it("cuts by read-out scores (max length x max queries x count), the longest sequence setting the size", () => {
    // 10 tokens with 5 queries: 50 scores a sequence.
    expect(
      chunksByCost(
        [0, 1, 2, 3],
        (i) => lengths[i]!,
        () => 5,
        { tokens: 1e9, scores: 100, rows: 1e9 },
      ),
    ).toEqual([
      [0, 1],
      [2, 3],
    ]);
    // One sequence with 9 queries makes its chunk's rows cost 90 each.
    expect(
      chunksByCost(
        [0, 1, 2, 3],
        (i) => lengths[i]!,
        (i) => (i === 1 ? 9 : 1),
        { tokens: 1e9, scores: 180, rows: 1e9 },
      ),
    ).toEqual([
      [0, 1],
      [2, 3],
    ]);
  });

  it("cuts by read-out rows (max queries x count), each a row of logits over the vocabulary", () => {
    // Short sequences, few tokens and scores: only the rows budget cuts them.
    expect(
      chunksByCost(
        [0, 1, 2, 3],
        (i) => lengths[i]!,
        () => 3,
        { tokens: 1e9, scores: 1e9, rows: 6 },
      ),
    ).toEqual([
      [0, 1],
      [2, 3],
    ]);
    expect(
      chunksByCost(
        [0, 1, 2, 3],
        (i) => lengths[i]!,
        (i) => (i === 2 ? 5 : 1),
        { tokens: 1e9, scores: 1e9, rows: 6 },
      ),
    ).toEqual([[0, 1], [2], [3]]);
  });

  it("puts a sequence above the budget in a chunk of its own rather than dropping it", () => {
    expect(
      chunksByCost(
        [0, 1],
        (i) => [1000, 2][i]!,
        () => 999,
        { tokens: 100, scores: 100, rows: 1e9 },
      ),
    ).toEqual([[0], [1]]);
  });

  it("defaults the read-out budgets, takes the ones configured, and divides the logits by the vocabulary", () => {
    const shape = { embed: 8, hidden: 8, heads: 2, keyDim: 4 };
    expect(chunkBudget({ ...shape, chunkTokens: 123 }, 1024)).toEqual({
      tokens: 123,
      scores: READOUT_SCORES_PER_CHUNK,
      rows: READOUT_LOGITS_PER_CHUNK / 1024,
    });
    expect(chunkBudget({ ...shape, chunkTokens: 123, chunkScores: 7, chunkLogits: 1000 }, 300)).toEqual({
      tokens: 123,
      scores: 7,
      rows: 3,
    });
    // A vocabulary larger than the budget still leaves one row (a sequence alone is a chunk).
    expect(chunkBudget({ ...shape, chunkTokens: 123, chunkLogits: 10 }, 300).rows).toBe(1);
  });
});

describe("embedded trainer memory over a large vocabulary", () => {
  // 200,000 SFT records of a few words each made a vocabulary of 200,000 words and one chunk of
  // a few tokens a sequence: within the token and score budgets, but [rows, V] logits far past
  // the 4 GB heap ("out_of_memory ... a sequence of this request is too long"). Here 300 such
  // sequences over 3,000 words: one chunk peaks near 310 MB (about 27 copies of its [900, 3117]
  // logits alive through the backward pass); a logits budget of 2^18 values keeps it near 36 MB.
  it("keeps a train step's peak within the read-out logits budget, however many short sequences", async () => {
    const t = new TinyTrainer({
      embed: 16,
      hidden: 32,
      heads: 2,
      keyDim: 8,
      chunkTokens: 65_536,
      chunkLogits: 2 ** 18,
    });
    await t.init();
    t.configure(
      tinyConfigure(
        1,
        Array.from({ length: 3000 }, (_, i) => `w${i}`),
      ),
    );
    const word = (i: number) => 100 + (i % 2900);
    const ids = Array.from({ length: 300 }, (_, i) =>
      Int32Array.from([ROLE_IDS.user, word(i), EOS, word(i * 7), word(i * 13), EOS]),
    );
    const masks = ids.map(() => Uint8Array.from([0, 0, 0, 1, 1, 1]));
    const step: TrainStepParams = {
      ids: ragged(ids, Int32Array),
      loss_mask: ragged(masks, Uint8Array),
      advantages: ragged(
        masks.map((m) => Float32Array.from(m)),
        Float32Array,
      ),
      old_logprobs: null,
      ref_logprobs: null,
      groups: Int32Array.from(ids.keys()),
      reduction: { mode: "token_mean" },
      denominators: denominatorsOf(
        masks,
        ids.map((_, i) => `g${i}`),
      ),
      microbatches: 1,
      clip: { low: 0.2, high: 0.28, dual: null },
      kl: { coef: 0, estimator: "k3", placement: "loss" },
      sampling: { temperature: 1, top_p: 1, top_k: 0 },
      critic: null,
    };
    let loss = Number.NaN;
    const profile = await tf.profile(() => {
      loss = t.computeGradients(step).loss;
    });
    expect(loss).toBeCloseTo(-1, 4); // ratio 1, advantage 1 on every target
    expect(profile.peakBytes).toBeLessThan(64 * 2 ** 20);
  }, 60_000);
});

describe("embedded trainer out of memory", () => {
  it("answers the wasm heap's end as out_of_memory, with what makes a request smaller", () => {
    const heapEnd = new Error("memory access out of bounds");
    heapEnd.name = "RuntimeError"; // what WebAssembly.RuntimeError reports
    const answer = outOfMemory("train_step", heapEnd);
    expect(answer?.code).toBe("out_of_memory");
    expect(answer?.message).toContain(
      "train_step: the embedded trainer ran out of its 4 GB WebAssembly memory (memory access out of bounds)",
    );
    expect(answer?.message).toContain("policy.sampling.max_new_tokens");
    expect(
      outOfMemory("train_step", new RangeError("WebAssembly.Memory.grow(): Maximum memory size exceeded"))?.code,
    ).toBe("out_of_memory");
    // A view of a tensor past the heap (a 40 MB SFT record alone in its chunk) was answered as internal.
    expect(outOfMemory("train_step", new RangeError("Invalid typed array length: 1610613696"))?.code).toBe(
      "out_of_memory",
    );
  });

  it("leaves every other failure to be answered as it is", () => {
    expect(outOfMemory("train_step", new Error("memory access out of bounds"))).toBeUndefined();
    expect(outOfMemory("train_step", new RangeError("context: 3 is more than the 2 messages"))).toBeUndefined();
    expect(outOfMemory("train_step", "a string")).toBeUndefined();
  });
});
