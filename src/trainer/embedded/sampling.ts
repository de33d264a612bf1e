// Sampling and the keep-sampling mask (docs/semantics.md §7), in float64 JavaScript over one row of
// logits. The distribution actually sampled from: logits / temperature, then top-k (the k largest
// and every token tied with the k-th, as docs/protocol.md has it), then top-p (the smallest prefix
// of the tokens sorted by probability, equal ones by the lower id, whose probability reaches p),
// renormalised: the cut the PyTorch trainer makes. `truncate` gives that distribution's log-probabilities
// (-Infinity outside the kept set); generation samples from it and reports the sampled token's
// log-probability under it, and logprobs/train_step rebuild the same set from the current
// policy's logits (the keep-sampling mask). Temperature <= 0 is greedy: the argmax with
// log-probability 0 (a point mass).
import type { Rng } from "./rng.js";
import { at, last } from "../../contracts/checked.js";

export interface SamplingParams {
  readonly temperature: number;
  readonly top_p: number;
  readonly top_k: number;
}

/** Whether the params truncate the distribution at all (else only the temperature applies). */
export function truncates(s: SamplingParams | null, vocab: number): boolean {
  if (!s) return false;
  return (s.top_k > 0 && s.top_k < vocab) || s.top_p < 1;
}

export function temperatureOf(s: SamplingParams | null): number {
  return s && s.temperature > 0 ? s.temperature : 1;
}

/**
 * Log-probabilities of the sampling distribution for one row of logits (length V), written into
 * `out` (float64); returns the kept ids in descending order of probability.
 */
function truncate(logits: ArrayLike<number>, s: SamplingParams, out: Float64Array): number[] {
  const V = logits.length;
  const tau = s.temperature > 0 ? s.temperature : 1;
  const order: number[] = new Array<number>(V);
  for (let i = 0; i < V; i++) order[i] = i;
  const scaled = new Float64Array(V);
  for (let i = 0; i < V; i++) scaled[i] = (logits[i] as number) / tau;
  // Below, every id is in [0, V) and every j < keep <= V = order.length = scaled.length.
  order.sort((a, b) => (scaled[b] as number) - (scaled[a] as number) || a - b);
  const sortedAt = (j: number) => scaled[order[j] as number] as number;
  let keep = V;
  if (s.top_k > 0 && s.top_k < V) {
    keep = s.top_k;
    while (keep < V && sortedAt(keep) === sortedAt(keep - 1)) keep++;
  }
  const max = at(scaled, at(order, 0));
  if (s.top_p < 1) {
    let z = 0;
    for (let j = 0; j < keep; j++) z += Math.exp(sortedAt(j) - max);
    let cum = 0;
    let j = 0;
    for (; j < keep; j++) {
      if (cum >= s.top_p) break;
      cum += Math.exp(sortedAt(j) - max) / z;
    }
    keep = Math.max(1, j);
  }
  let z = 0;
  for (let j = 0; j < keep; j++) z += Math.exp(sortedAt(j) - max);
  const lse = max + Math.log(z);
  out.fill(-Infinity);
  for (let j = 0; j < keep; j++) out[order[j] as number] = sortedAt(j) - lse;
  return order.slice(0, keep);
}

/** Samples one token from a row of logits; returns it with its log-probability under the sampled distribution. */
export function sample(
  logits: ArrayLike<number>,
  s: SamplingParams,
  rng: Rng,
  scratch: Float64Array,
): { id: number; logprob: number } {
  if (!(s.temperature > 0)) {
    let best = 0;
    for (let i = 1; i < logits.length; i++) if ((logits[i] as number) > (logits[best] as number)) best = i;
    return { id: best, logprob: 0 };
  }
  const kept = truncate(logits, s, scratch);
  const u = rng.uniform();
  let cum = 0;
  // The kept ids are in [0, V) and scratch has length V.
  for (const id of kept) {
    const logprob = scratch[id] as number;
    cum += Math.exp(logprob);
    if (u < cum) return { id, logprob };
  }
  const id = last(kept);
  return { id, logprob: at(scratch, id) };
}

/**
 * The additive keep-sampling mask for rows of logits [n, V]: 0 where kept, -1e30 elsewhere;
 * the row's target token is always kept (so an off-policy token has a finite log-probability).
 */
export function keepMask(
  logits: Float32Array,
  n: number,
  V: number,
  s: SamplingParams,
  targets?: ArrayLike<number>,
): Float32Array {
  const mask = new Float32Array(n * V).fill(-1e30);
  const scratch = new Float64Array(V);
  for (let r = 0; r < n; r++) {
    const kept = truncate(logits.subarray(r * V, (r + 1) * V), s, scratch);
    for (const id of kept) mask[r * V + id] = 0;
    if (targets) mask[r * V + (targets[r] as number)] = 0;
  }
  return mask;
}
