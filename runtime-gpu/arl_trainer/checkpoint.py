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
`load` of it sets the policy's weights and version and leaves everything else as it is.

`save` with `background` copies what the checkpoint holds into host memory and writes it on a
thread while the trainer answers the next requests (docs/protocol.md, "save / load"); `saved`
waits for it and answers how it went. At most one such save is outstanding: any other save, a
load or the end of the process first waits for its thread."""
from __future__ import annotations

import json
import os
import pickle
import shutil
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import torch

from . import __version__, lora, safetensors_io
from .errors import invalid
from .rng import restore_rng_state, rng_state
from .state import Configured, TrainerState, configured
from .weights import empty_behaviour_slot, full_state, load_tensors, policy_tensors

CHECKPOINT_FORMAT = "arl-trainer-checkpoint"


def _skip_zip_checksums() -> None:
    """torch.save's zip records carry CRC-32s that torch.load never checks; computing them took
    two thirds of writing the optimizer state (20 ms of CPU for 39 MB). Off where this torch has
    the setting (2.6 on)."""
    try:
        import torch.utils.serialization

        torch.utils.serialization.config.save.compute_crc32 = False
    except (ImportError, AttributeError):
        pass


_skip_zip_checksums()


@dataclass
class BackgroundSave:
    """A checkpoint being written on a thread: its path, version, and once done its files or error."""

    path: str
    policy_version: int
    thread: threading.Thread | None = None
    files: list[str] = field(default_factory=list)
    error: BaseException | None = None


def save(state: TrainerState, p: dict) -> dict:
    conf = configured(state)
    path = os.path.abspath(p["path"])
    policy_only = p.get("policy_only") is True
    background = p.get("background") is True and not policy_only
    pending = state.background_save
    if pending is not None:
        if background:
            raise invalid(f"the background save of {pending.path} is not collected yet: send saved before the next background save")
        _join(pending)
    parent = os.path.dirname(path)
    dist = state.dist
    w = conf.weights
    state.save_count += 1
    tmp = f"{path}.tmp-arl-{state.save_count}"
    # every rank takes part in gathering sharded tensors; rank 0 writes them
    policy_sd = policy_tensors(state, w.policy) if w.adapters is None else lora.adapter_tensors(w.adapters)
    critic_sd = full_state(state, w.critic) if w.critic is not None and not policy_only else None
    ref_sd = policy_tensors(state, w.reference) if w.reference is not None and w.reference_taken and w.adapters is None and not policy_only else None
    behaviour_sd = None
    if w.behaviour is not None and w.behaviour_version is not None and not policy_only:
        behaviour_sd = w.behaviour.tensors() if isinstance(w.behaviour, lora.AdapterSnapshot) else policy_tensors(state, w.behaviour)
    optimizer = _optimizer_state(conf) if dist.strategy != "fsdp" and not policy_only else None
    contents = _Contents(policy_sd, critic_sd, ref_sd, behaviour_sd, optimizer, _trainer_meta(state, conf, policy_only, behaviour_sd is not None))
    # One process only: a sharded save's ranks agree on its outcome at once (_first_error).
    if background and dist.world_size == 1 and _fits_in_host_memory(contents):
        job = BackgroundSave(path, state.policy_version)
        copy = contents.host_copy()

        def write() -> None:
            _lower_priority_of_this_thread()
            try:
                os.makedirs(parent, exist_ok=True)
                shutil.rmtree(tmp, ignore_errors=True)
                os.makedirs(tmp)
                _write_checkpoint(conf, tmp, copy)
                job.files = _put_in_place(tmp, path, parent, state.save_count)
            except BaseException as e:  # noqa: BLE001 - answered by `saved`
                job.error = e
                shutil.rmtree(tmp, ignore_errors=True)

        # Not a daemon: a trainer told to exit finishes the checkpoint it is writing.
        job.thread = threading.Thread(target=write, name=f"save {os.path.basename(path)}")
        state.background_save = job
        job.thread.start()
        return {"files": [], "policy_version": job.policy_version, "pending": True}
    files: list[str] = []
    error: Exception | None = None
    if dist.is_main:
        try:
            os.makedirs(parent, exist_ok=True)
            shutil.rmtree(tmp, ignore_errors=True)
            os.makedirs(tmp)
            files = _write_checkpoint(conf, tmp, contents)
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
            files = _put_in_place(tmp, path, parent, state.save_count)
        except OSError as e:
            error = e
    error = _first_error(state, error)
    if error is not None:
        raise invalid(f"cannot save to {path}: {error}")
    return {"files": files, "policy_version": state.policy_version}


def saved(state: TrainerState, p: dict) -> dict:
    """Waits for the background save and answers its files, or its failure; with none outstanding,
    `path` null."""
    job = state.background_save
    if job is None:
        return {"path": None, "files": [], "policy_version": state.policy_version}
    _join(job)
    state.background_save = None
    if job.error is not None:
        raise invalid(f"cannot save to {job.path}: {job.error}")
    return {"path": job.path, "files": job.files, "policy_version": job.policy_version}


def finish_background_save(state: TrainerState) -> None:
    """Waits for the background save's thread, if one runs; its outcome stays for `saved`."""
    if state.background_save is not None:
        _join(state.background_save)


