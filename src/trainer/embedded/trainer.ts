// The embedded CPU trainer `builtin:tiny`: the trainer protocol's methods (PROTOCOL.md) over the
// GRU of model.ts, in-process (main.ts serves it over stdin/stdout; tests drive it directly).
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import path from "node:path";
import {
  PROTOCOL_NAME,
  PROTOCOL_VERSION,
  ragged,
  row,
  rowCount,
  type ConfigureParams,
  type ConfigureResult,
  type GenerateParams,
  type GenerateResult,
  type HandshakeResult,
  type Ragged,
  type TrainStepParams,
  type TrainStepResult,
} from "../../contracts/trainer-protocol.js";
import { parseTinyModel, TINY_DEFAULT_SHAPE, type TinyShape } from "../../plan/model-name.js";
import type { KlEstimatorName } from "../../rl/kl.js";
import { RequestError } from "../protocol/server.js";
import { initBackend, tf } from "./backend.js";
import { evalOp } from "./conformance.js";
import { checkClip, klEstimatorNames, LossInputError, policyTerms, reductionModes, sequenceWeights, toReduction, valueTerms } from "./loss.js";
import { addCopyLogits, criticValues, gruStates, gruStep, inputTable, paramSpecs, ParamSet, readoutLogits, type ModelShape, type Query, type ReadoutWeights } from "./model.js";
import { AdamW, type OptimizerConfig } from "./optimizer.js";
import { PrefixCache } from "./prefix-cache.js";
import { Rng } from "./rng.js";
import { encodeSafetensors, readSafetensors, writeFileSynced, type StTensor } from "./safetensors.js";
import { keepMask, sample, temperatureOf, truncates, type SamplingParams } from "./sampling.js";
import { BOS, EOS, PAD, WordTokenizer, type ChatMessage } from "./tokenizer.js";

export const TRAINER_NAME = "arl-embedded";
export const TRAINER_VERSION = "0.1.0";
export const MODEL_NAME = "builtin:tiny";
// 2: the read-out's heads have recency slopes (model.ts), so a /1 checkpoint means another function.
const CHECKPOINT_FORMAT = "arl-builtin-tiny/2";
const METHODS = ["handshake", "configure", "encode", "decode", "generate", "logprobs", "values", "train_step", "snapshot", "save", "load", "eval_op", "shutdown"];

/**
 * In-process settings. The shape fields are what a plain `builtin:tiny` means to this instance
 * (the served process keeps the default shape; a plan asks for another in the model's name,
 * plan/model-name.ts). `chunkTokens` changes only how a batch is cut, never a result.
 */
export interface TinyOptions extends TinyShape {
  /** Padded tokens (T x B) per forward/backward chunk; larger batches are split (same result). */
  readonly chunkTokens: number;
}

export function defaultOptions(): TinyOptions {
  // ARL_TINY_CHUNK_TOKENS trades memory for speed only (test/plan/environment.test.ts allows it).
  const chunk = Number(process.env.ARL_TINY_CHUNK_TOKENS);
  return { ...TINY_DEFAULT_SHAPE, chunkTokens: Number.isInteger(chunk) && chunk > 0 ? chunk : 65_536 };
}

const invalid = (message: string) => new RequestError("invalid_request", message);

function optimizerConfig(raw: unknown, what: string): OptimizerConfig {
  const o = (raw ?? {}) as Record<string, unknown>;
  if (o.name !== undefined && o.name !== "adamw") throw new RequestError("unsupported", `${what}: only adamw is supported, not '${String(o.name)}'`);
  const num = (k: string, d: number) => (typeof o[k] === "number" ? (o[k] as number) : d);
  const betas = Array.isArray(o.betas) && o.betas.length === 2 ? (o.betas as [number, number]) : ([0.9, 0.999] as [number, number]);
  const config = { lr: num("lr", 1e-3), betas, eps: num("eps", 1e-8), weight_decay: num("weight_decay", 0), grad_clip: o.grad_clip === null ? null : num("grad_clip", 1), warmup_steps: num("warmup_steps", 0) };
  if (!(config.lr > 0)) throw invalid(`${what}.lr must be positive`);
  return config;
}

/** Sequences of a ragged batch as views. */
function rows<T extends Int32Array | Float32Array | Uint8Array>(r: Ragged<T>): T[] {
  return Array.from({ length: rowCount(r) }, (_, i) => row(r, i));
}

function sameLayout(a: Ragged<Int32Array | Float32Array | Uint8Array>, b: Ragged<Int32Array | Float32Array | Uint8Array>, what: string): void {
  if (a.offsets.length !== b.offsets.length || a.offsets.some((o, i) => o !== b.offsets[i])) throw invalid(`${what} must have the same sequences and lengths as ids`);
}

/** Time-major padded ids [T*B] of some sequences. */
function timeMajor(seqs: readonly ArrayLike<number>[]): { ids: Int32Array; T: number; B: number } {
  const B = seqs.length;
  const T = Math.max(1, ...seqs.map((s) => s.length));
  const ids = new Int32Array(T * B).fill(PAD);
  seqs.forEach((s, i) => {
    for (let t = 0; t < s.length; t++) ids[t * B + i] = s[t]!;
  });
  return { ids, T, B };
}

