// The embedded CPU trainer's train_step in-process (builtin:tiny): global denominators,
// microbatching, masking, checkpoints and determinism.
import { copyFileSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { denominatorsOf } from "../../src/runtime/update/train-batches.js";
import { ragged, row, type TrainStepParams } from "../../src/contracts/trainer-protocol.js";
import { microbatchLossF64, sequenceWeights, toReduction } from "../../src/trainer/embedded/losses.js";
import { type TinyTrainer } from "../../src/trainer/embedded/trainer.js";
import { SMALL, trainer } from "../helpers/tiny-trainer.js";

/** A fixed batch: prompt + observation tokens (not targets) around generated tokens (targets). */
function batch(
  t: TinyTrainer,
  opts: {
    microbatches?: number;
    reduction?: TrainStepParams["reduction"];
    kl?: number;
    dual?: number | null;
    sampling?: TrainStepParams["sampling"];
  } = {},
): TrainStepParams {
  const tok = t.tokenizer;
  const episodes = [
    ["Your task: take the key.", "take key", "You take the key.", "go north"],
    ["You are in the kitchen. You see a box.", "open box", "The box is empty."],
    ["Your task: put the key in the box.", "take key"],
    ["Exits: north, south.", "go south", "You are in the kitchen.", "go north"],
  ];
  const ids: Int32Array[] = [];
  const masks: Uint8Array[] = [];
  const adv: Float32Array[] = [];
  const old: Float32Array[] = [];
  const ref: Float32Array[] = [];
  episodes.forEach((ep, i) => {
    const seq: number[] = [];
    const m: number[] = [];
    ep.forEach((text, j) => {
      const generated = j % 2 === 1;
      const [enc] = tok.encodeMessages(
        [{ role: generated ? "assistant" : j === 0 ? "user" : "tool", content: text }],
        !generated,
      );
      seq.push(...enc!);
      m.push(...enc!.map(() => (generated ? 1 : 0)));
    });
    ids.push(Int32Array.from(seq));
    masks.push(Uint8Array.from(m));
    adv.push(Float32Array.from(m, (x) => (x ? (i % 2 === 0 ? 1.2 : -0.7) : 0)));
    old.push(Float32Array.from(m, (x, k) => (x ? -3 - 0.1 * ((k * 7 + i) % 5) : 0)));
    ref.push(Float32Array.from(m, (x, k) => (x ? -3.2 + 0.05 * ((k * 3 + i) % 7) : 0)));
  });
  const groups = ["a", "a", "b", "b"];
  return {
    ids: ragged(ids, Int32Array),
    loss_mask: ragged(masks, Uint8Array),
    advantages: ragged(adv, Float32Array),
    old_logprobs: ragged(old, Float32Array),
    ref_logprobs: opts.kl ? ragged(ref, Float32Array) : null,
    groups: Int32Array.from([0, 0, 1, 1]),
    reduction: opts.reduction ?? { mode: "token_mean" },
    denominators: denominatorsOf(masks, groups),
    microbatches: opts.microbatches ?? 1,
    clip: { low: 0.2, high: 0.28, dual: opts.dual ?? null },
    kl: { coef: opts.kl ?? 0, estimator: "k3", placement: "loss" },
    sampling: opts.sampling ?? { temperature: 1, top_p: 1, top_k: 0 },
    critic: null,
  };
}

function maxRelDiff(a: ReadonlyMap<string, ArrayLike<number>>, b: ReadonlyMap<string, ArrayLike<number>>): number {
  let worst = 0;
  for (const [k, x] of a) {
    const y = b.get(k)!;
    let scale = 1e-8;
    for (let i = 0; i < x.length; i++) scale = Math.max(scale, Math.abs(x[i]!));
    for (let i = 0; i < x.length; i++) worst = Math.max(worst, Math.abs(x[i]! - y[i]!) / scale);
  }
  return worst;
}

function sameBits(a: ReadonlyMap<string, Float32Array>, b: ReadonlyMap<string, Float32Array>): boolean {
  if (a.size !== b.size) return false;
  for (const [k, x] of a) {
    const y = b.get(k);
    if (!y || y.length !== x.length) return false;
    for (let i = 0; i < x.length; i++) if (!Object.is(x[i], y[i])) return false;
  }
  return true;
}

describe("builtin:tiny train_step", () => {
  it("reduces the loss on a fixed batch", async () => {
    const t = await trainer(1);
    const p = batch(t);
    const first = t.trainStep(p);
    let last = first;
    for (let i = 0; i < 15; i++) last = t.trainStep(p);
    expect(last.loss).toBeLessThan(first.loss - 0.05);
    expect(last.policy_version).toBe(16);
    expect(first).toMatchObject({ tokens: p.denominators.tokens });
    for (const k of [
      "loss",
      "policy_loss",
      "kl",
      "entropy",
      "clip_fraction",
      "ratio_mean",
      "ratio_min",
      "ratio_max",
      "grad_norm",
    ] as const)
      expect(Number.isFinite(first[k]), k).toBe(true);
  });

  it("gives the same loss and gradients with 1, 2 or 4 microbatches (and forced chunking by tokens, read-out size or read-out rows), for every reduction", async () => {
    const t = await trainer(2);
    const tiny = await trainer(2, {}, { ...SMALL, chunkTokens: 40 });
    const scoresCut = await trainer(2, {}, { ...SMALL, chunkScores: 1 }); // every sequence a chunk of its own
    const logitsCut = await trainer(2, {}, { ...SMALL, chunkLogits: 1 }); // the same, by read-out rows
    for (const reduction of [
      { mode: "token_mean" },
      { mode: "seq_mean_token_mean" },
      { mode: "seq_mean_token_sum" },
      { mode: "constant", constant: 16 },
      { mode: "group_token_mean" },
    ]) {
      const whole = t.computeGradients(batch(t, { reduction, kl: 0.1, dual: 3 }));
      for (const microbatches of [2, 4]) {
        const split = t.computeGradients(batch(t, { reduction, kl: 0.1, dual: 3, microbatches }));
        expect(Math.abs(split.loss - whole.loss), `${reduction.mode} x${microbatches}`).toBeLessThan(
          1e-5 * Math.max(1, Math.abs(whole.loss)),
        );
        expect(maxRelDiff(split.policy, whole.policy), `${reduction.mode} x${microbatches}`).toBeLessThan(1e-4);
      }
      const chunked = tiny.computeGradients(batch(tiny, { reduction, kl: 0.1, dual: 3 }));
      expect(Math.abs(chunked.loss - whole.loss)).toBeLessThan(1e-5 * Math.max(1, Math.abs(whole.loss)));
      expect(maxRelDiff(chunked.policy, whole.policy)).toBeLessThan(1e-4);
      // Cut by the read-out's attention size instead (long sequences with many targets).
      for (const cut of [scoresCut, logitsCut]) {
        const readout = cut.computeGradients(batch(cut, { reduction, kl: 0.1, dual: 3 }));
        expect(Math.abs(readout.loss - whole.loss)).toBeLessThan(1e-5 * Math.max(1, Math.abs(whole.loss)));
        expect(maxRelDiff(readout.policy, whole.policy)).toBeLessThan(1e-4);
      }
    }
  });

  it("computes the loss of docs/semantics.md: the graph equals the float64 twin over the reference's weights", async () => {
    const t = await trainer(3);
    for (const opts of [
      {},
      { reduction: { mode: "seq_mean_token_mean" } },
      { reduction: { mode: "group_token_mean" }, kl: 0.5 },
      { dual: 2 },
      { sampling: { temperature: 0.7, top_p: 0.8, top_k: 10 } },
    ] as const) {
      const p = batch(t, opts);
      const g = t.computeGradients(p);
      const lp = t.logprobs(p.ids, "current", p.sampling);
      const rows = (r: { values: ArrayLike<number>; offsets: Int32Array }) =>
        Array.from({ length: r.offsets.length - 1 }, (_, i) =>
          Array.from(r.values).slice(r.offsets[i], r.offsets[i + 1]),
        );
      const d = p.denominators;
      const weights = sequenceWeights(toReduction(p.reduction), {
        tokens: d.tokens,
        sequences: d.sequences,
        groups: d.groups,
        groupTokens: d.group_tokens,
        sequenceTokens: d.sequence_tokens,
        groupOf: p.groups,
      });
      const f64 = microbatchLossF64(
        {
          logp: rows(lp),
          logpOld: rows(p.old_logprobs!),
          mask: rows(p.loss_mask),
          advantages: rows(p.advantages),
          ...(p.ref_logprobs ? { logpRef: rows(p.ref_logprobs) } : {}),
        },
        [0, 1, 2, 3],
        weights,
        { low: p.clip.low, high: p.clip.high, dual: p.clip.dual },
        { coef: p.kl.coef, estimator: "k3" },
      );
      expect(Math.abs(g.loss - f64.loss), JSON.stringify(opts)).toBeLessThan(1e-4 * Math.max(1, Math.abs(f64.loss)));
      expect(Math.abs(g.stats.policy_loss - f64.policyLoss)).toBeLessThan(1e-4 * Math.max(1, Math.abs(f64.policyLoss)));
    }
  });

  it("takes a per-step learning rate (train_step lr) without changing the gradient, and rejects a bad one", async () => {
    const base = await trainer(5);
    const doubled = await trainer(5);
    const before = base.parameters();
    const p = batch(base);
    base.trainStep(p);
    doubled.trainStep({ ...p, lr: 6e-3 });
    // AdamW's first step moves every weight by about lr (the update is m/sqrt(v) ~ sign(g)).
    const a = base.parameters();
    const b = doubled.parameters();
    let ratio = 0;
    let n = 0;
    for (const [k, w0] of before) {
      for (let i = 0; i < w0.length; i++) {
        const da = a.get(k)![i]! - w0[i]!;
        const db = b.get(k)![i]! - w0[i]!;
        if (Math.abs(da) > 1e-5) {
          ratio += db / da;
          n++;
        }
      }
    }
    expect(ratio / n).toBeCloseTo(2, 1);
    expect(() => base.trainStep({ ...p, lr: -1 })).toThrow(/lr must be a positive finite number/);
    expect(base.handshake().capabilities.step_lr).toBe(true);
  });

  it("weights each target's policy-gradient term by is_weights (the float64 twin), not the KL term nor the statistics", async () => {
    const t = await trainer(7);
    const p = batch(t, { kl: 0.3 });
    const rows = (r: { values: ArrayLike<number>; offsets: Int32Array }) =>
      Array.from({ length: r.offsets.length - 1 }, (_, i) =>
        Array.from(r.values).slice(r.offsets[i], r.offsets[i + 1]),
      );
    const isWeights = {
      values: Float32Array.from(p.loss_mask.values, (_, k) => 0.25 + (k % 5) * 0.4),
      offsets: p.loss_mask.offsets,
    };
    const plain = t.computeGradients(p);
    const weighted = t.computeGradients({ ...p, is_weights: isWeights });
    const d = p.denominators;
    const weights = sequenceWeights(toReduction(p.reduction), {
      tokens: d.tokens,
      sequences: d.sequences,
      groups: d.groups,
      groupTokens: d.group_tokens,
      sequenceTokens: d.sequence_tokens,
      groupOf: p.groups,
    });
    const lp = t.logprobs(p.ids, "current", p.sampling);
    const f64 = microbatchLossF64(
      {
        logp: rows(lp),
        logpOld: rows(p.old_logprobs!),
        mask: rows(p.loss_mask),
        advantages: rows(p.advantages),
        logpRef: rows(p.ref_logprobs!),
        isWeights: rows(isWeights),
      },
      [0, 1, 2, 3],
      weights,
      p.clip,
      { coef: p.kl.coef, estimator: "k3" },
    );
    expect(Math.abs(weighted.stats.policy_loss - f64.policyLoss)).toBeLessThan(
      1e-4 * Math.max(1, Math.abs(f64.policyLoss)),
    );
    expect(Math.abs(weighted.stats.policy_loss - plain.stats.policy_loss)).toBeGreaterThan(1e-4);
    for (const k of ["kl", "entropy", "clip_fraction", "ratio_mean", "ratio_min", "ratio_max"] as const)
      expect(weighted.stats[k], k).toBe(plain.stats[k]);
    // Unit weights change nothing.
    const ones = t.computeGradients({
      ...p,
      is_weights: { values: new Float32Array(p.loss_mask.values.length).fill(1), offsets: p.loss_mask.offsets },
    });
    expect(ones.loss).toBe(plain.loss);
    expect(() =>
      t.computeGradients({
        ...p,
        is_weights: { values: isWeights.values.map((w, k) => (k === 3 ? -1 : w)), offsets: isWeights.offsets },
      }),
    ).toThrow(/is_weights\[3\].*finite and >= 0/);
    expect(t.handshake().capabilities.is_weights).toBe(true);
  });

  it("takes the on-policy step (old_logprobs null) as the step with old = the current log-probs: same loss, gradient and weights after it, and reports the NLL", async () => {
    const [a, b] = [await trainer(8), await trainer(8)];
    const p = batch(a, { kl: 0.1, microbatches: 2, sampling: { temperature: 0.9, top_p: 0.95, top_k: 12 } });
    const current = a.logprobs(p.ids, "current", p.sampling, p.loss_mask);
    const withOld = a.computeGradients({ ...p, old_logprobs: current });
    const onPolicy = a.computeGradients({ ...p, old_logprobs: null });
    expect(Math.abs(onPolicy.loss - withOld.loss)).toBeLessThan(1e-6);
    expect(maxRelDiff(onPolicy.policy, withOld.policy)).toBeLessThan(1e-5);
    // The ratio is exactly 1 and nothing is clipped; the NLL is the targets' mean -log p.
    expect([onPolicy.stats.ratio_min, onPolicy.stats.ratio_max, onPolicy.stats.clip_fraction]).toEqual([1, 1, 0]);
    let nll = 0;
    p.loss_mask.values.forEach((m, k) => m && (nll -= current.values[k]!));
    expect(onPolicy.stats.nll).toBeCloseTo(nll / p.denominators.tokens, 5);
    a.trainStep({ ...p, old_logprobs: current });
    b.trainStep({ ...p, old_logprobs: null });
    expect(maxRelDiff(a.parameters(), b.parameters())).toBeLessThan(1e-6);
    expect(a.handshake().capabilities.on_policy_step).toBe(true);
    expect(() => a.trainStep({ ...p, old_logprobs: ragged([new Float32Array(2)], Float32Array) })).toThrow(
      /old_logprobs must have the same sequences and lengths as ids/,
    );
  });

  it("computes log-probs only where the mask asks, equal to the unmasked ones there", async () => {
    const t = await trainer(6);
    const p = batch(t);
    const all = t.logprobs(p.ids, "current", p.sampling);
    const some = t.logprobs(p.ids, "current", p.sampling, p.loss_mask);
    for (let k = 0; k < all.values.length; k++) {
      if (p.loss_mask.values[k]) expect(Math.abs(some.values[k]! - all.values[k]!)).toBeLessThan(1e-5);
      else expect(some.values[k]).toBe(0);
    }
    expect(() => t.logprobs(p.ids, "current", null, ragged([new Uint8Array(3)], Uint8Array))).toThrow(
      /mask must have the same sequences and lengths as ids/,
    );
  });

  it("gives prompt and observation tokens no gradient", async () => {
    const t = await trainer(4);
    const p = batch(t, { kl: 0.2 });
    const base = t.computeGradients(p);
    // Garbage wherever loss_mask is 0 changes nothing.
    const scramble = (r: { values: Float32Array; offsets: Int32Array }) => ({
      values: r.values.map((v, k) => (p.loss_mask.values[k] ? v : 1e6 * (k % 2 ? 1 : -1))),
      offsets: r.offsets,
    });
    const noisy = t.computeGradients({
      ...p,
      advantages: scramble(p.advantages),
      old_logprobs: scramble(p.old_logprobs!),
      ref_logprobs: scramble(p.ref_logprobs!),
    });
    expect(noisy.loss).toBe(base.loss);
    expect(maxRelDiff(noisy.policy, base.policy)).toBe(0);
    // No targets at all: no gradient anywhere.
    const none = {
      ...p,
      loss_mask: { values: new Uint8Array(p.loss_mask.values.length), offsets: p.loss_mask.offsets },
    };
    const zero = t.computeGradients({
      ...none,
      denominators: denominatorsOf(
        Array.from({ length: 4 }, (_, i) => row(none.loss_mask, i)),
        ["a", "a", "b", "b"],
      ),
    });
    expect(zero.loss).toBe(0);
    for (const g of zero.policy.values()) expect(g.every((x) => x === 0)).toBe(true);
  });

  it("resumes from a checkpoint bit-identically (weights, AdamW moments and step, reference) and is deterministic per seed", async () => {
    const dir = path.join(mkdtempSync(path.join(tmpdir(), "arl-tiny-")), "step2");
    const kl = { coef: 0.1, estimator: "k3", placement: "loss", reference: { kind: "initial" } };
    const a = await trainer(5, { kl });
    const p = batch(a, { kl: 0.1 });
    a.trainStep(p);
    a.logprobs(p.ids, "reference", null); // snapshots the reference
    a.trainStep(p);
    a.save(dir);
    const r3 = a.trainStep(p);
    const r4 = a.trainStep(p);

    const b = await trainer(5, { kl });
    b.load(dir);
    expect(b.trainStep(p)).toEqual(r3);
    expect(b.trainStep(p)).toEqual(r4);
    expect(sameBits(b.parameters(), a.parameters())).toBe(true);
    expect(sameBits(b.parameters("reference"), a.parameters("reference"))).toBe(true);
    const ref = (x: TinyTrainer) => Array.from(x.logprobs(p.ids, "reference", null).values);
    expect(ref(b)).toEqual(ref(a));

    // Same seed, same requests: the same weights; another seed: other weights.
    const c = await trainer(5, { kl });
    expect(sameBits(c.parameters(), (await trainer(5, { kl })).parameters())).toBe(true);
    expect(sameBits(c.parameters(), (await trainer(6, { kl })).parameters())).toBe(false);
  });

  it("reset_optimizer: the next step equals a freshly configured trainer's first step from the same weights (moments and warm-up start again)", async () => {
    const root = mkdtempSync(path.join(tmpdir(), "arl-tiny-reset-"));
    const optimizer = {
      name: "adamw",
      lr: 3e-3,
      betas: [0.9, 0.999],
      eps: 1e-8,
      weight_decay: 0.01,
      grad_clip: 1,
      warmup_steps: 2,
    };
    const a = await trainer(5, { optimizer });
    const p = batch(a);
    for (let i = 0; i < 3; i++) a.trainStep(p);
    a.save(path.join(root, "trained"));
    // A fresh trainer holding a's weights: its own never-stepped checkpoint with a's model file.
    const fresh = await trainer(5, { optimizer });
    fresh.save(path.join(root, "fresh"));
    copyFileSync(path.join(root, "trained", "model.safetensors"), path.join(root, "fresh", "model.safetensors"));
    fresh.load(path.join(root, "fresh"));
    expect(sameBits(fresh.parameters(), a.parameters())).toBe(true);

    expect(a.resetOptimizer()).toEqual({ step: 0 });
    const { policy_version: _a, ...afterReset } = a.trainStep(p);
    const { policy_version: _f, ...freshStep } = fresh.trainStep(p);
    expect(afterReset).toEqual(freshStep);
    expect(sameBits(a.parameters(), fresh.parameters())).toBe(true);
    // Without the reset the step differs (momentum and the step count carry on).
    const carried = await trainer(5, { optimizer });
    carried.load(path.join(root, "trained"));
    carried.trainStep(p);
    expect(sameBits(carried.parameters(), fresh.parameters())).toBe(false);
    expect(a.handshake().capabilities.methods).toContain("reset_optimizer");
  });
});
