// The embedded model's generation step for one sequence must not depend on the other sequences
// of its generate request (docs/protocol.md: seeds and results per prompt): when some rows of a batch
// do not take the step (their prompt is shorter, or their turn ended), the rows that do must get
// exactly the state they would get alone. Otherwise a run's samples depend on how concurrent
// episodes happened to be batched, and a resumed run drifts from an uninterrupted one.
import { describe, expect, it } from "vitest";
import { initBackend, tf } from "../../src/trainer/embedded/backend.js";
import { gruStep, inputTable, paramSpecs, ParamSet } from "../../src/trainer/embedded/model.js";
import { Rng } from "../../src/trainer/embedded/rng.js";

describe("builtin:tiny generation step", () => {
  it("gives an active row bit-identically the state it gets alone, whatever the other rows do", async () => {
    await initBackend();
    const shape = { vocab: 30, embed: 8, hidden: 32, heads: 2, keyDim: 8 };
    const params = ParamSet.init(paramSpecs(shape, "policy"), new Rng(5, 1));
    const table = inputTable(params);
    const rng = new Rng(9, 3);
    let compared = 0;
    for (let trial = 0; trial < 40; trial++) {
      const n = 2 + (trial % 5);
      const h = tf.tensor2d(
        Float32Array.from({ length: n * shape.hidden }, () => rng.uniform() * 2 - 1),
        [n, shape.hidden],
      );
      const tokens = Int32Array.from({ length: n }, () => 4 + Math.floor(rng.uniform() * (shape.vocab - 4)));
      const active = Float32Array.from({ length: n }, (_, i) => (i === 0 ? 1 : (i + trial) % 2));
      const batched = gruStep(params, table, h, tokens, active).arraySync();
      for (let i = 0; i < n; i++) {
        const alone = gruStep(
          params,
          table,
          tf.slice(h, [i, 0], [1, shape.hidden]),
          tokens.subarray(i, i + 1),
        ).arraySync()[0]!;
        expect(batched[i], `trial ${trial}, row ${i}`).toEqual(active[i] ? alone : (h.arraySync()[i] as number[]));
        compared++;
      }
    }
    expect(compared).toBeGreaterThan(100);
  });
});
