// generate (docs/protocol.md): prefill each prompt from its longest cached prefix, then decode one
// batched GRU step per token, each prompt sampling from its own stream seeded by seeds[i]
// (sampling.ts), so a prompt's result does not depend on the other prompts of the request.
import { ragged, type GenerateParams, type GenerateResult } from "../../contracts/trainer-protocol.js";
import { tf } from "./backend.js";
import { rows } from "./batching.js";
import { addCopyLogits, gruStep, type ModelShape } from "./model.js";
import { checkGenerate } from "./requests.js";
import { Rng } from "./rng.js";
import { sample, type SamplingParams } from "./sampling.js";
import type { TrainerState } from "./state.js";
import { samplerOf, type Sampler } from "./weights.js";
import { at } from "../../contracts/checked.js";

/** Each prompt's GRU state after its last token, and the attention keys of all its positions. */
interface Prefilled {
  readonly h: tf.Tensor2D;
  readonly keys: Float32Array[][];
  /** Prompt tokens run through the GRU (not found in the cache). */
  readonly tokens: number;
}

/** Runs the uncached tail of every prompt through the GRU, caching the prompt's state and keys. */
function prefill(shape: ModelShape, slot: Sampler, prompts: readonly Int32Array[]): Prefilled {
  const n = prompts.length;
  const { hidden: H, heads: A, keyDim: K } = shape;
  const AK = A * K;
  const init = new Float32Array(n * H);
  const done = new Int32Array(n);
  const keys: Float32Array[][] = [];
  prompts.forEach((pr, i) => {
    const hit = slot.cache.lookup(pr);
    if (hit.state) init.set(hit.state, i * H);
    done[i] = hit.length;
    keys.push(hit.keys);
  });
  let h = tf.tensor2d(init, [n, H]);
  const remaining = Math.max(0, ...prompts.map((pr, i) => pr.length - at(done, i)));
  let tokens = 0;
  if (remaining > 0) {
    const states: tf.Tensor2D[] = [h];
    for (let s = 0; s < remaining; s++) {
      const step = new Int32Array(n);
      const active = new Float32Array(n);
      for (let i = 0; i < n; i++) {
        const k = at(done, i) + s;
        const pr = at(prompts, i);
        if (k < pr.length) {
          step[i] = at(pr, k);
          active[i] = 1;
          tokens++;
        }
      }
      h = gruStep(slot.params, slot.table, h, step, active);
      states.push(h);
    }
    const keyData = tf
      .tidy(() => tf.matMul(tf.concat(states.slice(1), 0), slot.params.get("wk")))
      .dataSync() as Float32Array; // [remaining*n, AK]
    const last = h.dataSync() as Float32Array;
    for (const st of states.slice(0, -1)) st.dispose();
    prompts.forEach((pr, i) => {
      const from = at(done, i);
      const prKeys = at(keys, i);
      for (let k = from; k < pr.length; k++) {
        const r = (k - from) * n + i;
        prKeys.push(keyData.slice(r * AK, (r + 1) * AK));
      }
      if (from < pr.length) slot.cache.insert(pr, prKeys, last.slice(i * H, (i + 1) * H));
    });
  }
  return { h, keys, tokens };
}

interface Decoding {
  readonly maxNew: number;
  readonly sampling: SamplingParams;
  readonly stop: ReadonlySet<number>;
  readonly seeds: ArrayLike<number>;
}

/**
 * Samples up to `maxNew` tokens per prompt: per step one batched GRU step and one read of
 * [h wo + bo | h wq | h wk]; the contexts are cached at the end with their last state.
 */
