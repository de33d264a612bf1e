"""Weight slots (docs/protocol.md): the current policy, the frozen reference (KL) and behaviour
(asynchronous rollout) copies, and the critic. Which slot a request reads, snapshot, the
reference refresh, and the slots' tensors as checkpoints hold them."""
from __future__ import annotations

import copy
import logging

import torch
import torch.nn as nn

from .errors import invalid
from .lora import AdapterSnapshot
from .model import LMHandle, PolicyForward
from .qwen2 import load_state_dict_strict
from .state import Configured, TrainerState, WeightSlots, configured

log = logging.getLogger("arl_trainer")


def frozen_copy(handle: LMHandle) -> PolicyForward:
    """A gradient-free copy of the policy's weights (reference and behaviour slots)."""
    module = copy.deepcopy(handle.module)
    for q in module.parameters():
        q.requires_grad_(False)
    copied = copy.copy(handle)
    copied.module = module
    return PolicyForward(copied).eval()


def empty_behaviour_slot(w: WeightSlots) -> nn.Module:
    """A behaviour slot to fill: a frozen copy of the policy, or under LoRA a copy of its adapters only."""
    return AdapterSnapshot(w.policy, w.adapters) if w.adapters is not None else frozen_copy(w.handle)


def behaviour_slot(conf: Configured) -> PolicyForward:
    w = conf.weights
    if w.behaviour is None or w.behaviour_version is None:
        raise invalid("no behaviour policy: send snapshot first (or load a checkpoint that has one)")
    return w.behaviour


def sampler_of(state: TrainerState, which: str) -> tuple[PolicyForward, int | None]:
    """The slot a generate request samples from, and the policy version it holds."""
    conf = configured(state)
    if which == "current":
        return conf.weights.policy, state.policy_version
    if which == "behaviour":
        return behaviour_slot(conf), conf.weights.behaviour_version
    raise invalid("generate samples from the current or behaviour policy")


def scoring_weights(state: TrainerState, which: str) -> nn.Module:
    """The slot a logprobs request reads: current, reference or behaviour."""
    conf = configured(state)
    w = conf.weights
    if which == "reference":
        return reference_slot(state)
    if which == "current":
        return w.policy
    if which == "behaviour":
        return behaviour_slot(conf)
    raise invalid("policy must be current, reference or behaviour")


@torch.no_grad()
def snapshot(state: TrainerState, params: dict) -> dict:
    """Copies the current weights into the behaviour slot (docs/protocol.md, behaviour policy)."""
    conf = configured(state)
    w = conf.weights
    if w.behaviour is None:
        if state.dist.strategy == "fsdp":
            raise invalid("with sharded weights the behaviour slot is allocated at configure: send configure.behaviour_policy true")
        w.behaviour = empty_behaviour_slot(w)  # made from the current weights
    elif isinstance(w.behaviour, AdapterSnapshot):
        w.behaviour.copy_from_policy()
    else:
        for q_b, q in zip(w.behaviour.parameters(), w.policy.parameters(), strict=True):
            q_b.copy_(q)
    w.behaviour_version = state.policy_version
    return {"policy_version": state.policy_version}


def reference_slot(state: TrainerState) -> nn.Module:
    """The reference policy, filled from the current policy at its first use (after any SFT cold
    start, as the embedded trainer's referenceWeights does). Every rank reaches it on the same
    request, so the copy of sharded weights stays in step."""
    w = configured(state).weights
    if w.reference is None:
        raise invalid("no reference policy: configure algorithm.kl.reference (or a KL coefficient > 0)")
    if not w.reference_taken:
        refresh_reference(state)
    return w.reference


@torch.no_grad()
def refresh_reference(state: TrainerState) -> None:
    w = configured(state).weights
    assert w.reference is not None
    for q_ref, q in zip(w.reference.parameters(), w.policy.parameters(), strict=True):
        q_ref.copy_(q)
    w.reference_taken = True
    log.info("reference policy taken from the policy at step %d", state.step)


# --- the slots' tensors (checkpoints) --------------------------------------------------------------


def full_state(state: TrainerState, module: nn.Module, prefix: str = "") -> dict[str, torch.Tensor]:
    """The whole (unsharded) state dict of a slot, names without `prefix`."""
    if state.dist.strategy == "fsdp":
        from torch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict

        sd = get_model_state_dict(module, options=StateDictOptions(full_state_dict=True, cpu_offload=True))
        return {k[len(prefix) :]: v for k, v in sd.items() if k.startswith(prefix)}
    return {k[len(prefix) :]: v for k, v in module.state_dict().items() if k.startswith(prefix)}


def tied_names(lm: nn.Module) -> list[str]:
    """Tensors that are another tensor under a second name (tied output embeddings)."""
    if getattr(getattr(lm, "config", None), "tie_word_embeddings", False):
        return ["lm_head.weight"]
    return []


def policy_tensors(state: TrainerState, module: PolicyForward) -> dict[str, torch.Tensor]:
    """A policy-shaped slot's tensors under transformers' names, tied copies left out."""
    sd = full_state(state, module, "lm.")
    tied = set(tied_names(module.lm))
    return {k: v for k, v in sd.items() if k not in tied}


def load_tensors(state: TrainerState, module: nn.Module, tensors: dict[str, torch.Tensor], prefix: str) -> None:
    """Copies checkpoint tensors into a slot; they must fit it exactly (names and shapes)."""
    lm = getattr(module, "lm", None)
    tied = tied_names(lm) if lm is not None else []
    full = {prefix + k: v for k, v in tensors.items()}
    for name in tied:
        emb = [k for k in tensors if k.endswith("embed_tokens.weight")]
        if emb and prefix + name not in full:
            full[prefix + name] = tensors[emb[0]]
    if state.dist.strategy == "fsdp":
        from torch.distributed.checkpoint.state_dict import StateDictOptions, set_model_state_dict

        set_model_state_dict(module, full, options=StateDictOptions(full_state_dict=True))
        return
    load_state_dict_strict(module, full, tied=False)
