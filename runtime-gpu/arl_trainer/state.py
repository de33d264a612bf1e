"""The explicit trainer state: what configure builds, the weight slots, the optimizers, and the
counters that requests advance. Every request module is functions over a TrainerState."""
from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.nn as nn

from .distributed import Dist
from .errors import invalid
from .model import LMHandle, PolicyForward
from .optimizer import Optim


@dataclass
class WeightSlots:
    """The models of a configured trainer (docs/protocol.md: current, reference, behaviour, critic).
    `*_train` is the data-parallel wrapper that training runs through (the module itself when
    there is one rank); reference and behaviour are frozen copies."""

    handle: LMHandle
    policy: PolicyForward
    policy_train: nn.Module
    reference: nn.Module | None = None
    # whether the reference holds the policy RL starts from: allocated at configure (sharded
    # weights wrap it there), filled from the policy at its first use, i.e. after any SFT cold
    # start (docs/semantics.md §6); under LoRA it is the base model and always taken
    reference_taken: bool = False
    behaviour: PolicyForward | None = None
    # the policy version the behaviour slot holds; None until snapshot (or a load) fills it
    behaviour_version: int | None = None
    critic: nn.Module | None = None
    critic_train: nn.Module | None = None
    # the PeftModel owning the policy's LoRA adapters (lora.py); None: full fine-tuning
    adapters: Any = None


@dataclass
class Optimizers:
    policy_cfg: Optim
    policy: torch.optim.Optimizer
    critic_cfg: Optim | None = None
    critic: torch.optim.Optimizer | None = None


@dataclass
class Configured:
    """What configure fixed: the request's settings, the tokenizer, the slots and optimizers."""

    seed: int
    options: dict[str, Any]
    spec: str
    chat_template: Any
    # bf16 autocast around forwards (fp32 master weights)
    autocast: bool
    dtype: torch.dtype
    tokenizer: Any
    weights: WeightSlots
    optimizers: Optimizers
    # refresh the reference to the policy every this many steps (algorithm.kl.reference refresh)
    reference_refresh: int | None = None


@dataclass
class TrainerState:
    dist: Dist
    # configure.options defaults given on the command line / by the embedding process
    default_options: dict[str, Any] = field(default_factory=dict)
    conf: Configured | None = None
    policy_version: int = 0
    # optimizer steps taken (the warm-up schedule and the reference refresh count them)
    step: int = 0
    # saves made by this process: each save's temporary directory has its own name
    save_count: int = 0
    # the checkpoint being written on a thread (checkpoint.BackgroundSave), until `saved` collects it
    background_save: Any = None

    @property
    def device(self) -> torch.device:
        return self.dist.device


def configured(state: TrainerState) -> Configured:
    """The configuration, or the protocol's answer to a request that needs one before configure."""
    if state.conf is None:
        raise invalid("configure the trainer first")
    return state.conf


def autocast(state: TrainerState) -> AbstractContextManager[Any]:
    """bf16 autocast on the trainer's device when configure chose it, else nothing."""
    conf = configured(state)
    return torch.autocast(state.device.type, dtype=torch.bfloat16) if conf.autocast else nullcontext()


def infers(state: TrainerState) -> bool:
    """Whether this rank runs inference requests (rank 0, or every rank when weights are sharded)."""
    return state.dist.is_main or state.dist.all_ranks_infer