/** Consecutive chunks of indices whose padded size (max length x count) stays within `budget`. */
function chunksByTokens(indices: readonly number[], length: (i: number) => number, budget: number): number[][] {
  const out: number[][] = [];
  let cur: number[] = [];
  let maxLen = 0;
  for (const i of indices) {
    const L = Math.max(1, length(i));
    if (cur.length > 0 && Math.max(maxLen, L) * (cur.length + 1) > budget) {
      out.push(cur);
      cur = [];
      maxLen = 0;
    }
    cur.push(i);
    maxLen = Math.max(maxLen, L);
  }
  if (cur.length > 0) out.push(cur);
  return out;
}

interface Configured {
  readonly tokenizer: WordTokenizer;
  readonly shape: ModelShape;
  readonly seed: number;
  readonly policy: ParamSet;
  readonly policyOpt: AdamW;
  readonly critic: ParamSet | null;
  readonly criticOpt: AdamW | null;
  readonly reference: { readonly kind: "initial" } | { readonly kind: "refresh"; readonly every: number } | null;
}

/** A frozen copy of the policy that samples (asynchronous rollout), with its own derived tables and cache. */
interface Behaviour {
  readonly params: ParamSet;
  readonly version: number;
  table: tf.Tensor2D | null;
  readout: ReadoutWeights | null;
  readonly cache: PrefixCache;
}

/** What one generate request samples from. */
interface Sampler {
  readonly params: ParamSet;
  readonly table: tf.Tensor2D;
  readonly readout: ReadoutWeights;
  readonly cache: PrefixCache;
  readonly version: number;
}

function readoutOf(params: ParamSet): ReadoutWeights {
  return { emb: Float32Array.from(params.get("emb").dataSync() as Float32Array), cs: Float32Array.from(params.get("cs").dataSync() as Float32Array) };
}

export interface Gradients {
  readonly loss: number;
  readonly policy: Map<string, Float64Array>;
  readonly critic: Map<string, Float64Array> | null;
  readonly stats: Omit<TrainStepResult, "grad_norm" | "policy_version">;
}

export class TinyTrainer {
  private c: Configured | undefined;
  private policyVersion = 0;
  private referenceParams: ParamSet | null = null;
  private referenceVersion = -1;
  private behaviour: Behaviour | null = null;
  private table: tf.Tensor2D | null = null;
  private readout: ReadoutWeights | null = null;
  private readonly cache = new PrefixCache();
  backendName = "uninitialised";
  /** Timings of the last generate / train_step (for benchmarks). */
  readonly timing = { generateTokens: 0, generateSeconds: 0, prefillTokens: 0, trainTokens: 0, trainSeconds: 0 };

  constructor(readonly options: TinyOptions = defaultOptions()) {}

  async init(): Promise<void> {
    this.backendName = await initBackend();
  }

  handshake(): HandshakeResult {
    return {
      protocol: PROTOCOL_NAME,
      version: PROTOCOL_VERSION,
      trainer: { name: TRAINER_NAME, version: TRAINER_VERSION },
      capabilities: {
        methods: METHODS,
        reductions: [...reductionModes],
        kl_estimators: [...klEstimatorNames],
        value_head: true,
        keep_sampling_mask: true,
        step_lr: true,
        world_size: 1,
        device: "cpu",
        behaviour_policy: true,
      },
      versions: { node: process.version, tfjs: tf.version.tfjs, tfjs_backend: this.backendName },
    };
  }

  private get conf(): Configured {
    if (!this.c) throw invalid("the trainer is not configured yet: send 'configure' first");
    return this.c;
  }

  get tokenizer(): WordTokenizer {
    return this.conf.tokenizer;
  }

  get version(): number {
    return this.policyVersion;
  }

  configure(p: ConfigureParams): ConfigureResult {
    const asked = typeof p.policy?.model === "string" ? parseTinyModel(p.policy.model, this.options) : { error: `the embedded trainer serves only '${MODEL_NAME}', not '${String(p.policy?.model)}'` };
    if ("error" in asked) throw new RequestError("unsupported", asked.error);
    const template = p.policy.chat_template;
    if (template !== null && template !== undefined && template !== "builtin") throw new RequestError("unsupported", `'${MODEL_NAME}' has only its built-in chat template (chat_template null), not '${template}'`);
    if (p.vocabulary !== null && p.vocabulary !== undefined && (!Array.isArray(p.vocabulary) || p.vocabulary.some((w) => typeof w !== "string"))) throw invalid("vocabulary must be an array of strings or null");
    const seed = Number.isFinite(p.seed) ? Math.trunc(p.seed) : 0;
    const algorithm = (p.algorithm ?? {}) as Record<string, unknown>;
    const tokenizer = new WordTokenizer(p.vocabulary ?? []);
    const shape: ModelShape = { vocab: tokenizer.size, ...asked.shape };
    const criticRaw = algorithm.critic as { optimizer?: unknown; init?: string } | null | undefined;
    const klRaw = (algorithm.kl ?? {}) as { reference?: { kind?: string; every?: number } | null };
    const reference = klRaw.reference?.kind === "refresh" && Number.isInteger(klRaw.reference.every) && klRaw.reference.every! > 0 ? { kind: "refresh" as const, every: klRaw.reference.every! } : klRaw.reference ? { kind: "initial" as const } : null;
    this.dispose();
    const policy = ParamSet.init(paramSpecs(shape, "policy"), new Rng(seed, 1));
    let critic: ParamSet | null = null;
    if (criticRaw) {
      const fresh = ParamSet.init(paramSpecs(shape, "value"), new Rng(seed, 2));
      if (criticRaw.init !== "random") {
        // init "policy": the critic's GRU starts as a copy of the policy's.
        const values = fresh.read();
        for (const [k, v] of policy.read()) if (values.has(k)) values.set(k, v);
        fresh.write(values);
      }
      critic = fresh;
    }
    const decay = (set: ParamSet) => new Set(set.specs.filter((s) => s.decay).map((s) => s.name));
    this.c = {
      tokenizer,
      shape,
      seed,
      policy,
      policyOpt: new AdamW(optimizerConfig(algorithm.optimizer, "algorithm.optimizer"), decay(policy)),
      critic,
      criticOpt: critic ? new AdamW(optimizerConfig(criticRaw!.optimizer, "algorithm.critic.optimizer"), decay(critic)) : null,
      reference,
    };
    this.policyVersion = 0;
    return {
      model: { name: MODEL_NAME, parameters: policy.count },
      tokenizer: { vocab_size: tokenizer.size, bos_id: BOS, eos_id: EOS, pad_id: PAD },
      policy_version: this.policyVersion,
    };
  }

