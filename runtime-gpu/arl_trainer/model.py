"""The model handles the trainer uses: one interface over the plain model (qwen2.py) and
transformers' AutoModelForCausalLM, and the value model (critic).

Everything the trainer needs from a causal LM is in `LMHandle`: hidden states, the output head,
the files that describe the model in a checkpoint. pretrained.py loads them.
"""
from __future__ import annotations

import copy
import json
import os
from collections.abc import Callable
from typing import Any

import torch
import torch.nn as nn

from .qwen2 import build_plain

# --- value head ----------------------------------------------------------------------------------


class ValueModel(nn.Module):
    """A critic: a decoder trunk and a linear head on its last hidden states (PPO). The head starts
    at zero, so the initial values are 0."""

    def __init__(self, trunk: nn.Module, hidden_size: int, trunk_fn: Callable[..., torch.Tensor]) -> None:
        super().__init__()
        self.trunk = trunk
        self.score = nn.Linear(hidden_size, 1)
        nn.init.zeros_(self.score.weight)
        nn.init.zeros_(self.score.bias)
        self._trunk_fn = trunk_fn

    def forward(self, input_ids: torch.Tensor, select: torch.Tensor | None = None) -> torch.Tensor:
        h = self._trunk_fn(self.trunk, input_ids)
        if select is not None:
            h = h.reshape(-1, h.shape[-1]).index_select(0, select)
        return self.score(h).squeeze(-1).float()


def _plain_trunk(trunk: nn.Module, ids: torch.Tensor) -> torch.Tensor:
    return trunk(ids)[0]


def _hf_trunk(trunk: nn.Module, ids: torch.Tensor) -> torch.Tensor:
    return trunk(input_ids=ids, use_cache=False)[0]


# --- model handles -------------------------------------------------------------------------------


class LMHandle:
    """What the trainer needs from a causal LM, for the plain model and transformers models alike."""

    kind = "plain"

    def __init__(self, module: nn.Module, name: str) -> None:
        self.module = module
        self.name = name

    # hidden states of the final norm, and the KV cache when use_cache
    def hidden(self, module, input_ids, attention_mask=None, position_ids=None, past=None, use_cache=False):
        return module.model(input_ids, attention_mask, position_ids, past, use_cache)

    def head(self, module, h: torch.Tensor) -> torch.Tensor:
        return module.lm_head(h)

    @property
    def hidden_size(self) -> int:
        return self.module.config.hidden_size

    @property
    def vocab_size(self) -> int:
        return self.module.config.vocab_size

    def trunk(self, module) -> nn.Module:
        return module.model

    def trunk_fn(self) -> Callable[..., torch.Tensor]:
        return _plain_trunk

    def new_random_trunk(self, seed: int) -> nn.Module:
        return build_plain(self.module.config, seed, next(self.module.parameters()).dtype).model

    def set_gradient_checkpointing(self, on: bool) -> None:
        self.module.model.gradient_checkpointing = on

    def write_config(self, directory: str, dtype: torch.dtype) -> None:
        """config.json (transformers' Qwen2 fields), so transformers loads the checkpoint too."""
        with open(os.path.join(directory, "config.json"), "w") as f:
            json.dump(self.module.config.to_hf_dict(str(dtype).replace("torch.", "")), f, indent=2)


class HFHandle(LMHandle):
    """A transformers AutoModelForCausalLM."""

    kind = "hf"

    def hidden(self, module, input_ids, attention_mask=None, position_ids=None, past=None, use_cache=False):
        # transformers 5 names the KV cache `cache` (argument and output; past_key_values before)
        out = module.base_model(input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids, cache=past, use_cache=use_cache)
        return out[0], (out.cache if use_cache else None)

    def head(self, module, h: torch.Tensor) -> torch.Tensor:
        logits = module.get_output_embeddings()(h)
        cfg = module.config
        scale = getattr(cfg, "logit_scale", None)
        if scale is not None:
            logits = logits * scale
        cap = getattr(cfg, "final_logit_softcapping", None)
        if cap:
            logits = torch.tanh(logits / cap) * cap
        return logits

    @property
    def hidden_size(self) -> int:
        return self.module.config.hidden_size

    @property
    def vocab_size(self) -> int:
        return self.module.get_output_embeddings().weight.shape[0]

    def trunk(self, module) -> nn.Module:
        return module.base_model

    def trunk_fn(self):
        return _hf_trunk

    def new_random_trunk(self, seed: int) -> nn.Module:
        from transformers import AutoModel

        torch.manual_seed(seed)
        return AutoModel.from_config(self.module.config).to(next(self.module.parameters()).dtype)

    def set_gradient_checkpointing(self, on: bool) -> None:
        # transformers 5 renamed it activation checkpointing (the old names warn, and go in v6)
        m = self.module
        if hasattr(m, "activation_checkpointing_enable"):
            m.activation_checkpointing_enable() if on else m.activation_checkpointing_disable()
        elif on:
            m.gradient_checkpointing_enable()
        else:
            m.gradient_checkpointing_disable()

    def write_config(self, directory: str, dtype: torch.dtype) -> None:
        """config.json and generation_config.json as save_pretrained writes them."""
        config = copy.deepcopy(self.module.config)
        config.dtype = dtype
        if not getattr(config, "architectures", None):
            config.architectures = [type(self.module).__name__]
        config.save_pretrained(directory)
        generation = getattr(self.module, "generation_config", None)
        if generation is not None:
            generation.save_pretrained(directory)


def make_value_model(policy: LMHandle, init: str, seed: int) -> ValueModel:
    trunk = copy.deepcopy(policy.trunk(policy.module)) if init == "policy" else policy.new_random_trunk(seed + 1)
    vm = ValueModel(trunk, policy.hidden_size, policy.trunk_fn())
    return vm.to(next(policy.module.parameters()).dtype)


class PolicyForward(nn.Module):
    """The module that is wrapped for data parallelism: LM forward returning logits, at the selected
    flat positions (row * T + position) when `select` is given, plus the KV cache when asked."""

    def __init__(self, handle: LMHandle) -> None:
        super().__init__()
        self.lm = handle.module
        self._handle = handle

    def forward(self, input_ids, select=None, attention_mask=None, position_ids=None, past=None, use_cache=False):
        h, present = self._handle.hidden(self.lm, input_ids, attention_mask, position_ids, past, use_cache)
        if select is not None:
            h = h.reshape(-1, h.shape[-1]).index_select(0, select)
        logits = self._handle.head(self.lm, h)
        return (logits, present) if use_cache else logits


def layers_of(module: nn.Module) -> list[nn.Module]:
    """The decoder layers of a model (the units of sharding and of per-layer compile)."""
    for path in ("model.layers", "base_model.layers", "transformer.h", "trunk.layers"):
        obj: Any = module
        try:
            for part in path.split("."):
                obj = getattr(obj, part)
        except AttributeError:
            continue
        if isinstance(obj, nn.ModuleList):
            return list(obj)
    return []
