"""save / load: a checkpoint directory, written whole under a temporary name and renamed into
place (the old one is replaced only once the new one is complete and synced).

Files: model.safetensors (transformers tensor names, tied lm_head.weight left out), config.json
(and generation_config.json for transformers models), the tokenizer's files (chat template
included), so `AutoModelForCausalLM.from_pretrained` and `AutoTokenizer.from_pretrained` load the
directory, optimizer.pt (AdamW and RNG states; optimizer.rankR.pt per rank under
FSDP), critic / reference / behaviour .safetensors when those slots hold weights, trainer.json.
Under LoRA (lora.py) the policy's file is the PEFT adapters (adapter_config.json +
adapter_model.safetensors) instead of model.safetensors: the base weights are frozen and stay
where configure loaded them from, and the reference is the base.

`save` with `policy_only` writes the policy's own files alone (weights or adapters, config,
tokenizer, trainer.json marked `"contents": "policy"`): the folder an inference server loads on a
weight sync, which reads every *.safetensors beside the model's (docs/engines.md, "Weight sync");
`load` of it sets the policy's weights and version and leaves everything else as it is."""
from __future__ import annotations

import json
import os
import pickle
import shutil
import time
from typing import Any

import torch

from . import __version__, lora, safetensors_io
from .errors import invalid
from .rng import restore_rng_state, rng_state
from .state import Configured, TrainerState, configured
from .weights import empty_behaviour_slot, full_state, load_tensors, policy_tensors

CHECKPOINT_FORMAT = "arl-trainer-checkpoint"


def save(state: TrainerState, p: dict) -> dict:
    conf = configured(state)
    path = os.path.abspath(p["path"])
    policy_only = p.get("policy_only") is True
    parent = os.path.dirname(path)
    dist = state.dist
    w = conf.weights
    state.save_count += 1
    tmp = f"{path}.tmp-arl-{state.save_count}"
    old_dir = f"{path}.old-arl-{state.save_count}"
    # every rank takes part in gathering sharded tensors; rank 0 writes them
    policy_sd = policy_tensors(state, w.policy) if w.adapters is None else lora.adapter_tensors(w.adapters)
    critic_sd = full_state(state, w.critic) if w.critic is not None and not policy_only else None
    ref_sd = policy_tensors(state, w.reference) if w.reference is not None and w.reference_taken and w.adapters is None and not policy_only else None
    behaviour_sd = None
    if w.behaviour is not None and w.behaviour_version is not None and not policy_only:
        behaviour_sd = w.behaviour.tensors() if isinstance(w.behaviour, lora.AdapterSnapshot) else policy_tensors(state, w.behaviour)
    files: list[str] = []
    error: Exception | None = None
    if dist.is_main:
        try:
            os.makedirs(parent, exist_ok=True)
            shutil.rmtree(tmp, ignore_errors=True)
            os.makedirs(tmp)
            files = _write_checkpoint(state, conf, tmp, policy_sd, critic_sd, ref_sd, behaviour_sd, policy_only)
        except OSError as e:
            error = e
    error = _first_error(state, error)
    if dist.strategy == "fsdp" and error is None and not policy_only:
        # sharded optimizer state: one file per rank
        try:
            torch.save(_optimizer_state(conf), os.path.join(tmp, f"optimizer.rank{dist.rank}.pt"))
        except OSError as e:
            error = e
        error = _first_error(state, error)
    if error is None and dist.is_main:
        try:
            if os.path.exists(path):
                os.rename(path, old_dir)
            os.rename(tmp, path)
            shutil.rmtree(old_dir, ignore_errors=True)
            fsync_dir(parent)
            files = sorted(os.listdir(path))
        except OSError as e:
            error = e
    error = _first_error(state, error)
    if error is not None:
        raise invalid(f"cannot save to {path}: {error}")
    return {"files": files, "policy_version": state.policy_version}


def load(state: TrainerState, p: dict) -> dict:
    conf = configured(state)
    path = p.get("path")
    if not isinstance(path, str) or not os.path.isdir(path):
        raise invalid(f"load needs the path of a checkpoint directory (got {path!r})")
    try:
        with open(safetensors_io.regular_file(os.path.join(path, "trainer.json"))) as f:
            meta = json.load(f)
    except (OSError, ValueError) as e:
        raise invalid(f"{path}: no readable trainer.json ({e})") from None
    if meta.get("format") != CHECKPOINT_FORMAT:
        raise invalid(f"{path}: not a checkpoint of this trainer (format {meta.get('format')!r})")
    if meta.get("contents") == "policy":
        try:
            _load_policy(state, conf, path)
        except (ValueError, KeyError) as e:
            raise invalid(f"{path}: {e}") from None
        state.policy_version = int(meta.get("policy_version", 0))
        return {"files": sorted(os.listdir(path)), "policy_version": state.policy_version}
    try:
        _load_weights(state, conf, path, meta)
        opt_file = os.path.join(path, f"optimizer.rank{state.dist.rank}.pt" if state.dist.strategy == "fsdp" else "optimizer.pt")
        if os.path.exists(opt_file):
            saved = _torch_load(opt_file, state.device)
            opts = conf.optimizers
            opts.policy.load_state_dict(saved["policy"])
            if opts.critic is not None and saved.get("critic") is not None:
                opts.critic.load_state_dict(saved["critic"])
            restore_rng_state(saved.get("rng") or {})
    except (ValueError, KeyError) as e:
        raise invalid(f"{path}: {e}") from None
    state.policy_version = int(meta.get("policy_version", 0))
    state.step = int(meta.get("step", 0))
    return {"files": sorted(os.listdir(path)), "policy_version": state.policy_version}