function decodeTokens(
  shape: ModelShape,
  slot: Sampler,
  prompts: readonly Int32Array[],
  start: Prefilled,
  d: Decoding,
): { out: number[][]; lps: number[][]; finish: ("stop" | "length")[] } {
  const n = prompts.length;
  const policy = slot.params;
  const { hidden: H, vocab: V, heads: A, keyDim: K } = shape;
  const AK = A * K;
  const { maxNew, sampling, stop } = d;
  const keys = start.keys;
  let h = start.h;
  const out: number[][] = prompts.map(() => []);
  const lps: number[][] = prompts.map(() => []);
  const ctx: number[][] = prompts.map((pr) => Array.from(pr));
  const finish: ("stop" | "length")[] = prompts.map(() => "length");
  const running = new Uint8Array(n).fill(maxNew > 0 ? 1 : 0);
  const fed = new Uint8Array(n);
  const rngs = Array.from(d.seeds, (s) => new Rng(Number(s) >>> 0, 7));
  const scratch = new Float64Array(V);
  const logits = new Float64Array(V);
  const width = V + 2 * AK;
  const wk = policy.get("wk");
  const heads = tf.tidy(() => tf.concat([policy.get("wo"), policy.get("wq"), wk], 1));
  const bias = tf.tidy(() => tf.concat([policy.get("bo"), tf.zeros([2 * AK])]));
  const readHeads = (): Float32Array => {
    const t = tf.tidy(() => tf.add(tf.matMul(h, heads), bias));
    const v = t.dataSync() as Float32Array;
    t.dispose();
    return v;
  };
  for (let step = 0; step < maxNew && running.some((r) => r === 1); step++) {
    const values = readHeads();
    const tokens = new Int32Array(n);
    fed.fill(0);
    for (let i = 0; i < n; i++) {
      const sampled = at(out, i);
      const rowKeys = at(keys, i);
      if (step > 0 && sampled.length === step) rowKeys.push(values.slice(i * width + V + AK, (i + 1) * width)); // key of the token fed last step
      if (!running[i]) continue;
      const row0 = i * width;
      const context = at(ctx, i);
      addCopyLogits(
        shape,
        slot.readout,
        values.subarray(row0, row0 + V),
        values.subarray(row0 + V, row0 + V + AK),
        rowKeys,
        context,
        logits,
      );
      const { id, logprob } = sample(logits, sampling, at(rngs, i), scratch);
      sampled.push(id);
      at(lps, i).push(logprob);
      context.push(id);
      tokens[i] = id;
      fed[i] = 1;
      if (stop.has(id)) {
        finish[i] = "stop";
        running[i] = 0;
      } else if (sampled.length >= maxNew) running[i] = 0;
    }
    // Feed the sampled tokens (the last one too: the next turn's prompt starts with this state).
    const next = gruStep(policy, slot.table, h, tokens, Float32Array.from(fed));
    h.dispose();
    h = next;
  }
  if (maxNew > 0 && n > 0) {
    const values = readHeads();
    const states = h.dataSync() as Float32Array;
    prompts.forEach((_, i) => {
      if (at(out, i).length === 0) return;
      const rowKeys = at(keys, i);
      const context = at(ctx, i);
      // The key of the token fed last; a row that stopped before the last step has it already.
      if (rowKeys.length < context.length) rowKeys.push(values.slice(i * width + V + AK, (i + 1) * width));
      slot.cache.insert(context, rowKeys, states.slice(i * H, (i + 1) * H));
    });
  }
  heads.dispose();
  bias.dispose();
  h.dispose();
  return { out, lps, finish };
}

export function generate(state: TrainerState, p: GenerateParams): GenerateResult {
  const { shape } = state.conf;
  const slot = samplerOf(state, p.policy);
  checkGenerate(p, shape.vocab);
  const prompts = rows(p.prompts);
  const started = performance.now();
  const prefilled = prefill(shape, slot, prompts);
  const sampling: SamplingParams = { temperature: p.temperature, top_p: p.top_p, top_k: p.top_k };
  const { out, lps, finish } = decodeTokens(shape, slot, prompts, prefilled, {
    maxNew: p.max_new_tokens,
    sampling,
    stop: new Set(p.stop_ids),
    seeds: p.seeds,
  });
  state.timing.generateTokens = out.reduce((s, o) => s + o.length, 0);
  state.timing.prefillTokens = prefilled.tokens;
  state.timing.generateSeconds = (performance.now() - started) / 1000;
  return {
    ids: ragged(out, Int32Array),
    logprobs: ragged(
      lps.map((l) => Float32Array.from(l)),
      Float32Array,
    ),
    finish,
    policy_version: slot.version,
  };
}
