// The embedded CPU trainer `builtin:tiny`: the trainer protocol (docs/protocol.md) over the GRU of
// model.ts, in-process (main.ts serves it over stdin/stdout; tests drive it directly). This is
// the dispatcher: each request's params are validated against the protocol's schema
// (requests.ts), then the method runs as a function over the explicit state (state.ts) in the
// module of its concern: configure, encode, generate, score, update, weights, checkpoint.
import { outOfMemory } from "./errors.js";
import type { Handlers } from "../protocol/server.js";
import {
  PROTOCOL_NAME,
  PROTOCOL_VERSION,
  type ConfigureParams,
  type ConfigureResult,
  type GenerateParams,
  type GenerateResult,
  type HandshakeResult,
  type Method,
  type Methods,
  type PolicySlot,
  type Ragged,
  type TrainStepParams,
  type TrainStepResult,
} from "../../contracts/trainer-protocol.js";
import { initBackend, tf } from "./backend.js";
import { load, save, type CheckpointResult } from "./checkpoint.js";
import { configure } from "./configure.js";
import { evalOp } from "./conformance.js";
import { decode, encode, tokenize } from "./encode.js";
import { generate } from "./generate.js";
import { klEstimatorNames, reductionModes } from "./losses.js";
import { TINY_DEFAULT_SHAPE } from "../../plan/model-name.js";
import { parseRequest } from "./requests.js";
import type { SamplingParams } from "./sampling.js";
import { logprobs, values } from "./score.js";
import { TrainerState, type TinyOptions } from "./state.js";
import type { ChatMessage, WordTokenizer } from "./tokenizer.js";
import { computeGradients, resetOptimizers, trainStep, type Gradients } from "./update.js";
import { slotParameters, snapshot } from "./weights.js";
import { codeDigest } from "./code-digest.js";

const TRAINER_NAME = "arl-embedded";
const TRAINER_VERSION = "0.1.0";
/** This build's modules (code-digest.ts), computed once a process: the handshake's versions.code. */
let buildDigest: string | undefined;

export function defaultOptions(): TinyOptions {
  // ARL_TINY_CHUNK_TOKENS trades memory for speed only (test/plan/environment.test.ts allows it).
  const chunk = Number(process.env.ARL_TINY_CHUNK_TOKENS);
  return { ...TINY_DEFAULT_SHAPE, chunkTokens: Number.isInteger(chunk) && chunk > 0 ? chunk : 65_536 };
}

type MethodHandler<M extends Method> = (params: Methods[M][0]) => Methods[M][1];

export class TinyTrainer {
  private readonly state: TrainerState;
  /** Every protocol method, over validated params; the keys are the methods the handshake announces. */
  private readonly methods: { readonly [M in Method]: MethodHandler<M> };
  backendName = "uninitialised";

  constructor(readonly options: TinyOptions = defaultOptions()) {
    const state = new TrainerState(options);
    this.state = state;
    this.methods = {
      handshake: () => this.handshake(),
      configure: (p) => configure(state, p),
      encode: (p) => ({ ids: encode(state, p) }),
      decode: (p) => ({ texts: decode(state, p.ids) }),
      tokenize: (p) => ({ ids: tokenize(state, p.texts) }),
      generate: (p) => generate(state, p),
      logprobs: (p) => ({ logprobs: logprobs(state, p) }),
      values: (p) => ({ values: values(state, p.ids) }),
      train_step: (p) => trainStep(state, p),
      snapshot: () => snapshot(state),
      reset_optimizer: () => resetOptimizers(state),
      // Its checkpoints are small: every save is written before it is answered, never in the
      // background, so `saved` never has one outstanding.
      save: (p) => save(state, p.path, p.policy_only === true),
      saved: () => ({ path: null, files: [], policy_version: state.policyVersion }),
      load: (p) => load(state, p.path),
      eval_op: (p) => ({ output: evalOp(p.op, p.input) }),
      shutdown: () => ({}),
    };
  }

  async init(): Promise<void> {
    this.backendName = await initBackend();
  }

