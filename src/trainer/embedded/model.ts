// The model of `builtin:tiny`: a one-layer GRU language model over the word-level tokens with
// an attention read-out that can copy context tokens (the policy), and, for algorithms with a
// critic, a second GRU of the same shape with a scalar value head. Small on purpose: it samples
// and trains on two CPU cores.
//
//   x_t = table[id_t]            table = emb @ wx + bx   ([V, 3H]; emb is [V, E])
//   r = sigmoid(x_r + h wh_r)    z = sigmoid(x_z + h wh_z)    n = tanh(x_n + r * (h wh_n + bhn))
//   h_t = n + z * (h_{t-1} - n)  (h_{-1} = 0)
//   policy, predicting token t+1 from positions j <= t, A heads of key size K:
//     a_t^a = softmax_j((h_t wq^a) . (h_j wk^a) / sqrt(K) - m_a (t - j))   c_t = sum_a cs_a sum_j a_tj^a emb[id_j]
//     with fixed recency slopes m_a (recencySlopes): head 0 reads the whole context alike, the
//     others prefer recent positions ("go <an exit of the room just described>")
//     logits_t = h_t wo + bo + c_t emb^T    (the tied embedding turns attention into copying:
//                                            "take <the noun the goal names>")
//   critic: V(h_t) = h_t wv + bv
//
// Everything runs in TensorFlow.js (gradients from its autograd); time-major batches [T, B].
import { tf } from "./backend.js";
import { gruNext, gruSequence } from "./gru.js";
import { type Rng } from "./rng.js";
import { at, InternalError } from "../../contracts/checked.js";

export interface ModelShape {
  readonly vocab: number;
  readonly embed: number;
  readonly hidden: number;
  /** Attention heads of the read-out, and their key size. */
  readonly heads: number;
  readonly keyDim: number;
}

export type ParamSpec = {
  readonly name: string;
  readonly shape: readonly number[];
  readonly init: "normal" | "zeros" | "ones";
  readonly std?: number;
  readonly decay: boolean;
};

export function paramSpecs(shape: ModelShape, head: "policy" | "value"): ParamSpec[] {
  const { vocab: V, embed: E, hidden: H, heads: A, keyDim: K } = shape;
  const specs: ParamSpec[] = [
    { name: "emb", shape: [V, E], init: "normal", std: 1 / Math.sqrt(E), decay: true },
    { name: "wx", shape: [E, 3 * H], init: "normal", std: 1 / Math.sqrt(E), decay: true },
    { name: "bx", shape: [3 * H], init: "zeros", decay: false },
    { name: "wh", shape: [H, 3 * H], init: "normal", std: 1 / Math.sqrt(H), decay: true },
    { name: "bhn", shape: [H], init: "zeros", decay: false },
  ];
  if (head === "policy") {
    specs.push({ name: "wo", shape: [H, V], init: "normal", std: 0.1 / Math.sqrt(H), decay: true });
    specs.push({ name: "bo", shape: [V], init: "zeros", decay: false });
    specs.push({ name: "wq", shape: [H, A * K], init: "normal", std: 1 / Math.sqrt(H), decay: true });
    specs.push({ name: "wk", shape: [H, A * K], init: "normal", std: 1 / Math.sqrt(H), decay: true });
    specs.push({ name: "cs", shape: [A], init: "ones", decay: false });
  } else {
    specs.push({ name: "wv", shape: [H, 1], init: "normal", std: 0.1 / Math.sqrt(H), decay: true });
    specs.push({ name: "bv", shape: [1], init: "zeros", decay: false });
  }
  return specs;
}

/**
 * Recency slopes of the read-out's heads, as in ALiBi (Press et al. 2022): head 0 has none (it
 * finds a noun anywhere, e.g. in the goal); head a > 0 lowers the score of a position d tokens
 * back by 2^(-8(A-a)/A) * d, so some heads read the latest observation first. A recurrent state
 * alone blurs which of several "Exits: ..." lines is the current one.
 */
export function recencySlopes(heads: number): number[] {
  return Array.from({ length: heads }, (_, a) => (a === 0 ? 0 : 2 ** ((-8 * (heads - a)) / heads)));
}

/** A set of named trainable variables. */
export class ParamSet {
  readonly vars = new Map<string, tf.Variable>();
  constructor(
    readonly specs: readonly ParamSpec[],
    values: ReadonlyMap<string, Float32Array>,
  ) {
    for (const s of specs) {
      const v = values.get(s.name);
      if (!v || v.length !== s.shape.reduce((a, b) => a * b, 1))
        throw new RangeError(`parameter ${s.name}: expected ${s.shape.join("x")} values`);
      this.vars.set(s.name, tf.variable(tf.tensor(v, [...s.shape], "float32"), true, undefined, "float32"));
    }
  }

