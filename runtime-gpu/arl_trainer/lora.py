"""LoRA adapters (configure's `policy.lora`, docs/protocol.md `configure`) through peft.

The policy's base weights are frozen and low-rank adapters are injected into the target modules
in place: the handle's module stays the transformers (or plain) model, so every forward path of
the trainer is unchanged, and only the adapters require gradients, so only they reach the
optimizer. The KL reference is the same model with its adapters disabled (peft's
`disable_adapter()`): never a second copy of the base weights. Checkpoints hold the adapters in
the PEFT format (adapter_config.json + adapter_model.safetensors), which
`PeftModel.from_pretrained(base_model, directory)` loads. The behaviour slot of asynchronous
rollout holds a copy of the adapters only (AdapterSnapshot).
"""
from __future__ import annotations

import json
import os
from typing import Any

import torch
import torch.nn as nn

from . import safetensors_io
from .errors import invalid, unsupported
from .model import LMHandle, PolicyForward

ADAPTER_CONFIG = "adapter_config.json"
ADAPTER_WEIGHTS = "adapter_model.safetensors"


def apply_lora(handle: LMHandle, lora: dict[str, Any], gradient_checkpointing: bool) -> Any:
    """Injects the adapters into the policy's module; returns the PeftModel that owns them."""
    try:
        from peft import LoraConfig, get_peft_model
    except ModuleNotFoundError:
        raise unsupported("policy.lora needs the peft library (pip install peft), which is not installed") from None
    config = LoraConfig(
        r=int(lora["rank"]),
        lora_alpha=float(lora["alpha"]),
        lora_dropout=float(lora["dropout"]),
        target_modules=list(lora["targets"]),
        bias="none",
    )
    try:
        # adapters are float32 master weights even on a bfloat16 base (autocast_adapter_dtype)
        peft_model = get_peft_model(handle.module, config, autocast_adapter_dtype=True)
    except ValueError as e:
        names = sorted({name.rsplit(".", 1)[-1] for name, m in handle.module.named_modules() if isinstance(m, nn.Linear)})
        raise invalid(f"policy.lora.targets {list(lora['targets'])}: {e} (the model's linear modules are named {', '.join(names)})") from None
    if gradient_checkpointing and hasattr(handle.module, "enable_input_require_grads"):
        # with frozen embeddings, reentrant checkpointing would see inputs without grad and give
        # the adapters none (transformers' default, non-reentrant, does not need it)
        handle.module.enable_input_require_grads()
    return peft_model


def check_supported(algorithm: dict[str, Any], strategy: str) -> None:
    """What LoRA does not serve, refused at configure with the field that asks for it."""
    ref = (algorithm.get("kl") or {}).get("reference")
    if isinstance(ref, dict) and ref.get("kind") == "refresh":
        raise unsupported("algorithm.kl.reference refresh with policy.lora: the reference is the base model (the adapters disabled); use reference initial")
    if strategy == "fsdp":
        raise unsupported("policy.lora with sharded weights (FSDP): use data parallelism (DDP) or one rank")


def without_adapters(module: nn.Module) -> nn.Module:
    """A copy of the policy's trunk made for the critic (init policy) holds the policy's adapter
    layers and frozen base weights: put each base layer back in place of its adapter layer and
    train the critic whole, as without LoRA (policy.lora is the policy's)."""
    from peft.tuners.tuners_utils import BaseTunerLayer

    for name, child in list(module.named_modules()):
        if isinstance(child, BaseTunerLayer) and name:
            parent_name, _, attr = name.rpartition(".")
            parent = module.get_submodule(parent_name) if parent_name else module
            setattr(parent, attr, child.get_base_layer())
    for q in module.parameters():
        q.requires_grad_(True)
    return module


class AdapterDisabledForward(nn.Module):
    """The reference slot under LoRA: the policy's forward with its adapters disabled, i.e. the
    base model. It owns no parameters (the policy is not registered as a submodule), so nothing
    is copied, saved or refreshed; it runs in eval mode whatever the policy's mode."""

    def __init__(self, policy: PolicyForward, peft_model: Any) -> None:
        super().__init__()
        # plain attributes, not submodules: parameters() of this slot stays empty
        self.__dict__["_policy"] = policy
        self.__dict__["_peft"] = peft_model
        self.eval()

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        policy = self._policy
        was = policy.training
        policy.eval()
        try:
            with self._peft.disable_adapter():
                return policy(*args, **kwargs)
        finally:
            policy.train(was)


def adapter_tensors(peft_model: Any) -> dict[str, torch.Tensor]:
    """The adapters' tensors under PEFT's saved names (adapter name left out)."""
    from peft.utils import get_peft_model_state_dict

    return {k: v.detach().cpu().contiguous() for k, v in get_peft_model_state_dict(peft_model).items()}


