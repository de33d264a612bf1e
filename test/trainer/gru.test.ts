// The fused GRU kernels of the embedded trainer (src/trainer/embedded/gru.ts) against the same
// recurrence written as plain tfjs ops with tfjs's own autograd: states, and the gradients of a
// loss over every state with respect to the inputs' rows, wh and bhn, through whole sequences.
import { describe, expect, it } from "vitest";
import { initBackend, tf } from "../../src/trainer/embedded/backend.js";
import { gruNext, gruSequence } from "../../src/trainer/embedded/gru.js";
import { Rng } from "../../src/trainer/embedded/rng.js";

/** The recurrence as tfjs ops (the model's formula, docs in model.ts). */
function reference(x: tf.Tensor3D, wh: tf.Tensor2D, bhn: tf.Tensor1D): tf.Tensor3D {
  const [T, B, H3] = x.shape;
  const H = H3 / 3;
  let h: tf.Tensor = tf.zeros([B, H]);
  const hs: tf.Tensor[] = [];
  for (let t = 0; t < T; t++) {
    // Slices, not tf.unstack: tfjs's gradient of a one-output unstack fails (T = 1).
    const xt = tf.reshape(tf.slice(x, [t, 0, 0], [1, B, H3]), [B, H3]);
    const [xr, xz, xn] = tf.split(xt, 3, 1) as [tf.Tensor, tf.Tensor, tf.Tensor];
    const [hr, hz, hn] = tf.split(tf.matMul(h, wh), 3, 1) as [tf.Tensor, tf.Tensor, tf.Tensor];
    const r = tf.sigmoid(tf.add(xr, hr));
    const z = tf.sigmoid(tf.add(xz, hz));
    const n = tf.tanh(tf.add(xn, tf.mul(r, tf.add(hn, bhn))));
    h = tf.add(n, tf.mul(z, tf.sub(h, n)));
    hs.push(h);
  }
  return tf.stack(hs) as tf.Tensor3D;
}

function random(rng: Rng, shape: number[], scale: number): tf.Tensor {
  const n = shape.reduce((a, b) => a * b, 1);
  return tf.tensor(
    Float32Array.from({ length: n }, () => (rng.uniform() * 2 - 1) * scale),
    shape,
  );
}

function maxAbs(a: tf.Tensor, b: tf.Tensor): number {
  return tf.tidy(() => tf.max(tf.abs(tf.sub(a, b))).dataSync()[0] as number);
}

function maxNorm(t: tf.Tensor): number {
  return tf.tidy(() => tf.max(tf.abs(t)).dataSync()[0] as number);
}

describe("the fused GRU kernels", () => {
  for (const [T, B, H] of [
    [1, 1, 4],
    [7, 3, 8],
    [40, 5, 16],
  ] as const) {
    it(`give tfjs autograd's states and gradients over a sequence (T ${T}, B ${B}, H ${H})`, async () => {
      await initBackend();
      const rng = new Rng(T * 100 + B, 2);
      const x = random(rng, [T, B, 3 * H], 1.5) as tf.Tensor3D;
      const wh = random(rng, [H, 3 * H], 1 / Math.sqrt(H)) as tf.Tensor2D;
      const bhn = random(rng, [H], 0.5) as tf.Tensor1D;
      const weights = random(rng, [T, B, H], 1);
      const loss = (f: typeof reference) => (a: tf.Tensor, b: tf.Tensor, c: tf.Tensor) =>
        tf.sum<tf.Scalar>(tf.mul(f(a as tf.Tensor3D, b as tf.Tensor2D, c as tf.Tensor1D), weights));
      const before = tf.memory().numTensors;
      tf.tidy(() => {
        expect(maxAbs(gruSequence(x, wh, bhn), reference(x, wh, bhn))).toBeLessThan(1e-6);
        const fused = tf.grads(loss(gruSequence))([x, wh, bhn]);
        const plain = tf.grads(loss(reference))([x, wh, bhn]);
        ["x", "wh", "bhn"].forEach((name, i) => {
          const [f, p] = [fused[i] as tf.Tensor, plain[i] as tf.Tensor];
          expect(f.shape, name).toEqual(p.shape);
          expect(maxAbs(f, p), name).toBeLessThan(1e-5 * Math.max(1, maxNorm(p)));
        });
      });
      // Nothing the forward saved for the backward outlives the gradient.
      expect(tf.memory().numTensors).toBe(before);
    });
  }

  it("take one generation step as the sequence's first step, row by row", async () => {
    await initBackend();
    const rng = new Rng(3, 4);
    const [B, H] = [4, 8];
    const x = random(rng, [1, B, 3 * H], 1) as tf.Tensor3D;
    const wh = random(rng, [H, 3 * H], 0.3) as tf.Tensor2D;
    const bhn = random(rng, [H], 0.5) as tf.Tensor1D;
    const h0 = tf.zeros([B, H]);
    const stepped = gruNext(h0, tf.squeeze(x, [0]), wh, bhn);
    expect(Array.from(stepped.dataSync())).toEqual(Array.from(tf.squeeze(gruSequence(x, wh, bhn), [0]).dataSync()));
  });
});