  static init(specs: readonly ParamSpec[], rng: Rng): ParamSet {
    const values = new Map<string, Float32Array>();
    for (const s of specs) {
      const n = s.shape.reduce((a, b) => a * b, 1);
      const a = new Float32Array(n);
      if (s.init === "normal") for (let i = 0; i < n; i++) a[i] = rng.normal() * (s.std ?? 1);
      else if (s.init === "ones") a.fill(1);
      values.set(s.name, a);
    }
    return new ParamSet(specs, values);
  }

  get(name: string): tf.Variable {
    const v = this.vars.get(name);
    if (!v) throw new Error(`no parameter ${name}`);
    return v;
  }

  get count(): number {
    let n = 0;
    for (const v of this.vars.values()) n += v.size;
    return n;
  }

  read(): Map<string, Float32Array> {
    const out = new Map<string, Float32Array>();
    for (const [k, v] of this.vars) out.set(k, Float32Array.from(v.dataSync() as Float32Array));
    return out;
  }

  write(values: ReadonlyMap<string, Float32Array>): void {
    for (const s of this.specs) {
      const v = values.get(s.name);
      if (!v) throw new RangeError(`missing parameter ${s.name}`);
      this.get(s.name).assign(tf.tensor(v, [...s.shape], "float32"));
    }
  }

  clone(): ParamSet {
    return new ParamSet(this.specs, this.read());
  }

  dispose(): void {
    for (const v of this.vars.values()) v.dispose();
    this.vars.clear();
  }
}

/** The GRU over a whole time-major batch: ids [T*B] -> states h_t, [T*B, H] (inside a tidy). */
export function gruStates(p: ParamSet, ids: tf.Tensor1D, T: number, B: number, hidden: number): tf.Tensor2D {
  const table = tf.add(tf.matMul(p.get("emb"), p.get("wx")), p.get("bx"));
  const x = tf.gather(table, ids).reshape<tf.Tensor3D>([T, B, 3 * hidden]);
  return gruSequence(x, p.get("wh") as tf.Tensor2D, p.get("bhn") as tf.Tensor1D).reshape<tf.Tensor2D>([T * B, hidden]);
}

/** Input table [V, 3H] for stepping (compute once per policy version, keep, dispose later). */
export function inputTable(p: ParamSet): tf.Tensor2D {
  return tf.tidy(() => tf.add<tf.Tensor2D>(tf.matMul(p.get("emb"), p.get("wx")), p.get("bx")));
}

/**
 * One step for a batch: h [B, H], tokens [B] -> the next state. Rows with active = 0 keep their
 * state exactly (prompts of different lengths advance in lockstep); an active row's new state
 * is the one it gets alone, whatever the other rows are (test/trainer/batch-independence.test.ts).
 */
export function gruStep(
  p: ParamSet,
  table: tf.Tensor2D,
  h: tf.Tensor2D,
  tokens: Int32Array,
  active?: Float32Array,
): tf.Tensor2D {
  return tf.tidy(
    () => gruNext(h, tf.gather(table, tf.tensor1d(tokens, "int32")), p.get("wh"), p.get("bhn"), active) as tf.Tensor2D,
  );
}

/** Critic values for states [N, H] -> [N]. */
export function criticValues(p: ParamSet, h: tf.Tensor): tf.Tensor1D {
  return tf.add(tf.matMul(h, p.get("wv")), p.get("bv")).reshape<tf.Tensor1D>([-1]);
}

/** A query of the read-out: the state of sequence `j` (column of a time-major batch) after position `t`. */
export interface Query {
  readonly j: number;
  readonly t: number;
}

/**
 * Policy logits [queries, V] for queries over a time-major batch: states hs [T*B, H] (row
 * t*B + j), its ids [T*B]. Attention of each query looks at positions 0..t of its own sequence.
 */