def _load_policy(state: TrainerState, conf: Configured, path: str) -> None:
    w = conf.weights
    if w.adapters is not None:
        lora.load_adapters(w.adapters, path)
    elif os.path.exists(os.path.join(path, lora.ADAPTER_WEIGHTS)):
        raise ValueError("the checkpoint holds LoRA adapters, not the policy's weights: configure the same policy.lora to load it")
    else:
        load_tensors(state, w.policy, safetensors_io.load_file(os.path.join(path, "model.safetensors")), "lm.")


def _load_weights(state: TrainerState, conf: Configured, path: str, meta: dict[str, Any]) -> None:
    w = conf.weights
    _load_policy(state, conf, path)
    # a checkpoint without the reference's file was saved before its first use: take it again then
    w.reference_taken = w.adapters is not None
    if w.reference is not None and os.path.exists(os.path.join(path, "reference.safetensors")):
        load_tensors(state, w.reference, safetensors_io.load_file(os.path.join(path, "reference.safetensors")), "lm.")
        w.reference_taken = True
    behaviour_file = os.path.join(path, "behaviour.safetensors")
    if meta.get("behaviour_version") is not None and os.path.exists(behaviour_file):
        if w.behaviour is None:
            if state.dist.strategy == "fsdp":
                raise ValueError("the checkpoint has a behaviour policy: configure with behaviour_policy true to load it under sharding")
            w.behaviour = empty_behaviour_slot(w)
        if isinstance(w.behaviour, lora.AdapterSnapshot):
            w.behaviour.load_tensors(safetensors_io.load_file(behaviour_file))
        else:
            load_tensors(state, w.behaviour, safetensors_io.load_file(behaviour_file), "lm.")
        w.behaviour_version = int(meta["behaviour_version"])
    else:
        w.behaviour_version = None
    if w.critic is not None and os.path.exists(os.path.join(path, "critic.safetensors")):
        load_tensors(state, w.critic, safetensors_io.load_file(os.path.join(path, "critic.safetensors")), "")


def _first_error(state: TrainerState, error: Exception | None) -> Exception | None:
    """The first rank's failure (this rank's own error when it has one), on every rank alike."""
    errors = state.dist.all_gather_object(None if error is None else str(error))
    for e in errors:
        if e is not None:
            return error or OSError(e)
    return None


def _optimizer_state(conf: Configured) -> dict[str, Any]:
    opts = conf.optimizers
    return {"policy": opts.policy.state_dict(), "critic": opts.critic.state_dict() if opts.critic else None, "rng": rng_state()}


def _write_checkpoint(state: TrainerState, conf: Configured, d: str, policy_sd, critic_sd, ref_sd, behaviour_sd=None, policy_only=False) -> list[str]:
    meta = {"format": CHECKPOINT_FORMAT, "format_version": 1, "model": conf.spec, "contents": "policy" if policy_only else "checkpoint"}
    # transformers insists on metadata format "pt"
    st_meta = {"format": "pt", "arl_format": CHECKPOINT_FORMAT, "model": conf.spec}
    if conf.weights.adapters is not None:
        lora.write_adapters(conf.weights.adapters, policy_sd, d, conf.spec)
    else:
        safetensors_io.save_file(policy_sd, os.path.join(d, "model.safetensors"), st_meta)
    conf.weights.handle.write_config(d, conf.dtype)
    conf.tokenizer.save(d)
    if critic_sd is not None:
        safetensors_io.save_file(critic_sd, os.path.join(d, "critic.safetensors"), st_meta)
    if ref_sd is not None:
        safetensors_io.save_file(ref_sd, os.path.join(d, "reference.safetensors"), st_meta)
    if behaviour_sd is not None:
        safetensors_io.save_file(behaviour_sd, os.path.join(d, "behaviour.safetensors"), st_meta)
    if state.dist.strategy != "fsdp" and not policy_only:
        torch.save(_optimizer_state(conf), os.path.join(d, "optimizer.pt"))
    trainer = {
        **meta,
        "policy_version": state.policy_version,
        "behaviour_version": conf.weights.behaviour_version if behaviour_sd is not None else None,
        "step": state.step,
        "seed": conf.seed,
        "world_size": state.dist.world_size,
        "parallel": state.dist.strategy,
        "dtype": str(conf.dtype).replace("torch.", ""),
        "torch": torch.__version__,
        "trainer_version": __version__,
        "saved_at": time.time(),
    }
    with open(os.path.join(d, "trainer.json"), "w") as f:
        json.dump(trainer, f, indent=2)
    for name in os.listdir(d):
        with open(os.path.join(d, name), "rb") as f:
            os.fsync(f.fileno())
    return sorted(os.listdir(d))


def _torch_load(path: str, device: torch.device) -> Any:
    """Our own optimizer/RNG state (numpy and Python objects inside): torch >= 2.6 defaults to
    weights_only=True, which refuses them. A file that is not one is a ValueError naming it."""
    safetensors_io.regular_file(path)
    try:
        try:
            return torch.load(path, map_location=device, weights_only=False)
        except TypeError:  # torch without the weights_only argument
            return torch.load(path, map_location=device)
    except (pickle.UnpicklingError, RuntimeError, EOFError) as e:
        raise ValueError(f"{path} is not the optimizer state this trainer saves ({e})") from None


def fsync_dir(path: str) -> None:
    """Makes a rename inside `path` durable (best effort: not every filesystem allows it)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