  /** One request: its params validated against the protocol's schema, then the method run. */
  request<M extends Method>(method: M, params: unknown): Methods[M][1] {
    const run = this.methods[method] as MethodHandler<M>;
    const parsed = parseRequest(method, params);
    const answer = (error: unknown): never => {
      throw outOfMemory(method, error) ?? error;
    };
    try {
      const result = run(parsed);
      return (result instanceof Promise ? result.catch(answer) : result) as Methods[M][1];
    } catch (error) {
      return answer(error);
    }
  }

  /** The handlers `serve` answers requests with (main.ts). */
  handlers(): Handlers {
    return Object.fromEntries(
      Object.keys(this.methods).map((m) => [m, (params: unknown) => this.request(m as Method, params)]),
    );
  }

  handshake(): HandshakeResult {
    return {
      protocol: PROTOCOL_NAME,
      version: PROTOCOL_VERSION,
      trainer: { name: TRAINER_NAME, version: TRAINER_VERSION },
      capabilities: {
        methods: Object.keys(this.methods),
        reductions: [...reductionModes],
        kl_estimators: [...klEstimatorNames],
        value_head: true,
        keep_sampling_mask: true,
        step_lr: true,
        is_weights: true,
        on_policy_step: true,
        world_size: 1,
        device: "cpu",
        behaviour_policy: true,
        // Weights from the configure seed, single-threaded kernels, sums in a fixed order: the same
        // requests give the same bytes (resumes and the cold-start cache rely on it).
        deterministic: true,
      },
      versions: {
        node: process.version,
        tfjs: tf.version.tfjs,
        tfjs_backend: this.backendName,
        code: (buildDigest ??= codeDigest(new URL("./main.js", import.meta.url))),
      },
    };
  }

  // --- the protocol's methods, called in-process (tests, benchmarks) ---------------------------

  configure(p: ConfigureParams): ConfigureResult {
    return this.request("configure", p);
  }

  encode(messages: readonly ChatMessage[], addGenerationPrompt: boolean): Ragged<Int32Array> {
    return this.request("encode", { messages, add_generation_prompt: addGenerationPrompt }).ids;
  }

  decode(ids: Ragged<Int32Array>): string[] {
    return this.request("decode", { ids }).texts;
  }

  generate(p: GenerateParams): GenerateResult {
    return this.request("generate", p);
  }

  logprobs(
    ids: Ragged<Int32Array>,
    policy: PolicySlot | "reference",
    sampling: SamplingParams | null,
    mask: Ragged<Uint8Array> | null = null,
  ): Ragged<Float32Array> {
    return this.request("logprobs", { ids, policy, sampling, mask }).logprobs;
  }

  values(ids: Ragged<Int32Array>): Ragged<Float32Array> {
    return this.request("values", { ids }).values;
  }

  trainStep(p: TrainStepParams): TrainStepResult {
    return this.request("train_step", p);
  }

  /** Loss, gradients (summed over microbatches) and statistics of a train step, without applying it. */
  computeGradients(p: TrainStepParams): Gradients {
    return computeGradients(this.state, parseRequest("train_step", p));
  }

  snapshot(): { policy_version: number } {
    return this.request("snapshot", {});
  }

  resetOptimizer(): { step: number } {
    return this.request("reset_optimizer", {});
  }

  save(dir: string): CheckpointResult {
    return this.request("save", { path: dir });
  }

  load(dir: string): CheckpointResult {
    return this.request("load", { path: dir });
  }

  evalOp(op: string, input: unknown): unknown {
    return this.request("eval_op", { op, input }).output;
  }

  // --- state, read in-process ------------------------------------------------------------------

  get tokenizer(): WordTokenizer {
    return this.state.conf.tokenizer;
  }

  get version(): number {
    return this.state.policyVersion;
  }

  /** Wall-clock figures of the last generate / train_step (for benchmarks). */
  get timing(): TrainerState["timing"] {
    return this.state.timing;
  }

  /** Parameter values of a slot (tests, benchmarks). */
  parameters(which: "policy" | "critic" | "reference" | "behaviour" = "policy"): Map<string, Float32Array> {
    return slotParameters(this.state, which);
  }
}
