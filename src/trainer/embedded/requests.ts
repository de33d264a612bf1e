// Request validation. Every request's params are parsed with the protocol's one schema
// (contracts/trainer-requests.ts; the PyTorch trainer checks the same schema's JSON form); what
// a schema cannot say (layouts equal across fields, one seed per prompt, token ids inside the
// vocabulary, targets that fit the denominators) is checked here, in code.
import type * as z from "zod";
import { requestParams, type RequestMethod } from "../../contracts/trainer-requests.js";
import {
  rowCount,
  type GenerateParams,
  type Method,
  type Methods,
  type Ragged,
  type TrainStepParams,
} from "../../contracts/trainer-protocol.js";
import { invalid } from "./errors.js";

type Parsed<M extends RequestMethod> = z.output<(typeof requestParams)[M]>;
// Compile-time: the schemas cover exactly the protocol's methods, and what each parses to is the
// params type the trainer's modules take (so the schema cannot drift from contracts/trainer-protocol.ts).
type Fits<M extends RequestMethod> = [Parsed<M>] extends [Methods[M][0]] ? true : false;
const schemaFits: { [M in RequestMethod]: Fits<M> } & { [M in Method]: true } = {
  handshake: true,
  configure: true,
  encode: true,
  decode: true,
  tokenize: true,
  generate: true,
  logprobs: true,
  values: true,
  train_step: true,
  snapshot: true,
  reset_optimizer: true,
  save: true,
  saved: true,
  load: true,
  eval_op: true,
  shutdown: true,
};
void schemaFits;

/** The request's params as the schema of `method` parses them, or an invalid_request saying what is wrong. */
export function parseRequest<M extends RequestMethod>(method: M, params: unknown): Methods[M][0] {
  const parsed = requestParams[method].safeParse(params);
  if (!parsed.success)
    throw invalid(
      `${method}: ${parsed.error.issues.map((i) => `${i.path.join(".") || "params"}: ${i.message}`).join("; ")}`,
    );
  return parsed.data;
}

type AnyRagged = Ragged<Int32Array | Float32Array | Uint8Array>;

export function checkIds(ids: Ragged<Int32Array>, vocab: number, what = "ids"): void {
  for (const x of ids.values)
    if (x < 0 || x >= vocab) throw invalid(`${what}: token id ${x} is outside the vocabulary (0..${vocab - 1})`);
}

function sameLayout(a: AnyRagged, b: AnyRagged, what: string): void {
  if (a.offsets.length !== b.offsets.length || a.offsets.some((o, i) => o !== b.offsets[i]))
    throw invalid(`${what} must have the same sequences and lengths as ids`);
}

export function checkGenerate(p: GenerateParams, vocab: number): void {
  checkIds(p.prompts, vocab, "prompts");
  const n = rowCount(p.prompts);
  if (p.seeds.length !== n) throw invalid(`seeds: one per prompt (${n}), got ${p.seeds.length}`);
}

export function checkLogprobs(ids: Ragged<Int32Array>, mask: Ragged<Uint8Array> | null, vocab: number): void {
  checkIds(ids, vocab);
  if (mask) sameLayout(ids, mask, "mask");
}

/** A train step's arrays against ids and the configuration, before any weights are computed. */
export function checkTrainStep(p: TrainStepParams, vocab: number, hasCritic: boolean): void {
  checkIds(p.ids, vocab);
  sameLayout(p.ids, p.loss_mask, "loss_mask");
  sameLayout(p.ids, p.advantages, "advantages");
  if (p.old_logprobs) sameLayout(p.ids, p.old_logprobs, "old_logprobs");
  if (p.ref_logprobs) sameLayout(p.ids, p.ref_logprobs, "ref_logprobs");
  if (p.is_weights) {
    sameLayout(p.ids, p.is_weights, "is_weights");
    const bad = p.is_weights.values.findIndex((w) => !(Number.isFinite(w) && w >= 0));
    if (bad >= 0)
      throw invalid(
        `is_weights[${bad}] (flat) is ${p.is_weights.values[bad]}; importance weights must be finite and >= 0`,
      );
  }
  if (p.critic) {
    if (!hasCritic) throw invalid("the request carries critic targets but no critic is configured (algorithm.critic)");
    sameLayout(p.ids, p.critic.returns, "critic.returns");
    sameLayout(p.ids, p.critic.old_values, "critic.old_values");
  }
  const n = rowCount(p.ids);
  if (p.denominators.sequences !== n)
    throw invalid(`denominators.sequences (${p.denominators.sequences}) must count the step's ${n} sequences`);
  if (p.kl.coef !== 0 && !p.ref_logprobs) throw invalid("kl.coef is not 0 but the request carries no ref_logprobs");
}

/** Every loss mask holds 0/1, never marks token 0, and counts the targets the denominators say. */
export function checkTargets(masks: readonly Uint8Array[], sequenceTokens: ArrayLike<number>): void {
  masks.forEach((m, i) => {
    let L = 0;
    for (const x of m) {
      if (x !== 0 && x !== 1) throw invalid(`loss_mask of sequence ${i} holds ${x}; it must be 0 or 1`);
      L += x;
    }
    if (m[0] === 1) throw invalid(`sequence ${i}: token 0 cannot be a target (nothing predicts it)`);
    if (L !== sequenceTokens[i])
      throw invalid(
        `sequence ${i} has ${L} targets but denominators.sequence_tokens says ${sequenceTokens[i]}: they belong to another batch`,
      );
  });
}