def write_adapters(peft_model: Any, tensors: dict[str, torch.Tensor], directory: str, base: str) -> None:
    """adapter_config.json and adapter_model.safetensors, as PeftModel.save_pretrained writes them."""
    config = peft_model.peft_config["default"].to_dict()
    config["base_model_name_or_path"] = config.get("base_model_name_or_path") or base
    for key, value in config.items():
        if isinstance(value, set):
            config[key] = sorted(value)
    with open(os.path.join(directory, ADAPTER_CONFIG), "w") as f:
        json.dump(config, f, indent=2, default=str)
    safetensors_io.save_file(tensors, os.path.join(directory, ADAPTER_WEIGHTS), {"format": "pt"})


def load_adapters(peft_model: Any, directory: str) -> None:
    """Loads a checkpoint's adapters into the configured ones; shapes and names must fit."""
    from peft.utils import set_peft_model_state_dict

    path = os.path.join(directory, ADAPTER_WEIGHTS)
    if not os.path.exists(path):
        raise ValueError(f"no {ADAPTER_WEIGHTS}: the checkpoint holds no LoRA adapters, but policy.lora is configured")
    with open(safetensors_io.regular_file(os.path.join(directory, ADAPTER_CONFIG))) as f:
        saved = json.load(f)
    ours = peft_model.peft_config["default"]
    if int(saved.get("r", -1)) != int(ours.r) or sorted(saved.get("target_modules") or []) != sorted(ours.target_modules):
        raise ValueError(
            f"the checkpoint's adapters (rank {saved.get('r')}, targets {saved.get('target_modules')}) differ from policy.lora "
            f"(rank {ours.r}, targets {sorted(ours.target_modules)})"
        )
    tensors = safetensors_io.load_file(path)
    result = set_peft_model_state_dict(peft_model, tensors)
    unexpected = list(getattr(result, "unexpected_keys", []) or [])
    missing = [k for k in getattr(result, "missing_keys", []) or [] if "lora_" in k]
    if unexpected or missing:
        raise ValueError(f"the checkpoint's adapters do not fit policy.lora: unexpected {unexpected[:3]}, missing {missing[:3]}")


def _adapter_parameters(peft_model: Any) -> dict[str, nn.Parameter]:
    return {n: q for n, q in peft_model.base_model.model.named_parameters() if "lora_" in n}


class AdapterSnapshot(nn.Module):
    """The behaviour slot under LoRA (asynchronous rollout): the adapters' values at the last
    snapshot, and nothing else (the base weights are shared with the policy). A forward swaps
    them into the policy's adapters, runs the policy without gradients, and swaps the current
    values back; the parameters themselves (what the optimizer and DDP hold) never change
    identity. Requests are served one at a time, so no training forward sees the swap."""

    def __init__(self, policy: PolicyForward, peft_model: Any) -> None:
        super().__init__()
        live = _adapter_parameters(peft_model)
        self.__dict__["_policy"] = policy
        self.__dict__["_live"] = live
        # plain dicts, not buffers: the slot has no state_dict of its own (snapshot_tensors)
        self.__dict__["_saved"] = {n: q.detach().clone() for n, q in live.items()}
        self.__dict__["_held"] = {n: torch.empty_like(q) for n, q in live.items()}
        self.eval()

    @torch.no_grad()
    def copy_from_policy(self) -> None:
        for n, q in self._live.items():
            self._saved[n].copy_(q)

    def tensors(self) -> dict[str, torch.Tensor]:
        """The snapshot's adapters under the policy module's parameter names."""
        return {n: v.detach().cpu().contiguous() for n, v in self._saved.items()}

    @torch.no_grad()
    def load_tensors(self, tensors: dict[str, torch.Tensor]) -> None:
        if set(tensors) != set(self._saved):
            raise ValueError(f"the checkpoint's behaviour adapters do not fit policy.lora ({len(tensors)} tensors, {len(self._saved)} expected)")
        for n, v in tensors.items():
            if tuple(v.shape) != tuple(self._saved[n].shape):
                raise ValueError(f"behaviour adapter {n}: shape {tuple(v.shape)}, expected {tuple(self._saved[n].shape)}")
            self._saved[n].copy_(v)

    @torch.no_grad()
    def forward(self, *args: Any, **kwargs: Any) -> Any:
        policy = self._policy
        was = policy.training
        for n, q in self._live.items():
            self._held[n].copy_(q)
            q.copy_(self._saved[n])
        policy.eval()
        try:
            return policy(*args, **kwargs)
        finally:
            for n, q in self._live.items():
                q.copy_(self._held[n])
            policy.train(was)
