// How the embedded trainer cuts a batch into chunks (batching.ts) and answers running out of its
// WebAssembly memory (errors.ts). A chunk's read-out attention holds [B, heads, Tq, T] scores, so
// a batch of long generated sequences used to be one chunk past the 4 GB heap, and a train_step
// failed as an internal "memory access out of bounds".
import { describe, expect, it } from "vitest";
import { chunksByCost } from "../../src/trainer/embedded/batching.js";
import { outOfMemory } from "../../src/trainer/embedded/errors.js";
import { chunkBudget, READOUT_SCORES_PER_CHUNK } from "../../src/trainer/embedded/state.js";

describe("embedded trainer batching", () => {
  const lengths = [10, 10, 10, 10];

  it("keeps a batch whole while both budgets hold", () => {
    expect(chunksByCost([0, 1, 2, 3], (i) => lengths[i]!, () => 5, { tokens: 40, scores: 200 })).toEqual([[0, 1, 2, 3]]);
  });

  it("cuts by padded tokens (max length x count)", () => {
    expect(chunksByCost([0, 1, 2, 3], (i) => lengths[i]!, () => 5, { tokens: 20, scores: 1e9 })).toEqual([
      [0, 1],
      [2, 3],
    ]);
  });

  it("cuts by read-out scores (max length x max queries x count), the longest sequence setting the size", () => {
    // 10 tokens with 5 queries: 50 scores a sequence.
    expect(chunksByCost([0, 1, 2, 3], (i) => lengths[i]!, () => 5, { tokens: 1e9, scores: 100 })).toEqual([
      [0, 1],
      [2, 3],
    ]);
    // One sequence with 9 queries makes its chunk's rows cost 90 each.
    expect(chunksByCost([0, 1, 2, 3], (i) => lengths[i]!, (i) => (i === 1 ? 9 : 1), { tokens: 1e9, scores: 180 })).toEqual([[0, 1], [2, 3]]);
  });

  it("puts a sequence above the budget in a chunk of its own rather than dropping it", () => {
    expect(chunksByCost([0, 1], (i) => [1000, 2][i]!, () => 999, { tokens: 100, scores: 100 })).toEqual([[0], [1]]);
  });

  it("defaults the read-out budget, and takes the one configured", () => {
    const shape = { embed: 8, hidden: 8, heads: 2, keyDim: 4 };
    expect(chunkBudget({ ...shape, chunkTokens: 123 })).toEqual({ tokens: 123, scores: READOUT_SCORES_PER_CHUNK });
    expect(chunkBudget({ ...shape, chunkTokens: 123, chunkScores: 7 })).toEqual({ tokens: 123, scores: 7 });
  });
});

describe("embedded trainer out of memory", () => {
  it("answers the wasm heap's end as out_of_memory, with what makes a request smaller", () => {
    const heapEnd = new Error("memory access out of bounds");
    heapEnd.name = "RuntimeError"; // what WebAssembly.RuntimeError reports
    const answer = outOfMemory("train_step", heapEnd);
    expect(answer?.code).toBe("out_of_memory");
    expect(answer?.message).toContain("train_step: the embedded trainer ran out of its 4 GB WebAssembly memory (memory access out of bounds)");
    expect(answer?.message).toContain("policy.sampling.max_new_tokens");
    expect(outOfMemory("train_step", new RangeError("WebAssembly.Memory.grow(): Maximum memory size exceeded"))?.code).toBe("out_of_memory");
  });

  it("leaves every other failure to be answered as it is", () => {
    expect(outOfMemory("train_step", new Error("memory access out of bounds"))).toBeUndefined();
    expect(outOfMemory("train_step", new RangeError("context: 3 is more than the 2 messages"))).toBeUndefined();
    expect(outOfMemory("train_step", "a string")).toBeUndefined();
  });
});