def _join(job: BackgroundSave) -> None:
    if job.thread is not None:
        job.thread.join()


def _lower_priority_of_this_thread() -> None:
    """The writing thread yields the CPU to the requests being answered meanwhile (10 nicer than
    the trainer, at most 19; Linux, where a thread has its own priority)."""
    if sys.platform != "linux":
        return
    try:
        me = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, me, min(19, os.getpriority(os.PRIO_PROCESS, me) + 10))
    except OSError:
        pass


def _put_in_place(tmp: str, path: str, parent: str, save_count: int) -> list[str]:
    """Renames the written `tmp` to `path` (replacing a folder there) and syncs the rename."""
    old_dir = f"{path}.old-arl-{save_count}"
    if os.path.exists(path):
        os.rename(path, old_dir)
    os.rename(tmp, path)
    shutil.rmtree(old_dir, ignore_errors=True)
    fsync_dir(parent)
    return sorted(os.listdir(path))


@dataclass
class _Contents:
    """Everything one checkpoint writes, as tensors and values taken at the save."""

    policy: dict[str, torch.Tensor]
    critic: dict[str, torch.Tensor] | None
    reference: dict[str, torch.Tensor] | None
    behaviour: dict[str, torch.Tensor] | None
    optimizer: dict[str, Any] | None
    trainer: dict[str, Any]

    def nbytes(self) -> int:
        return sum(t.numel() * t.element_size() for t in _tensors(self.__dict__))

    def host_copy(self) -> _Contents:
        """A copy in host memory that later steps cannot change (the weights and the optimizer's
        moments are updated in place)."""
        own = lambda x: _map_tensors(x, lambda t: t.detach().to("cpu", copy=True))  # noqa: E731
        return _Contents(own(self.policy), own(self.critic), own(self.reference), own(self.behaviour), own(self.optimizer), dict(self.trainer))


def _map_tensors(x: Any, fn) -> Any:
    if isinstance(x, torch.Tensor):
        return fn(x)
    if isinstance(x, dict):
        return {k: _map_tensors(v, fn) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return type(x)(_map_tensors(v, fn) for v in x)
    return x


def _tensors(x: Any):
    if isinstance(x, torch.Tensor):
        yield x
    elif isinstance(x, dict):
        for v in x.values():
            yield from _tensors(v)
    elif isinstance(x, (list, tuple)):
        for v in x:
            yield from _tensors(v)


def _fits_in_host_memory(contents: _Contents) -> bool:
    """Whether a host copy of the checkpoint takes at most half the memory available now: a larger
    one is written synchronously rather than risk the process (Linux's MemAvailable; elsewhere,
    synchronously)."""
    try:
        with open("/proc/meminfo") as f:
            fields = dict(line.split(":", 1) for line in f)
        available = int(fields["MemAvailable"].split()[0]) * 1024
    except (OSError, KeyError, ValueError):
        return False
    return 2 * contents.nbytes() <= available


def load(state: TrainerState, p: dict) -> dict:
    conf = configured(state)
    finish_background_save(state)
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


def _trainer_meta(state: TrainerState, conf: Configured, policy_only: bool, with_behaviour: bool) -> dict[str, Any]:
    """trainer.json, as of the save."""
    return {
        "format": CHECKPOINT_FORMAT,
        "format_version": 1,
        "model": conf.spec,
        "contents": "policy" if policy_only else "checkpoint",
        "policy_version": state.policy_version,
        "behaviour_version": conf.weights.behaviour_version if with_behaviour else None,
        "step": state.step,
        "seed": conf.seed,
        "world_size": state.dist.world_size,
        "parallel": state.dist.strategy,
        "dtype": str(conf.dtype).replace("torch.", ""),
        "torch": torch.__version__,
        "trainer_version": __version__,
        "saved_at": time.time(),
    }


def _write_checkpoint(conf: Configured, d: str, c: _Contents) -> list[str]:
    # transformers insists on metadata format "pt"
    st_meta = {"format": "pt", "arl_format": CHECKPOINT_FORMAT, "model": conf.spec}
    if conf.weights.adapters is not None:
        lora.write_adapters(conf.weights.adapters, c.policy, d, conf.spec)
    else:
        safetensors_io.save_file(c.policy, os.path.join(d, "model.safetensors"), st_meta)
    conf.weights.handle.write_config(d, conf.dtype)
    conf.tokenizer.save(d)
    if c.critic is not None:
        safetensors_io.save_file(c.critic, os.path.join(d, "critic.safetensors"), st_meta)
    if c.reference is not None:
        safetensors_io.save_file(c.reference, os.path.join(d, "reference.safetensors"), st_meta)
    if c.behaviour is not None:
        safetensors_io.save_file(c.behaviour, os.path.join(d, "behaviour.safetensors"), st_meta)
    if c.optimizer is not None:
        torch.save(c.optimizer, os.path.join(d, "optimizer.pt"))
    with open(os.path.join(d, "trainer.json"), "w") as f:
        json.dump(c.trainer, f, indent=2)
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
