// "Did you mean" is bounded: the distance stops past the bound it is given, and a word longer
// than MAX_SUGGESTED_LENGTH gets no suggestion, so that a value megabytes long costs nothing.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { closest, editDistance, MAX_SUGGESTED_LENGTH } from "../../src/contracts/suggest.js";

/** The whole-matrix distance with adjacent transpositions (optimal string alignment), as written in textbooks. */
function reference(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}

const word = fc.string({ unit: fc.constantFrom("a", "b", "c", "d"), maxLength: 14 });

describe("editDistance", () => {
  it("is the textbook distance when unbounded", () => {
    fc.assert(
      fc.property(word, word, (a, b) => editDistance(a, b) === reference(a, b)),
      { seed: 28, numRuns: 2000 },
    );
    expect(editDistance("kitten", "sitting")).toBe(3);
    expect(editDistance("ab", "ba")).toBe(1);
  });

  it("with a bound: the distance when within it, else bound + 1 (the search stops there)", () => {
    fc.assert(
      fc.property(
        word,
        word,
        fc.integer({ min: 0, max: 6 }),
        (a, b, max) => editDistance(a, b, max) === Math.min(reference(a, b), max + 1),
      ),
      { seed: 29, numRuns: 2000 },
    );
    expect(editDistance("kitten", "sitting", 1)).toBe(2);
    // Megabytes against a short word: the length difference alone settles it.
    expect(editDistance("x".repeat(2_000_000), "write", 2)).toBe(3);
    expect(editDistance("a".repeat(200_000), "b".repeat(200_000), 3)).toBe(4);
  });
});

describe("closest", () => {
  it("still suggests the closest name within a third of the word's length", () => {
    expect(closest("wirte", ["write", "step"])).toBe("write");
    expect(closest("tensorbord", ["tensorboard", "wandb", "mlflow"])).toBe("tensorboard");
    expect(closest("xyz", ["write", "step"])).toBeUndefined();
  });

  it(`suggests nothing for a word longer than ${MAX_SUGGESTED_LENGTH} characters, even one edit away`, () => {
    const long = "x".repeat(MAX_SUGGESTED_LENGTH);
    expect(closest(`${long.slice(1)}y`, [long])).toBe(long);
    expect(closest(`${long}y`, [long])).toBeUndefined();
    expect(closest("x".repeat(2_000_000), ["write", "x".repeat(2_000_001)])).toBeUndefined();
  });
});