  private dispose(): void {
    this.weightsChanged();
    this.c?.policy.dispose();
    this.c?.critic?.dispose();
    this.referenceParams?.dispose();
    this.referenceParams = null;
    this.referenceVersion = -1;
    this.dropBehaviour();
    this.c = undefined;
  }

  private dropBehaviour(): void {
    this.behaviour?.table?.dispose();
    this.behaviour?.params.dispose();
    this.behaviour = null;
  }

  /** Copies the current weights into the behaviour slot (PROTOCOL.md, behaviour policy). */
  snapshot(): { policy_version: number } {
    const params = this.conf.policy.clone();
    this.dropBehaviour();
    this.behaviour = { params, version: this.policyVersion, table: null, readout: null, cache: new PrefixCache() };
    return { policy_version: this.policyVersion };
  }

  /** The weights, derived tables and prefix cache of the slot a request samples from. */
  private sampler(which: unknown): Sampler {
    if (which === undefined || which === "current") {
      const policy = this.conf.policy;
      this.table ??= inputTable(policy);
      this.readout ??= readoutOf(policy);
      return { params: policy, table: this.table, readout: this.readout, cache: this.cache, version: this.policyVersion };
    }
    if (which === "behaviour") {
      const b = this.behaviour;
      if (!b) throw invalid("no behaviour policy: send 'snapshot' first (or load a checkpoint that has one)");
      b.table ??= inputTable(b.params);
      b.readout ??= readoutOf(b.params);
      return { params: b.params, table: b.table, readout: b.readout, cache: b.cache, version: b.version };
    }
    throw invalid(`generate samples from the 'current' or 'behaviour' policy, not '${String(which)}'`);
  }

  /** Drops everything derived from the current weights. */
  private weightsChanged(): void {
    this.table?.dispose();
    this.table = null;
    this.readout = null;
    this.cache.clear();
  }

  encode(messages: readonly ChatMessage[], addGenerationPrompt: boolean): Ragged<Int32Array> {
    if (!Array.isArray(messages)) throw invalid("messages must be an array");
    try {
      return ragged(this.tokenizer.encodeMessages(messages, addGenerationPrompt), Int32Array);
    } catch (error) {
      if (error instanceof RangeError) throw invalid(error.message);
      throw error;
    }
  }

  decode(ids: Ragged<Int32Array>): string[] {
    return rows(ids).map((r) => this.tokenizer.decode(r));
  }

  private checkIds(ids: Ragged<Int32Array>, what = "ids"): void {
    const V = this.conf.shape.vocab;
    if (!(ids?.values instanceof Int32Array) || !(ids.offsets instanceof Int32Array)) throw invalid(`${what} must be a ragged int32 batch`);
    for (const x of ids.values) if (x < 0 || x >= V) throw invalid(`${what}: token id ${x} is outside the vocabulary (0..${V - 1})`);
  }

  // --- generation ----------------------------------------------------------------------------

