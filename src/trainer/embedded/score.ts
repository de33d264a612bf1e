// logprobs and values (docs/protocol.md): scoring whole sequences with a weight slot, in chunks of
// the padded-token budget (batching.ts; the cut never changes a result).
import { ragged, type Methods, type Ragged } from "../../contracts/trainer-protocol.js";
import { tf } from "./backend.js";
import { chunksOf, rows, timeMajor } from "./batching.js";
import { criticValues, gruStates, readoutLogits, type Query } from "./model.js";
import { checkIds, checkLogprobs } from "./requests.js";
import { keepMask, temperatureOf, truncates } from "./sampling.js";
import { chunkBudget, type TrainerState } from "./state.js";
import { scoringWeights } from "./weights.js";
import { invalid } from "./errors.js";
import { at, defined } from "../../contracts/checked.js";

/** logprobs[k] = log p(ids[k] | ids[:k]) (0 at k = 0, and wherever `mask` is 0). */
export function logprobs(state: TrainerState, p: Methods["logprobs"][0]): Ragged<Float32Array> {
  const { shape } = state.conf;
  const mask = p.mask ?? null;
  checkLogprobs(p.ids, mask, shape.vocab);
  const wanted = mask ? rows(mask) : null;
  const params = scoringWeights(state, p.policy);
  const sampling = p.sampling;
  const seqs = rows(p.ids);
  const out = seqs.map((s) => new Float32Array(s.length));
  const V = shape.vocab;
  const tau = temperatureOf(sampling);
  const trunc = truncates(sampling, V);
  // Read-out queries per sequence: the masked positions, else every position after the first.
  const queries = (i: number): number => {
    const m = wanted?.[i];
    if (!m) return at(seqs, i).length - 1;
    let n = 0;
    for (let k = 1; k < m.length; k++) if (m[k]) n++;
    return n;
  };
  for (const chunk of chunksOf(seqs, chunkBudget(state.options, V), queries)) {
    const sub = chunk.map((i) => at(seqs, i));
    const { ids: tm, T, B } = timeMajor(sub);
    // Rows (position k-1 of sequence j) that predict token k >= 1.
    const where: Query[] = [];
    const targets: number[] = [];
    const owner: [number, number][] = [];
    sub.forEach((s, j) => {
      const row = at(chunk, j);
      const m = wanted?.[row];
      for (let k = 1; k < s.length; k++) {
        // Only the positions the caller reads get the read-out (the costly part): see docs/protocol.md.
        if (m && !m[k]) continue;
        where.push({ j, t: k - 1 });
        targets.push(at(s, k));
        owner.push([row, k]);
      }
    });
    if (where.length === 0) continue;
    const lp = tf.tidy(() => {
      const hs = gruStates(params, tf.tensor1d(tm, "int32"), T, B, shape.hidden);
      const logits = readoutLogits(params, shape, hs, tm, T, B, where);
      let scaled: tf.Tensor2D = tf.div(logits, tau);
      if (trunc)
        scaled = tf.add(
          scaled,
          tf.tensor2d(
            keepMask(
              logits.dataSync() as Float32Array,
              where.length,
              V,
              defined(sampling, "the sampling parameters (truncation is on)"),
              targets,
            ),
            [where.length, V],
          ),
        );
      return tf.sum(tf.mul(tf.logSoftmax(scaled), tf.oneHot(tf.tensor1d(targets, "int32"), V)), 1);
    });
    const values = lp.dataSync() as Float32Array;
    lp.dispose();
    owner.forEach(([i, k], r) => (at(out, i)[k] = at(values, r)));
  }
  return ragged(out, Float32Array);
}

/** values[k] = V(h_k), the critic's value of the state after token k. */
export function values(state: TrainerState, ids: Ragged<Int32Array>): Ragged<Float32Array> {
  const { shape, critic } = state.conf;
  checkIds(ids, shape.vocab);
  if (!critic) throw invalid("no critic: configure algorithm.critic to get values");
  const seqs = rows(ids);
  const out = seqs.map((s) => new Float32Array(s.length));
  for (const chunk of chunksOf(seqs, chunkBudget(state.options, shape.vocab))) {
    const sub = chunk.map((i) => at(seqs, i));
    const { ids: tm, T, B } = timeMajor(sub);
    const v = tf.tidy(() => criticValues(critic, gruStates(critic, tf.tensor1d(tm, "int32"), T, B, shape.hidden)));
    const values = v.dataSync() as Float32Array;
    v.dispose();
    sub.forEach((s, j) => {
      const row = at(out, at(chunk, j));
      for (let k = 0; k < s.length; k++) row[k] = at(values, k * B + j);
    });
  }
  return ragged(out, Float32Array);
}
