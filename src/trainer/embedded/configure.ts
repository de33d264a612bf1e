// configure (docs/protocol.md): the model named by the request (plan/model-name.ts), its word tokenizer
// over the runtime's vocabulary, weights initialised from the seed (policy on stream 1, critic
// on stream 2), the optimizers, and the reference policy's mode. A new configuration replaces
// every slot of the previous one.
import type { ChatTemplateInfo, ConfigureParams, ConfigureResult } from "../../contracts/trainer-protocol.js";
import { unsupported } from "./errors.js";
import { paramSpecs, ParamSet, type ModelShape } from "./model.js";
import { parseTinyModel, TINY_MODEL } from "../../plan/model-name.js";
import { AdamW, type OptimizerConfig } from "./optimizer.js";
import { Rng } from "./rng.js";
import type { ReferenceMode, TrainerState } from "./state.js";
import { BOS, EOS, PAD, WordTokenizer } from "./tokenizer.js";
import { releaseAll } from "./weights.js";

/**
 * The context builtin:tiny declares (configure's `model.max_context`). The GRU has no position
 * table, but its prefill runs one token after another (about 60 us a token on one core), so
 * 32,768 tokens are about 2 s of prefill: engine mode refuses longer requests instead of holding
 * the trainer for a minute per million ids.
 */
const TINY_MAX_CONTEXT = 32_768;

type Algorithm = ConfigureParams["algorithm"];
type OptimizerRequest = {
  readonly name?: string;
  readonly lr?: number;
  readonly betas?: readonly [number, number];
  readonly eps?: number;
  readonly weight_decay?: number;
  readonly grad_clip?: number | null;
  readonly warmup_steps?: number;
};
type CriticRequest = { readonly optimizer?: OptimizerRequest; readonly init?: "policy" | "random" };
type KlRequest = { readonly reference?: ReferenceMode | null };

/** AdamW settings of the request, each absent field at its default. */
function optimizerConfig(o: OptimizerRequest = {}, what: string): OptimizerConfig {
  if (o.name !== undefined && o.name !== "adamw")
    throw unsupported(`${what}: only adamw is supported, not '${o.name}'`);
  return {
    lr: o.lr ?? 1e-3,
    betas: o.betas ? [o.betas[0], o.betas[1]] : [0.9, 0.999],
    eps: o.eps ?? 1e-8,
    weight_decay: o.weight_decay ?? 0,
    grad_clip: o.grad_clip === null ? null : (o.grad_clip ?? 1),
    warmup_steps: o.warmup_steps ?? 0,
  };
}

/** The critic: a second GRU with a value head; `init: policy` (the default) copies the policy's GRU. */
function criticFor(shape: ModelShape, seed: number, policy: ParamSet, init: CriticRequest["init"]): ParamSet {
  const critic = ParamSet.init(paramSpecs(shape, "value"), new Rng(seed, 2));
  if (init !== "random") {
    const values = critic.read();
    for (const [k, v] of policy.read()) if (values.has(k)) values.set(k, v);
    critic.write(values);
  }
  return critic;
}

/** builtin:tiny's template (tokenizer.ts): per message, so prefix-preserving; the runtime describes tools. */
const TEMPLATE: ChatTemplateInfo = {
  prefix_preserving: true,
  renders_tools: false,
  tool_call_format: "hermes",
  tool_role: "tool",
};

const decayed = (set: ParamSet) => new Set(set.specs.filter((s) => s.decay).map((s) => s.name));

export function configure(state: TrainerState, p: ConfigureParams): ConfigureResult {
  const asked = parseTinyModel(p.policy.model, state.options);
  if ("error" in asked) throw unsupported(asked.error);
  const template = p.policy.chat_template;
  if (template !== null && template !== "builtin")
    throw unsupported(`'${TINY_MODEL}' has only its built-in chat template (chat_template null), not '${template}'`);
  // The embedded model trains every float32 weight itself: adapters and other storage dtypes are the PyTorch trainer's.
  if (p.policy.lora)
    throw unsupported(
      `policy.lora: the embedded trainer has no LoRA adapters (it trains all of '${TINY_MODEL}'); remove lora or run on the PyTorch trainer`,
    );
  if (p.policy.dtype !== undefined && p.policy.dtype !== "float32") {
    throw unsupported(
      `policy.dtype: the embedded trainer stores float32 weights only, not ${p.policy.dtype}; use float32 or the PyTorch trainer`,
    );
  }
  const algorithm: Algorithm = p.algorithm;
  const criticRequest = algorithm.critic as CriticRequest | null | undefined;
  const optimizerRequest = algorithm.optimizer as OptimizerRequest | undefined;
  const reference = (algorithm.kl as KlRequest | undefined)?.reference ?? null;
  const tokenizer = new WordTokenizer(p.vocabulary ?? []);
  const shape: ModelShape = { vocab: tokenizer.size, ...asked.shape };
  releaseAll(state);
  const policy = ParamSet.init(paramSpecs(shape, "policy"), new Rng(p.seed, 1));
  const critic = criticRequest ? criticFor(shape, p.seed, policy, criticRequest.init) : null;
  state.configuration = {
    tokenizer,
    shape,
    seed: p.seed,
    policy,
    policyOpt: new AdamW(optimizerConfig(optimizerRequest, "algorithm.optimizer"), decayed(policy)),
    critic,
    criticOpt: critic
      ? new AdamW(optimizerConfig(criticRequest?.optimizer, "algorithm.critic.optimizer"), decayed(critic))
      : null,
    reference: reference
      ? reference.kind === "refresh"
        ? { kind: "refresh", every: reference.every }
        : { kind: "initial" }
      : null,
  };
  state.policyVersion = 0;
  return {
    model: { name: TINY_MODEL, parameters: policy.count, max_context: TINY_MAX_CONTEXT },
    tokenizer: {
      vocab_size: tokenizer.size,
      bos_id: BOS,
      eos_id: EOS,
      pad_id: PAD,
      stop_ids: [EOS],
      template: TEMPLATE,
    },
    policy_version: state.policyVersion,
  };
}
