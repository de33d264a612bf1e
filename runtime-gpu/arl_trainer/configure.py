"""configure: the model and tokenizer from the request, seeds, precision, and the weight slots
and optimizers the algorithm needs. A configure that fails leaves the previous configuration."""
from __future__ import annotations

import logging
import os
from typing import Any

import torch
import torch.nn as nn

from .errors import invalid, unsupported
from .lora import AdapterDisabledForward, AdapterSnapshot, apply_lora, check_supported, without_adapters
from .model import LMHandle, PolicyForward, layers_of, make_value_model
from .optimizer import Optim
from .pretrained import load_pretrained, transformers_available, word_vocabulary
from .qwen2 import DTYPES, Qwen2Config, build_plain, count_parameters, parse_builtin
from .rng import seed_everything
from .state import Configured, Optimizers, TrainerState, WeightSlots
from .tokenizer import HFTokenizer, WordTokenizer
from .weights import frozen_copy

log = logging.getLogger("arl_trainer")


def configure(state: TrainerState, p: dict) -> dict:
    seed = int(p["seed"])
    policy = p["policy"]
    algorithm = p["algorithm"]
    options = {**state.default_options, **(p.get("options") or {})}
    seed_everything(seed)
    if options.get("deterministic"):
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
        torch.use_deterministic_algorithms(True, warn_only=True)
    spec = policy["model"]
    device = state.device

    # precision: fp32 master weights; bf16 autocast by default on CUDA (on CPU only when
    # options.precision asks for it: tests of the autocast path)
    precision = options.get("precision", "bf16" if device.type == "cuda" else "fp32")
    if precision not in ("bf16", "fp32"):
        raise invalid("options.precision must be bf16 or fp32")

    lora = policy.get("lora")
    if lora is not None:
        check_supported(algorithm, state.dist.strategy)
    handle, tokenizer = _load_model(spec, policy.get("dtype"), p["vocabulary"], options, seed)
    tokenizer_result = _tokenizer_result(tokenizer, policy["chat_template"])
    handle.module.to(device)
    adapters = apply_lora(handle, lora, bool(options.get("gradient_checkpointing"))) if lora is not None else None
    if options.get("gradient_checkpointing"):
        handle.set_gradient_checkpointing(True)
    if options.get("compile"):
        if hasattr(nn.Module, "compile"):  # torch >= 2.2: in place, parameter names unchanged
            for layer in layers_of(handle.module):
                layer.compile()
        else:
            log.warning("options.compile needs torch >= 2.2 (this is %s): ignored", torch.__version__)
    dtype = next(handle.module.parameters()).dtype
    weights = _allocate_slots(handle, algorithm, bool(p.get("behaviour_policy")), seed, device, adapters)
    critic_cfg = algorithm.get("critic")
    critic_optim = Optim.from_message(critic_cfg.get("optimizer"), 1e-5) if weights.critic is not None else None
    optimizers = _wrap_and_make_optimizers(state, weights, algorithm, critic_optim)

    kl = algorithm.get("kl") or {}
    ref_spec = kl.get("reference")
    state.conf = Configured(
        seed=seed,
        options=options,
        spec=spec,
        chat_template=policy["chat_template"],
        autocast=precision == "bf16",
        dtype=dtype,
        tokenizer=tokenizer,
        weights=weights,
        optimizers=optimizers,
        reference_refresh=int(ref_spec.get("every")) if isinstance(ref_spec, dict) and ref_spec.get("kind") == "refresh" else None,
    )
    state.policy_version = 0
    state.step = 0
    n_params = count_parameters(handle.module)
    log.info("configured %s: %d parameters, dtype %s, device %s, autocast bf16 %s", spec, n_params, dtype, device, state.conf.autocast)
    # the model's context (prompt and generated tokens): what engine mode bounds a request by
    max_context = getattr(getattr(handle.module, "config", None), "max_position_embeddings", None)
    return {
        "model": {"name": spec, "parameters": n_params, **({"max_context": int(max_context)} if isinstance(max_context, int) and max_context > 0 else {})},
        "tokenizer": tokenizer_result,
        "policy_version": state.policy_version,
    }


def _tokenizer_result(tokenizer: Any, chat_template: str | None) -> dict[str, Any]:
    """The tokenizer's ids, its stop ids and what probing its chat template found out."""
    try:
        template = tokenizer.template_info(chat_template)
        stop_ids = tokenizer.stop_ids(chat_template)
    except NotImplementedError as e:
        raise unsupported(str(e)) from None
    except ValueError as e:
        raise invalid(f"policy.chat_template: {e}") from None
    return {
        "vocab_size": tokenizer.vocab_size,
        "bos_id": tokenizer.bos_id,
        "eos_id": tokenizer.eos_id,
        "pad_id": tokenizer.pad_id,
        "stop_ids": stop_ids,
        "template": template,
    }


