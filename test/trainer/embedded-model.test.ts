// The embedded CPU trainer's model pieces (builtin:tiny): the read-out's recency heads, the word
// tokenizer, and the bound on the vocabulary.
import { describe, expect, it } from "vitest";
import { addCopyLogits, recencySlopes } from "../../src/trainer/embedded/model.js";
import { WordTokenizer } from "../../src/trainer/embedded/tokenizer.js";
import { EMBEDDED_VOCABULARY_LIMIT } from "../../src/contracts/trainer-protocol.js";
import { VOCAB } from "../helpers/tiny-trainer.js";

describe("builtin:tiny read-out", () => {
  it("has one head without recency and heads that prefer recent positions, in both the graph and generation's read-out", () => {
    expect(recencySlopes(4)).toEqual([0, 2 ** -6, 2 ** -4, 2 ** -2]);
    expect(recencySlopes(1)).toEqual([0]);
    // Content scores all 0 (zero query): head 0 averages the context, a recency head favours its end.
    const shape = { vocab: 4, embed: 4, hidden: 4, heads: 2, keyDim: 2 };
    const emb = Float32Array.from({ length: 16 }, (_, i) => (i % 5 === 0 ? 1 : 0)); // one-hot embeddings
    const ids = [0, 0, 0, 1, 1, 2, 2, 2, 2, 3];
    const keys = ids.map(() => new Float32Array(4));
    const copy = (cs: number[]) => {
      const out = new Float64Array(4);
      addCopyLogits(
        shape,
        { emb, cs: Float32Array.from(cs) },
        new Float32Array(4),
        new Float32Array(4),
        keys,
        ids,
        out,
      );
      return Array.from(out);
    };
    const global = copy([1, 0]);
    const recent = copy([0, 1]);
    expect(global.map((x) => x * ids.length)).toEqual([3, 2, 4, 1].map((x) => expect.closeTo(x, 9)));
    // The recency head weighs position j by exp(-m (9 - j)), m = 2^-4, normalised.
    const w = ids.map((_, j) => Math.exp(-(2 ** -4) * (ids.length - 1 - j)));
    const z = w.reduce((a, b) => a + b, 0);
    expect(recent).toEqual(
      [0, 1, 2, 3].map((v) =>
        expect.closeTo(
          ids.reduce((acc, id, j) => acc + (id === v ? w[j]! / z : 0), 0),
          9,
        ),
      ),
    );
    expect(recent[3]! / recent[0]!).toBeGreaterThan(global[3]! / global[0]!);
  });
});

describe("builtin:tiny tokenizer", () => {
  it("round-trips text, spelling unknown words in bytes, and applies the chat template", () => {
    const tok = new WordTokenizer(VOCAB);
    for (const text of [
      "You see a key.",
      "Exits: north, south.",
      "You can't go west: the door is locked!",
      "héllo wörld (zzz) 'q' done",
      "Your task:\nput the key in the box.",
      " x  y",
      "a\tb",
    ]) {
      // Exact, up to whitespace between pieces (one space), as documented in tokenizer.ts.
      expect(tok.decode(tok.encodeText(text))).toBe(text === "a\tb" ? "a b" : text);
    }
    // Known words are one token each; punctuation needs no glue in the default layout.
    expect(tok.encodeText("You see a key.")).toHaveLength(5);
    const [user, assistant] = tok.encodeMessages(
      [
        { role: "user", content: "take key" },
        { role: "assistant", content: "take key" },
      ],
      false,
    );
    expect(tok.decode(user!)).toBe("take key");
    expect(user![0]).toBe(5); // <user>
    expect(user!.slice(-2)).toEqual([2, 7]); // <eos>, then the <assistant> generation prompt
    expect(assistant).toEqual([...tok.encodeText("take key"), 2]); // exactly what the model generates
  });
});

describe("builtin:tiny's vocabulary is bounded", () => {
  it("takes at most EMBEDDED_VOCABULARY_LIMIT words of a vocabulary; the rest are spelled in bytes and still round-trip", () => {
    const base = new WordTokenizer([]).words.length;
    const words = Array.from({ length: EMBEDDED_VOCABULARY_LIMIT + 500 }, (_, i) => `w${i}`);
    const tok = new WordTokenizer(words);
    expect(tok.words.length).toBe(base + EMBEDDED_VOCABULARY_LIMIT);
    expect(tok.encodeText(`w${EMBEDDED_VOCABULARY_LIMIT - 1}`)).toHaveLength(1);
    const past = `w${EMBEDDED_VOCABULARY_LIMIT + 10}`;
    expect(tok.encodeText(past).length).toBeGreaterThan(1);
    expect(tok.decode(tok.encodeText(`say ${past} now`))).toBe(`say ${past} now`);
  });
});