export function readoutLogits(
  p: ParamSet,
  shape: ModelShape,
  hs: tf.Tensor2D,
  ids: Int32Array,
  T: number,
  B: number,
  queries: readonly Query[],
): tf.Tensor2D {
  const { heads: A, keyDim: K, embed: E, hidden: H, vocab: V } = shape;
  const perSeq = new Array<number>(B).fill(0);
  for (const q of queries) perSeq[q.j] = at(perSeq, q.j) + 1;
  const Tq = Math.max(1, ...perSeq);
  const slot = new Array<number>(B).fill(0);
  const rowsIdx = new Int32Array(B * Tq); // hs row of each (j, q) slot; padding slots use row j (t = 0)
  for (let j = 0; j < B; j++) for (let q = 0; q < Tq; q++) rowsIdx[j * Tq + q] = j;
  const mask = new Float32Array(B * Tq * T).fill(-1e9);
  const back = new Float32Array(B * Tq * T); // t - j of each visible position, for the recency slopes
  for (let j = 0; j < B; j++) for (let q = 0; q < Tq; q++) mask[(j * Tq + q) * T] = 0;
  const order = new Int32Array(queries.length);
  queries.forEach((q, n) => {
    const used = at(slot, q.j);
    slot[q.j] = used + 1;
    const s = q.j * Tq + used;
    order[n] = s;
    rowsIdx[s] = q.t * B + q.j;
    mask.fill(0, s * T, s * T + q.t + 1);
    for (let j = 0; j <= q.t; j++) back[s * T + j] = q.t - j;
  });
  const hq = tf.gather(hs, tf.tensor1d(rowsIdx, "int32")); // [B*Tq, H]
  const gen = tf.add(tf.matMul(hq, p.get("wo")), p.get("bo"));
  const q = tf.matMul(hq, p.get("wq")).reshape([B, Tq, A, K]).transpose([0, 2, 1, 3]); // [B, A, Tq, K]
  const k = tf.matMul(hs, p.get("wk")).reshape([T, B, A, K]).transpose([1, 2, 0, 3]); // [B, A, T, K]
  const recency = tf.mul(
    tf.tensor4d(back, [B, 1, Tq, T]),
    tf.tensor4d(
      recencySlopes(A).map((m) => -m),
      [1, A, 1, 1],
    ),
  );
  const scores = tf.add(
    tf.add(tf.mul(tf.matMul(q, k, false, true), 1 / Math.sqrt(K)), tf.tensor4d(mask, [B, 1, Tq, T])),
    recency,
  );
  // The heads share their values (the embeddings), so their weights are summed before the
  // product with them: sum_a cs_a sum_j a_tj^a emb_j = sum_j (sum_a cs_a a_tj^a) emb_j, a
  // [Tq, T] x [T, E] product per sequence instead of one per head (most of a step's arithmetic).
  const alpha = tf.sum(tf.mul(tf.softmax(scores), p.get("cs").reshape([1, A, 1, 1])), 1); // [B, Tq, T]
  const emb = p.get("emb");
  const values = tf.gather(emb, tf.tensor1d(ids, "int32")).reshape([T, B, E]).transpose([1, 0, 2]); // [B, T, E]
  const c = tf.matMul(alpha, values).reshape([B * Tq, E]);
  const logits = tf.add<tf.Tensor2D>(gen, tf.matMul(c, emb, false, true)); // [B*Tq, V]
  void H;
  void V;
  return tf.gather(logits, tf.tensor1d(order, "int32"));
}

/** Weights the JavaScript read-out of generation needs (per weights version). */
export interface ReadoutWeights {
  readonly emb: Float32Array;
  readonly cs: Float32Array;
}

/**
 * Generation's read-out for one sequence, in float64 JavaScript: adds the copy logits to `gen`
 * (the row's h wo + bo) given the query h wq and the keys and ids of positions 0..t.
 */
export function addCopyLogits(
  shape: ModelShape,
  w: ReadoutWeights,
  gen: Float32Array,
  query: Float32Array,
  keys: readonly Float32Array[],
  ids: readonly number[],
  out: Float64Array,
): void {
  const { heads: A, keyDim: K, embed: E, vocab: V } = shape;
  const L = keys.length;
  const c = new Float64Array(E);
  const scores = new Float64Array(L);
  const scale = 1 / Math.sqrt(K);
  const slopes = recencySlopes(A);
  // Checked once here, so that every index below is in range: a < A, j < L, d < K or E, v < V,
  // and the ids are below V (requests.ts checks every id against the vocabulary).
  if (
    slopes.length < A ||
    w.cs.length < A ||
    query.length < A * K ||
    keys.some((k) => k.length < A * K) ||
    ids.length < L ||
    w.emb.length < V * E ||
    gen.length < V
  ) {
    throw new InternalError(
      `addCopyLogits: inputs too short for ${A} heads x ${K}, ${L} positions, embedding ${E}, vocabulary ${V}`,
    );
  }
  const { cs, emb } = w;
  // Each position's weight summed over the heads first, then one pass over the embeddings (as
  // readoutLogits does).
  const weights = new Float64Array(L);
  for (let a = 0; a < A; a++) {
    let max = -Infinity;
    const slope = slopes[a] as number;
    for (let j = 0; j < L; j++) {
      const kj = keys[j] as Float32Array;
      let s = 0;
      for (let d = 0; d < K; d++) s += (query[a * K + d] as number) * (kj[a * K + d] as number);
      // The query is the state after position L - 1.
      const score = s * scale - slope * (L - 1 - j);
      scores[j] = score;
      if (score > max) max = score;
    }
    let z = 0;
    for (let j = 0; j < L; j++) z += scores[j] = Math.exp((scores[j] as number) - max);
    const weight = (cs[a] as number) / z;
    for (let j = 0; j < L; j++) weights[j] = (weights[j] as number) + (scores[j] as number) * weight;
  }
  for (let j = 0; j < L; j++) {
    const f = weights[j] as number;
    const e = (ids[j] as number) * E;
    for (let d = 0; d < E; d++) c[d] = (c[d] as number) + f * (emb[e + d] as number);
  }
  for (let v = 0; v < V; v++) {
    let s = 0;
    const e = v * E;
    for (let d = 0; d < E; d++) s += (c[d] as number) * (emb[e + d] as number);
    out[v] = (gen[v] as number) + (L > 0 ? s : 0);
  }
}