def _load_model(spec: str, dtype: str | None, vocabulary: Any, options: dict[str, Any], seed: int) -> tuple[LMHandle, Any]:
    """The policy's handle in `dtype` (policy.dtype, which the protocol schema checked; absent:
    float32) and its tokenizer: a builtin
    model over the request's vocabulary, or a pretrained / checkpoint directory with the
    tokenizer beside it."""
    if spec.startswith("builtin:"):
        try:
            b = parse_builtin(spec)
        except ValueError as e:
            raise invalid(str(e)) from None
        if b.dtype is not None and dtype is not None and b.dtype != dtype:
            # the spec's own parameter is the more specific one (a plan may send the default)
            log.warning("model %s says dtype=%s: it overrides policy.dtype %s", spec, b.dtype, dtype)
        if vocabulary is not None:
            tok = WordTokenizer(vocabulary)
            b.config["vocab_size"] = max(tok.vocab_size, int(b.config.get("vocab_size", 0) or 0))
        elif b.config.get("vocab_size"):
            tok = WordTokenizer.synthetic(int(b.config["vocab_size"]))
            b.config["vocab_size"] = max(tok.vocab_size, int(b.config["vocab_size"]))
        else:
            raise invalid(f"model {spec} builds its tokenizer from 'vocabulary', which is null (or give vocab=N in the spec)")
        cfg = Qwen2Config(**b.config, bos_token_id=tok.bos_id, eos_token_id=tok.eos_id, pad_token_id=tok.pad_id)
        return LMHandle(build_plain(cfg, seed, DTYPES[b.dtype or dtype or "float32"]), spec), tok
    handle, tok_source = load_pretrained(spec, DTYPES[dtype or "float32"], options)
    return handle, _tokenizer_of(spec, tok_source, vocabulary, options)


# any of these in a model directory: it carries its tokenizer
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "tokenizer.model", "vocab.json")


def _tokenizer_of(spec: str, source: str, vocabulary: Any, options: dict[str, Any]) -> Any:
    """The tokenizer beside a pretrained model: the word-level vocabulary of a checkpoint this
    trainer wrote for a builtin model, else the transformers tokenizer of the directory / repo."""
    if os.path.isdir(source) and word_vocabulary(source):
        try:
            return WordTokenizer.load(source)
        except (ValueError, KeyError) as e:
            raise invalid(f"policy.model '{spec}': {e}") from None
    if not transformers_available():
        if vocabulary is None:
            raise invalid(f"policy.model '{spec}' has no word-level vocab.json and no vocabulary was given")
        return WordTokenizer(vocabulary)
    if os.path.isdir(source) and not any(os.path.exists(os.path.join(source, name)) for name in TOKENIZER_FILES):
        # transformers 5 would build an empty tokenizer from the config alone
        raise invalid(f"policy.model '{spec}': directory {source} has no tokenizer files ({', '.join(TOKENIZER_FILES)}); copy the tokenizer beside the weights")
    try:
        return HFTokenizer(source, bool(options.get("trust_remote_code")))
    except (OSError, ValueError) as e:
        reason = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise invalid(
            f"policy.model '{spec}': cannot load its tokenizer from {source} ({reason}); a model directory needs tokenizer.json and tokenizer_config.json"
        ) from None


def _allocate_slots(handle: LMHandle, algorithm: dict, behaviour_policy: bool, seed: int, device: torch.device, adapters: Any = None) -> WeightSlots:
    policy = PolicyForward(handle)
    policy.train()
    weights = WeightSlots(handle=handle, policy=policy, policy_train=policy, adapters=adapters)

    # reference policy (for KL): a frozen copy of the initial policy; under LoRA the base model,
    # i.e. the policy with its adapters disabled (no second copy of the weights)
    kl = algorithm.get("kl") or {}
    if kl.get("reference") is not None or float(kl.get("coef", 0) or 0) > 0:
        weights.reference = AdapterDisabledForward(policy, adapters) if adapters is not None else frozen_copy(handle)
        weights.reference_taken = adapters is not None

    # behaviour policy (asynchronous rollout): a frozen copy that `snapshot` refreshes and
    # `generate`/`logprobs` with policy "behaviour" read; allocated here when asked (sharded
    # weights need it before wrapping), otherwise at the first snapshot
    if behaviour_policy:
        weights.behaviour = AdapterSnapshot(policy, adapters) if adapters is not None else frozen_copy(handle)

    critic_cfg = algorithm.get("critic")
    if critic_cfg:
        weights.critic = make_value_model(handle, critic_cfg.get("init", "policy"), seed).to(device)
        if adapters is not None:
            without_adapters(weights.critic)
        weights.critic.train()
    return weights


def _wrap_and_make_optimizers(state: TrainerState, weights: WeightSlots, algorithm: dict, critic_optim: Optim | None) -> Optimizers:
    """Data-parallel wrapping, then the optimizers (FSDP2 replaces the parameters it shards)."""
    dist = state.dist
    weights.policy_train = dist.wrap(weights.policy, layers_of(weights.handle.module))
    if weights.reference is not None and dist.strategy == "fsdp":
        dist.wrap(weights.reference, layers_of(weights.reference.lm), trainable=False)
    if weights.behaviour is not None and dist.strategy == "fsdp":
        dist.wrap(weights.behaviour, layers_of(weights.behaviour.lm), trainable=False)
    critic_opt = None
    if weights.critic is not None:
        assert critic_optim is not None
        weights.critic_train = dist.wrap(weights.critic, layers_of(weights.critic))
        critic_opt = critic_optim.make([q for q in weights.critic.parameters() if q.requires_grad])
    policy_cfg = Optim.from_message(algorithm.get("optimizer"))
    return Optimizers(
        policy_cfg=policy_cfg,
        policy=policy_cfg.make([q for q in weights.policy.parameters() if q.requires_grad]),
        critic_cfg=critic_optim,
        critic=critic_opt,
    )

