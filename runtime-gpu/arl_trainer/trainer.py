"""The trainer: the protocol's methods, each a function over one TrainerState (state.py).

Trainer dispatches a request to its module (configure, encode, generate, score, update, weights,
checkpoint), answers handshake with the capabilities, and checks every request's params against
the protocol schema (requests.py) before the method sees them.
"""
from __future__ import annotations

import platform
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from . import __version__, conformance, losses
from .checkpoint import finish_background_save, load, save, saved
from .configure import configure
from .distributed import Dist
from .encode import decode, encode, tokenize
from .errors import invalid, unsupported
from .generate import generate
from .requests import parse_request
from .score import logprobs, values
from .state import TrainerState
from .update import compute_gradients, reset_optimizer, train_step
from .weights import snapshot

PROTOCOL = "arl-trainer"
VERSION = 1


def handshake(state: TrainerState, p: Any) -> dict:
    if isinstance(p, dict) and (p.get("protocol") != PROTOCOL or p.get("version") != VERSION):
        raise unsupported(f"this trainer speaks {PROTOCOL} version {VERSION} (asked: {p.get('protocol')} version {p.get('version')})")
    parse_request("handshake", p)
    device = state.device
    versions = {"python": platform.python_version(), "torch": torch.__version__, "numpy": np.__version__, "arl_trainer": __version__}
    if torch.cuda.is_available():
        versions["cuda"] = str(torch.version.cuda)
        versions["gpu"] = torch.cuda.get_device_name(device if device.type == "cuda" else 0)
    try:
        import transformers

        versions["transformers"] = transformers.__version__
    except Exception:  # noqa: BLE001 - an optional library that fails to import is just absent
        pass
    return {
        "protocol": PROTOCOL,
        "version": VERSION,
        "trainer": {"name": "arl_trainer", "version": __version__},
        "capabilities": {
            "methods": list(METHODS),
            "reductions": list(losses.REDUCTIONS),
            "kl_estimators": list(losses.KL_ESTIMATORS),
            "value_head": True,
            "keep_sampling_mask": True,
            "step_lr": True,
            "is_weights": True,
            "on_policy_step": True,
            "world_size": state.dist.world_size,
            "device": device.type,
            "parallel": state.dist.strategy,
            "behaviour_policy": True,
        },
        "versions": versions,
    }


def eval_op(state: TrainerState, p: dict) -> dict:
    try:
        return {"output": conformance.eval_op(p["op"], p["input"])}
    except NotImplementedError as e:
        raise unsupported(str(e)) from None
    except (ValueError, KeyError, TypeError, IndexError) as e:
        raise invalid(f"eval_op {p['op']}: {e}") from None


def shutdown(state: TrainerState, p: dict) -> dict:
    # the checkpoint being written is finished before the answer: the process exits after it
    finish_background_save(state)
    return {}


HANDLERS: dict[str, Callable[[TrainerState, dict], Any]] = {
    "handshake": handshake,
    "configure": configure,
    "encode": encode,
    "decode": decode,
    "tokenize": tokenize,
    "generate": generate,
    "logprobs": logprobs,
    "values": values,
    "train_step": train_step,
    "snapshot": snapshot,
    "reset_optimizer": reset_optimizer,
    "save": save,
    "saved": saved,
    "load": load,
    "eval_op": eval_op,
    "shutdown": shutdown,
}
METHODS = list(HANDLERS)


class Trainer:
    """One trainer process's state and its request entry points (server.py calls handle_request;
    in-process callers and tests may call the methods by name)."""

    def __init__(self, dist: Dist | None = None, options: dict[str, Any] | None = None) -> None:
        self.state = TrainerState(dist or Dist(), dict(options or {}))

    def handle_request(self, method: str, params: Any) -> Any:
        fn = HANDLERS.get(method)
        if fn is None:
            raise unsupported(f"method '{method}' is not supported by this trainer")
        # handshake checks its params itself: a runtime of another version is answered
        # 'unsupported' even when its handshake has another shape
        return fn(self.state, params if method == "handshake" else parse_request(method, params))

    def handshake(self, p: dict) -> dict:
        return self.handle_request("handshake", p)

    def configure(self, p: dict) -> dict:
        return self.handle_request("configure", p)

    def encode(self, p: dict) -> dict:
        return self.handle_request("encode", p)

    def decode(self, p: dict) -> dict:
        return self.handle_request("decode", p)

    def tokenize(self, p: dict) -> dict:
        return self.handle_request("tokenize", p)

    def generate(self, p: dict) -> dict | None:
        return self.handle_request("generate", p)

    def logprobs(self, p: dict) -> dict | None:
        return self.handle_request("logprobs", p)

    def values(self, p: dict) -> dict | None:
        return self.handle_request("values", p)

    def train_step(self, p: dict) -> dict:
        return self.handle_request("train_step", p)

    def compute_gradients(self, p: dict) -> dict:
        """train_step's gradients without the optimizer step (tests, benchmarks)."""
        return compute_gradients(self.state, parse_request("train_step", p))

    def snapshot(self, p: dict) -> dict:
        return self.handle_request("snapshot", p)

    def reset_optimizer(self, p: dict) -> dict:
        return self.handle_request("reset_optimizer", p)

    def save(self, p: dict) -> dict:
        return self.handle_request("save", p)

    def saved(self, p: dict) -> dict:
        return self.handle_request("saved", p)

    def load(self, p: dict) -> dict:
        return self.handle_request("load", p)

    def eval_op(self, p: dict) -> dict:
        return self.handle_request("eval_op", p)

    def shutdown(self, p: dict) -> dict:
        return self.handle_request("shutdown", p)