  generate(p: GenerateParams): GenerateResult {
    const { shape } = this.conf;
    const slot = this.sampler(p.policy);
    const policy = slot.params;
    this.checkIds(p.prompts, "prompts");
    const prompts = rows(p.prompts);
    const n = prompts.length;
    if (!p.seeds || p.seeds.length !== n) throw invalid(`seeds: one per prompt (${n}), got ${p.seeds?.length ?? 0}`);
    const maxNew = Math.max(0, Math.trunc(p.max_new_tokens));
    const sampling: SamplingParams = { temperature: p.temperature, top_p: p.top_p ?? 1, top_k: p.top_k ?? 0 };
    const stop = new Set(p.stop_ids ?? []);
    const started = performance.now();
    const { hidden: H, vocab: V, heads: A, keyDim: K } = shape;
    const AK = A * K;
    const table = slot.table;
    const readout = slot.readout;
    const wk = policy.get("wk");

    // Prefill: each prompt from its longest cached prefix; the keys of every position kept.
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
    const remaining = Math.max(0, ...prompts.map((pr, i) => pr.length - done[i]!));
    let prefill = 0;
    if (remaining > 0) {
      const states: tf.Tensor2D[] = [h];
      for (let s = 0; s < remaining; s++) {
        const tokens = new Int32Array(n);
        const active = new Float32Array(n);
        for (let i = 0; i < n; i++) {
          const k = done[i]! + s;
          if (k < prompts[i]!.length) {
            tokens[i] = prompts[i]![k]!;
            active[i] = 1;
            prefill++;
          }
        }
        h = gruStep(policy, table, h, tokens, active);
        states.push(h);
      }
      const keyData = tf.tidy(() => tf.matMul(tf.concat(states.slice(1), 0), wk)).dataSync() as Float32Array; // [remaining*n, AK]
      const last = h.dataSync() as Float32Array;
      for (const st of states.slice(0, -1)) st.dispose();
      prompts.forEach((pr, i) => {
        for (let k = done[i]!; k < pr.length; k++) {
          const r = (k - done[i]!) * n + i;
          keys[i]!.push(keyData.slice(r * AK, (r + 1) * AK));
        }
        if (done[i]! < pr.length) slot.cache.insert(pr, keys[i]!, last.slice(i * H, (i + 1) * H));
      });
    }

    // Decode: per step one batched GRU step and one read of [h wo + bo | h wq | h wk].
    const out: number[][] = prompts.map(() => []);
    const lps: number[][] = prompts.map(() => []);
    const ctx: number[][] = prompts.map((pr) => Array.from(pr));
    const finish: ("stop" | "length")[] = prompts.map(() => "length");
    const running = new Uint8Array(n).fill(maxNew > 0 ? 1 : 0);
    const fed = new Uint8Array(n);
    const rngs = Array.from(p.seeds, (s) => new Rng(Number(s) >>> 0, 7));
    const scratch = new Float64Array(V);
    const logits = new Float64Array(V);
    const width = V + 2 * AK;
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
        if (step > 0 && out[i]!.length === step) keys[i]!.push(values.slice(i * width + V + AK, (i + 1) * width)); // key of the token fed last step
        if (!running[i]) continue;
        const row0 = i * width;
        addCopyLogits(shape, readout, values.subarray(row0, row0 + V), values.subarray(row0 + V, row0 + V + AK), keys[i]!, ctx[i]!, logits);
        const { id, logprob } = sample(logits, sampling, rngs[i]!, scratch);
        out[i]!.push(id);
        lps[i]!.push(logprob);
        ctx[i]!.push(id);
        tokens[i] = id;
        fed[i] = 1;
        if (stop.has(id)) {
          finish[i] = "stop";
          running[i] = 0;
        } else if (out[i]!.length >= maxNew) running[i] = 0;
      }
      // Feed the sampled tokens (the last one too: the next turn's prompt starts with this state).
      const next = gruStep(policy, table, h, tokens, Float32Array.from(fed));
      h.dispose();
      h = next;
    }
    if (maxNew > 0 && n > 0) {
      const values = readHeads();
      const states = h.dataSync() as Float32Array;
      prompts.forEach((pr, i) => {
        if (out[i]!.length === 0) return;
        // The key of the token fed last; a row that stopped before the last step has it already.
        if (keys[i]!.length < ctx[i]!.length) keys[i]!.push(values.slice(i * width + V + AK, (i + 1) * width));
        slot.cache.insert(ctx[i]!, keys[i]!, states.slice(i * H, (i + 1) * H));
      });
    }
    heads.dispose();
    bias.dispose();
    h.dispose();
    const generated = out.reduce((s, o) => s + o.length, 0);
    this.timing.generateTokens = generated;
    this.timing.prefillTokens = prefill;
    this.timing.generateSeconds = (performance.now() - started) / 1000;
    return {
      ids: ragged(out, Int32Array),
      logprobs: ragged(lps.map((l) => Float32Array.from(l)), Float32Array),
      finish,
      policy_version: slot.version,
    };
  }

  // --- scoring -------------------------------------------------------------------------------

  /** The reference policy's weights (snapshotted on first use; see PROTOCOL interpretation notes). */
  private reference(): ParamSet {
    const c = this.conf;
    if (!c.reference) throw invalid("no reference policy: algorithm.kl.reference is null");
    const stale = c.reference.kind === "refresh" && this.policyVersion - this.referenceVersion >= c.reference.every;
    if (!this.referenceParams || stale) {
      this.referenceParams?.dispose();
      this.referenceParams = c.policy.clone();
      this.referenceVersion = this.policyVersion;
    }
    return this.referenceParams;
  }

  logprobs(ids: Ragged<Int32Array>, policy: "current" | "reference" | "behaviour", sampling: SamplingParams | null, mask: Ragged<Uint8Array> | null = null): Ragged<Float32Array> {
    this.checkIds(ids);
    if (mask) sameLayout(ids, mask, "mask");
    const wanted = mask ? rows(mask) : null;
    if (policy !== "current" && policy !== "reference" && policy !== "behaviour") throw invalid(`policy must be 'current', 'reference' or 'behaviour', not '${String(policy)}'`);
    if (policy === "behaviour" && !this.behaviour) throw invalid("no behaviour policy: send 'snapshot' first (or load a checkpoint that has one)");
    const params = policy === "reference" ? this.reference() : policy === "behaviour" ? this.behaviour!.params : this.conf.policy;
    const seqs = rows(ids);
    const out = seqs.map((s) => new Float32Array(s.length));
    const V = this.conf.shape.vocab;
    const tau = temperatureOf(sampling);
    const trunc = truncates(sampling, V);
    for (const chunk of chunksByTokens(seqs.map((_, i) => i), (i) => seqs[i]!.length, this.options.chunkTokens)) {
      const sub = chunk.map((i) => seqs[i]!);
      const { ids: tm, T, B } = timeMajor(sub);
      // Rows (position k-1 of sequence j) that predict token k >= 1.
      const where: Query[] = [];
      const targets: number[] = [];
      const owner: [number, number][] = [];
      sub.forEach((s, j) => {
        const m = wanted?.[chunk[j]!];
        for (let k = 1; k < s.length; k++) {
          // Only the positions the caller reads get the read-out (the costly part): see PROTOCOL.md.
          if (m && !m[k]) continue;
          where.push({ j, t: k - 1 });
          targets.push(s[k]!);
          owner.push([chunk[j]!, k]);
        }
      });
      if (where.length === 0) continue;
      const lp = tf.tidy(() => {
        const hs = gruStates(params, tf.tensor1d(tm, "int32"), T, B, this.conf.shape.hidden);
        const logits = readoutLogits(params, this.conf.shape, hs, tm, T, B, where);
        let scaled: tf.Tensor2D = tf.div(logits, tau);
        if (trunc) scaled = tf.add(scaled, tf.tensor2d(keepMask(logits.dataSync() as Float32Array, where.length, V, sampling!, targets), [where.length, V]));
        return tf.sum(tf.mul(tf.logSoftmax(scaled), tf.oneHot(tf.tensor1d(targets, "int32"), V)), 1);
      });
      const values = lp.dataSync() as Float32Array;
      lp.dispose();
      owner.forEach(([i, k], r) => (out[i]![k] = values[r]!));
    }
    return ragged(out, Float32Array);
  }

  values(ids: Ragged<Int32Array>): Ragged<Float32Array> {
    this.checkIds(ids);
    const critic = this.conf.critic;
    if (!critic) throw invalid("no critic: configure algorithm.critic to get values");
    const seqs = rows(ids);
    const out = seqs.map((s) => new Float32Array(s.length));
    for (const chunk of chunksByTokens(seqs.map((_, i) => i), (i) => seqs[i]!.length, this.options.chunkTokens)) {
      const sub = chunk.map((i) => seqs[i]!);
      const { ids: tm, T, B } = timeMajor(sub);
      const v = tf.tidy(() => criticValues(critic, gruStates(critic, tf.tensor1d(tm, "int32"), T, B, this.conf.shape.hidden)));
      const values = v.dataSync() as Float32Array;
      v.dispose();
      sub.forEach((s, j) => {
        for (let k = 0; k < s.length; k++) out[chunk[j]!]![k] = values[k * B + j]!;
      });
    }
    return ragged(out, Float32Array);
  }

  // --- training ------------------------------------------------------------------------------

  /** Loss, gradients (summed over microbatches) and statistics of one step, without applying it. */
  computeGradients(p: TrainStepParams): Gradients {
    const c = this.conf;
    this.checkIds(p.ids);
    sameLayout(p.ids, p.loss_mask, "loss_mask");
    sameLayout(p.ids, p.advantages, "advantages");
    sameLayout(p.ids, p.old_logprobs, "old_logprobs");
    if (p.ref_logprobs) sameLayout(p.ids, p.ref_logprobs, "ref_logprobs");
    if (p.critic) {
      if (!c.critic) throw invalid("the request carries critic targets but no critic is configured (algorithm.critic)");
      sameLayout(p.ids, p.critic.returns, "critic.returns");
      sameLayout(p.ids, p.critic.old_values, "critic.old_values");
    }
    const n = rowCount(p.ids);
    const d = p.denominators;
    if (!d || d.sequences !== n) throw invalid(`denominators.sequences (${d?.sequences}) must count the step's ${n} sequences`);
    let reductionWeights: Float64Array;
    const clip = { low: p.clip.low, high: p.clip.high, dual: p.clip.dual ?? null };
    const estimator = (p.kl?.estimator ?? "k3") as KlEstimatorName;
    if (!klEstimatorNames.includes(estimator)) throw invalid(`unknown KL estimator '${estimator}'`);
    const klCoef = p.kl?.coef ?? 0;
    if (klCoef !== 0 && !p.ref_logprobs) throw invalid("kl.coef is not 0 but the request carries no ref_logprobs");
    try {
      checkClip(clip);
      reductionWeights = sequenceWeights(toReduction(p.reduction), {
        tokens: d.tokens,
        sequences: d.sequences,
        groups: d.groups,
        groupTokens: d.group_tokens ?? [],
        sequenceTokens: d.sequence_tokens ?? [],
        groupOf: p.groups ?? [],
      });
    } catch (error) {
      if (error instanceof LossInputError || error instanceof RangeError) throw invalid(error.message);
      throw error;
    }
    const ids = rows(p.ids);
    const masks = rows(p.loss_mask);
    masks.forEach((m, i) => {
      let L = 0;
      for (const x of m) {
        if (x !== 0 && x !== 1) throw invalid(`loss_mask of sequence ${i} holds ${x}; it must be 0 or 1`);
        L += x;
      }
      if (m[0] === 1) throw invalid(`sequence ${i}: token 0 cannot be a target (nothing predicts it)`);
      if (L !== d.sequence_tokens[i]) throw invalid(`sequence ${i} has ${L} targets but denominators.sequence_tokens says ${d.sequence_tokens[i]}: they belong to another batch`);
    });
    const adv = rows(p.advantages);
    const old = rows(p.old_logprobs);
    const ref = p.ref_logprobs ? rows(p.ref_logprobs) : null;
    const returns = p.critic ? rows(p.critic.returns) : null;
    const oldValues = p.critic ? rows(p.critic.old_values) : null;
    const sampling = p.sampling ?? null;
    const V = c.shape.vocab;
    const H = c.shape.hidden;
    const tau = temperatureOf(sampling);
    const trunc = truncates(sampling, V);

    // The declared microbatches (a partition of the sequences, in order), each split further
    // when its padded size exceeds the chunk budget: every part divides by the same global
    // denominators, so neither split changes the loss or the gradient.
    const m = Math.max(1, Math.min(n, Math.trunc(p.microbatches || 1)));
    const parts: number[][] = [];
    for (let j = 0; j < m; j++) {
      const idx: number[] = [];
      for (let i = Math.floor((j * n) / m); i < Math.floor(((j + 1) * n) / m); i++) idx.push(i);
      parts.push(...chunksByTokens(idx, (i) => ids[i]!.length, this.options.chunkTokens));
    }

    const policyGrads = new Map<string, Float64Array>();
    const criticGrads = c.critic ? new Map<string, Float64Array>() : null;
    const add = (acc: Map<string, Float64Array>, grads: Record<string, tf.Tensor>) => {
      for (const [name, g] of Object.entries(grads)) {
        const vals = g.dataSync();
        let a = acc.get(name);
        if (!a) acc.set(name, (a = new Float64Array(vals.length)));
        for (let i = 0; i < vals.length; i++) a[i]! += vals[i]!;
      }
    };
    let loss = 0;
    let policyLoss = 0;
    let klSum = 0;
    let valueLoss = 0;
    let entropySum = 0;
    let clipped = 0;
    let ratioSum = 0;
    let ratioMin = Infinity;
    let ratioMax = -Infinity;
    let tokens = 0;
    const started = performance.now();
    let padded = 0;
    const policyVars = [...c.policy.vars.entries()];
    for (const part of parts) {
      const sub = part.map((i) => ids[i]!);
      const { ids: tm, T, B } = timeMajor(sub);
      padded += T * B;
      const where: Query[] = [];
      const targets: number[] = [];
      const oldLp: number[] = [];
      const advs: number[] = [];
      const refLp: number[] = [];
      const w: number[] = [];
      const rets: number[] = [];
      const oldV: number[] = [];
      const valueWhere: number[] = [];
      part.forEach((i, j) => {
        const mk = masks[i]!;
        for (let k = 1; k < mk.length; k++) {
          if (mk[k] !== 1) continue;
          where.push({ j, t: k - 1 });
          valueWhere.push(k * B + j);
          targets.push(ids[i]![k]!);
          oldLp.push(old[i]![k]!);
          advs.push(adv[i]![k]!);
          if (ref) refLp.push(ref[i]![k]!);
          w.push(reductionWeights[i]!);
          if (returns) {
            rets.push(returns[i]![k]!);
            oldV.push(oldValues![i]![k]!);
          }
        }
      });
      const nt = where.length;
      tokens += nt;
      if (nt === 0) continue; // no targets: no contribution to the loss or the gradient
      const weights = Float32Array.from(w);
      let stats: tf.Tensor[] = [];
      const { value, grads } = tf.variableGrads(() => {
        const hs = gruStates(c.policy, tf.tensor1d(tm, "int32"), T, B, H);
        const logits = readoutLogits(c.policy, c.shape, hs, tm, T, B, where);
        let scaled: tf.Tensor2D = tf.div(logits, tau);
        if (trunc) scaled = tf.add(scaled, tf.tensor2d(keepMask(logits.dataSync() as Float32Array, nt, V, sampling!, targets), [nt, V]));
        const logpAll = tf.logSoftmax(scaled);
        const logp = tf.sum(tf.mul(logpAll, tf.oneHot(tf.tensor1d(targets, "int32"), V)), 1) as tf.Tensor1D;
        const terms = policyTerms(
          { logp, logpAll, oldLogp: Float32Array.from(oldLp), advantages: Float32Array.from(advs), refLogp: ref ? Float32Array.from(refLp) : null, weights },
          clip,
          { coef: klCoef, estimator },
        );
        stats = [terms.policyLoss, terms.kl, terms.entropySum, terms.clipped, terms.ratioSum, terms.ratioMin, terms.ratioMax].map((t) => tf.keep(t));
        return terms.loss;
      }, policyVars.map(([, v]) => v));
      loss += await0(value);
      // (`value` may be one of the statistics: read them all before disposing any.)
      const [pl, kl, ent, cl, rs, rmin, rmax] = stats.map(await0) as [number, number, number, number, number, number, number];
      for (const t of new Set([value, ...stats])) t.dispose();
      const named: Record<string, tf.Tensor> = {};
      for (const [name, v] of policyVars) if (grads[v.name]) named[name] = grads[v.name]!;
      add(policyGrads, named);
      for (const g of Object.values(grads)) g.dispose();
      policyLoss += pl;
      klSum += kl;
      entropySum += ent;
      clipped += cl;
      ratioSum += rs;
      ratioMin = Math.min(ratioMin, rmin);
      ratioMax = Math.max(ratioMax, rmax);

      if (c.critic && criticGrads && p.critic) {
        const criticVars = [...c.critic.vars.entries()];
        const vc = p.critic.value_clip ?? null;
        const r = tf.variableGrads(() => {
          const hs = gruStates(c.critic!, tf.tensor1d(tm, "int32"), T, B, H);
          const v = criticValues(c.critic!, tf.gather(hs, tf.tensor1d(valueWhere, "int32")));
          return valueTerms(v, Float32Array.from(oldV), Float32Array.from(rets), weights, vc);
        }, criticVars.map(([, v]) => v));
        valueLoss += await0(r.value);
        r.value.dispose();
        const namedC: Record<string, tf.Tensor> = {};
        for (const [name, v] of criticVars) if (r.grads[v.name]) namedC[name] = r.grads[v.name]!;
        add(criticGrads, namedC);
        for (const g of Object.values(r.grads)) g.dispose();
      }
    }
    this.timing.trainTokens = padded;
    this.timing.trainSeconds = (performance.now() - started) / 1000;
    const perToken = (x: number) => (tokens > 0 ? x / tokens : 0);
    return {
      loss,
      policy: policyGrads,
      critic: criticGrads,
      stats: {
        loss,
        policy_loss: policyLoss + 0,
        kl: klSum,
        entropy: perToken(entropySum),
        clip_fraction: perToken(clipped),
        ratio_mean: tokens > 0 ? ratioSum / tokens : 1,
        ratio_min: tokens > 0 ? ratioMin : 1,
        ratio_max: tokens > 0 ? ratioMax : 1,
        ...(p.critic ? { value_loss: valueLoss } : {}),
        tokens: d.tokens,
      },
    };
  }

  trainStep(p: TrainStepParams): TrainStepResult {
    const c = this.conf;
    if (p.lr !== undefined && p.lr !== null && !(typeof p.lr === "number" && Number.isFinite(p.lr) && p.lr > 0)) throw invalid(`lr must be a positive finite number or null, got ${JSON.stringify(p.lr)}`);
    const g = this.computeGradients(p);
    const params = c.policy.read();
    const gradNorm = c.policyOpt.update(params, g.policy, p.lr ?? undefined);
    c.policy.write(params);
    if (c.critic && c.criticOpt && g.critic && g.critic.size > 0) {
      const cp = c.critic.read();
      c.criticOpt.update(cp, g.critic);
      c.critic.write(cp);
    }
    this.policyVersion++;
    this.weightsChanged();
    return { ...g.stats, grad_norm: gradNorm, policy_version: this.policyVersion };
  }

  // --- checkpoints -----------------------------------------------------------------------------

  save(dir: string): { files: string[]; policy_version: number } {
    const c = this.conf;
    if (typeof dir !== "string" || dir === "") throw invalid("save needs a path");
    const target = path.resolve(dir);
    mkdirSync(path.dirname(target), { recursive: true });
    const tmp = `${target}.tmp-${process.pid}`;
    rmSync(tmp, { recursive: true, force: true });
    mkdirSync(tmp);
    const model = new Map<string, StTensor>();
    const put = (prefix: string, set: ParamSet | null) => {
      if (!set) return;
      const values = set.read();
      for (const s of set.specs) model.set(`${prefix}.${s.name}`, { dtype: "F32", shape: s.shape, data: values.get(s.name)! });
    };
    put("policy", c.policy);
    put("critic", c.critic);
    put("reference", this.referenceParams);
    put("behaviour", this.behaviour?.params ?? null);
    const optimizer = new Map<string, StTensor>();
    const putOpt = (prefix: string, opt: AdamW | null, set: ParamSet | null) => {
      if (!opt || !set) return;
      for (const s of set.specs) {
        const slot = opt.slots.get(s.name);
        if (!slot) continue;
        optimizer.set(`${prefix}.${s.name}.m`, { dtype: "F32", shape: s.shape, data: slot.m });
        optimizer.set(`${prefix}.${s.name}.v`, { dtype: "F32", shape: s.shape, data: slot.v });
      }
    };
    putOpt("policy", c.policyOpt, c.policy);
    putOpt("critic", c.criticOpt, c.critic);
    const state = {
      format: CHECKPOINT_FORMAT,
      model: MODEL_NAME,
      shape: c.shape,
      seed: c.seed,
      vocabulary: c.tokenizer.words,
      policy_version: this.policyVersion,
      optimizer_step: c.policyOpt.step,
      critic_optimizer_step: c.criticOpt?.step ?? null,
      reference: this.referenceParams ? { policy_version: this.referenceVersion } : null,
      behaviour: this.behaviour ? { policy_version: this.behaviour.version } : null,
      // Sampling draws from per-request seeds and there is no dropout: no other random state.
      rng: { init: [c.seed, 1], sampling: "per-request seed, stream 7" },
    };
    writeFileSynced(path.join(tmp, "model.safetensors"), encodeSafetensors(model, { format: CHECKPOINT_FORMAT }));
    writeFileSynced(path.join(tmp, "optimizer.safetensors"), encodeSafetensors(optimizer, { format: CHECKPOINT_FORMAT }));
    writeFileSynced(path.join(tmp, "trainer.json"), `${JSON.stringify(state, null, 2)}\n`);
    if (existsSync(target)) {
      const old = `${target}.old-${process.pid}`;
      rmSync(old, { recursive: true, force: true });
      renameSync(target, old);
      renameSync(tmp, target);
      rmSync(old, { recursive: true, force: true });
    } else renameSync(tmp, target);
    // The next iteration starts from an empty prefix cache, as a resumed run does.
    this.cache.clear();
    return { files: ["model.safetensors", "optimizer.safetensors", "trainer.json"], policy_version: this.policyVersion };
  }

  load(dir: string): { files: string[]; policy_version: number } {
    const c = this.conf;
    const target = path.resolve(String(dir));
    let state: { format?: string; model?: string; shape?: ModelShape; vocabulary?: string[]; policy_version?: number; optimizer_step?: number; critic_optimizer_step?: number | null; reference?: { policy_version: number } | null; behaviour?: { policy_version: number } | null };
    try {
      state = JSON.parse(readFileSync(path.join(target, "trainer.json"), "utf8")) as typeof state;
    } catch (error) {
      throw invalid(`cannot read a checkpoint at ${target}: ${(error as Error).message}`);
    }
    if (state.format !== CHECKPOINT_FORMAT || state.model !== MODEL_NAME) throw invalid(`${target} is not a ${MODEL_NAME} checkpoint (format ${String(state.format)})`);
    const words = c.tokenizer.words;
    if (!state.vocabulary || state.vocabulary.length !== words.length || state.vocabulary.some((w, i) => w !== words[i])) throw invalid(`${target}: the checkpoint's vocabulary differs from the configured one`);
    if (!state.shape || (Object.keys(c.shape) as (keyof ModelShape)[]).some((k) => state.shape![k] !== c.shape[k])) throw invalid(`${target}: the checkpoint's model shape ${JSON.stringify(state.shape)} differs from the configured ${JSON.stringify(c.shape)}`);
    const model = readSafetensors(path.join(target, "model.safetensors")).tensors;
    const optimizer = readSafetensors(path.join(target, "optimizer.safetensors")).tensors;
    const take = (prefix: string, set: ParamSet) => {
      const values = new Map<string, Float32Array>();
      for (const s of set.specs) {
        const t = model.get(`${prefix}.${s.name}`);
        if (!t || !(t.data instanceof Float32Array)) throw invalid(`${target}: model.safetensors lacks ${prefix}.${s.name}`);
        values.set(s.name, t.data);
      }
      return values;
    };
    c.policy.write(take("policy", c.policy));
    if (c.critic) c.critic.write(take("critic", c.critic));
    this.referenceParams?.dispose();
    this.referenceParams = null;
    this.referenceVersion = -1;
    if (state.reference) {
      const ref = c.policy.clone();
      ref.write(take("reference", ref));
      this.referenceParams = ref;
      this.referenceVersion = state.reference.policy_version;
    }
    this.dropBehaviour();
    if (state.behaviour) {
      const params = c.policy.clone();
      params.write(take("behaviour", params));
      this.behaviour = { params, version: state.behaviour.policy_version, table: null, readout: null, cache: new PrefixCache() };
    }
    const restore = (prefix: string, opt: AdamW | null, set: ParamSet | null, step: number | null | undefined) => {
      if (!opt || !set) return;
      opt.slots.clear();
      opt.step = step ?? 0;
      for (const s of set.specs) {
        const m = optimizer.get(`${prefix}.${s.name}.m`);
        const v = optimizer.get(`${prefix}.${s.name}.v`);
        if (m && v) opt.slots.set(s.name, { m: Float32Array.from(m.data), v: Float32Array.from(v.data) });
      }
    };
    restore("policy", c.policyOpt, c.policy, state.optimizer_step);
    restore("critic", c.criticOpt, c.critic, state.critic_optimizer_step);
    this.policyVersion = state.policy_version ?? 0;
    this.weightsChanged();
    return { files: ["model.safetensors", "optimizer.safetensors", "trainer.json"], policy_version: this.policyVersion };
  }

  evalOp(op: string, input: unknown): unknown {
    return evalOp(op, input);
  }

  /** Parameter values (tests, benchmarks). */
  parameters(which: "policy" | "critic" | "reference" | "behaviour" = "policy"): Map<string, Float32Array> {
    const set = which === "policy" ? this.conf.policy : which === "critic" ? this.conf.critic : which === "behaviour" ? (this.behaviour?.params ?? null) : this.referenceParams;
    if (!set) throw new Error(`no ${which} parameters`);
    return set.read();
  }
}

function await0(t: tf.Tensor): number {
  return (t.dataSync() as Float32Array)[0]!;
}
