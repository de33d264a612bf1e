"""Shared test helpers: tiny trainers, synthetic batches, a protocol client over a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO = os.path.dirname(ROOT)
CONFORMANCE_DIR = os.path.join(REPO, "test", "conformance")
# ARL_TEST_DEVICE=cuda runs the in-process trainers and the single-rank protocol sessions on the
# GPU (bench/gpu_check.sh); the multi-rank tests always use gloo on CPU.
DEVICE = os.environ.get("ARL_TEST_DEVICE", "cpu")
ON_CUDA = DEVICE.startswith("cuda")

VOCAB = "the cat sat on a mat dog ran to park and saw bird in tree big small red blue green one two three yes no ok".split()
REDUCTIONS = [
    {"mode": "token_mean"},
    {"mode": "seq_mean_token_mean"},
    {"mode": "seq_mean_token_sum"},
    {"mode": "constant", "constant": 8},
    {"mode": "group_token_mean"},
]


def require_built(path: str | os.PathLike, module: bool = False) -> None:
    """Skips a test whose built TypeScript (dist/) is missing; under CI, where `npm test` builds it
    before the Python tests, a missing file is a failure rather than a silent skip."""
    if os.path.exists(path):
        return
    if os.environ.get("CI"):
        pytest.fail(f"{path} is missing: npm test builds dist/ before the Python tests")
    pytest.skip(f"{path} is missing (run npm run build)", allow_module_level=module)


def tiny_model(dtype: str = "float64", hidden: int = 32, layers: int = 2, heads: int = 4, kv: int = 2, tie: bool = True) -> str:
    return f"builtin:tiny?hidden={hidden}&layers={layers}&heads={heads}&kv_heads={kv}&intermediate={2 * hidden}&dtype={dtype}&tie={int(tie)}"


def new_trainer(dist=None):
    """A Trainer on the test device."""
    import torch

    from arl_trainer.distributed import Dist
    from arl_trainer.trainer import Trainer

    return Trainer(dist or Dist(device=torch.device(DEVICE)))


def configure_params(
    model: str | None = None,
    seed: int = 7,
    kl: dict | None = None,
    critic: bool = False,
    lr: float = 1e-3,
    grad_clip: float | None = None,
    precision: str = "fp32",
) -> dict[str, Any]:
    algorithm: dict[str, Any] = {
        "optimizer": {"name": "adamw", "lr": lr, "betas": [0.9, 0.999], "eps": 1e-8, "weight_decay": 0.01, "grad_clip": grad_clip, "warmup_steps": 0},
        "clip": {"low": 0.2, "high": 0.28, "dual": 3.0},
        "kl": kl or {"coef": 0.0, "estimator": "k3", "placement": "loss", "reference": None},
        "critic": {"optimizer": {"lr": 1e-3, "grad_clip": None}, "value_clip": 0.5, "init": "policy"} if critic else None,
    }
    return {
        "seed": seed,
        "policy": {"model": model or tiny_model(), "chat_template": None, "sampling": {"temperature": 1.0, "top_p": 1.0, "top_k": 0, "max_new_tokens": 8}},
        "algorithm": algorithm,
        "vocabulary": VOCAB,
        # exact comparisons want fp32 on CUDA too (bf16 autocast is the CUDA default)
        "options": {"precision": precision},
    }


def make_batch(
    vocab_size: int, seed: int = 0, n: int = 6, groups: int = 3, min_len: int = 5, max_len: int = 14, critic: bool = False, ref: bool = True
) -> dict[str, Any]:
    """A train_step request: prompt tokens (mask 0), generated tokens (mask 1), an observation
    block (mask 0) in the middle of some sequences; denominators computed like the runtime does."""
    from arl_trainer.framing import Ragged

    rng = np.random.default_rng(seed)
    ids, masks, adv, old, refs, rets, olds = [], [], [], [], [], [], []
    group_of = np.array([i % groups for i in range(n)], dtype=np.int32)
    for i in range(n):
        L = int(rng.integers(min_len, max_len + 1))
        ids.append(rng.integers(6, vocab_size, size=L).astype(np.int32))
        m = np.zeros(L, dtype=np.uint8)
        prompt = int(rng.integers(1, 3))
        m[prompt:] = 1
        if L > 8 and i % 2 == 0:
            m[prompt + 2 : prompt + 4] = 0  # an observation inside the trajectory
        if i == n - 1:
            m[:] = 0  # a sequence without targets still counts in N
        masks.append(m)
        a = rng.normal(size=L).astype(np.float32) if i % 3 == 0 else np.full(L, rng.normal(), dtype=np.float32)
        adv.append(a)
        old.append((-2.0 - rng.random(L)).astype(np.float32))
        refs.append((-2.0 - rng.random(L)).astype(np.float32))
        rets.append(rng.normal(size=L).astype(np.float32))
        olds.append((0.1 * rng.normal(size=L)).astype(np.float32))
    L_i = np.array([float(m.sum()) for m in masks])
    gt = np.zeros(groups)
    for i in range(n):
        gt[group_of[i]] += L_i[i]
    req = {
        "ids": Ragged.from_sequences(ids, "int32"),
        "loss_mask": Ragged.from_sequences(masks, "uint8"),
        "advantages": Ragged.from_sequences(adv, "float32"),
        "old_logprobs": Ragged.from_sequences(old, "float32"),
        "ref_logprobs": Ragged.from_sequences(refs, "float32") if ref else None,
        "groups": group_of,
        "reduction": {"mode": "token_mean"},
        "denominators": {"tokens": float(L_i.sum()), "sequences": float(n), "groups": float(groups), "group_tokens": gt, "sequence_tokens": L_i},
        "microbatches": 1,
        "clip": {"low": 0.2, "high": 0.28, "dual": 3.0},
        "kl": {"coef": 0.05, "estimator": "k3", "placement": "loss"},
        "sampling": None,
        "critic": None,
    }
    if critic:
        req["critic"] = {"returns": Ragged.from_sequences(rets, "float32"), "old_values": Ragged.from_sequences(olds, "float32"), "value_clip": 0.5}
    return req


def grads(module) -> dict[str, np.ndarray]:
    out = {}
    for name, p in module.named_parameters():
        out[name] = np.zeros(tuple(p.shape)) if p.grad is None else p.grad.detach().double().cpu().numpy().copy()
    return out


def max_grad_diff(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> float:
    assert a.keys() == b.keys()
    return max(float(np.max(np.abs(a[k] - b[k]))) if a[k].size else 0.0 for k in a)


def trainer_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.setdefault("OMP_NUM_THREADS", "1")
    return env


class ProtocolClient:
    """Drives `python3 -m arl_trainer` through its stdin/stdout like the runtime does."""

    def __init__(self, args: list[str] | None = None, env: dict[str, str] | None = None, command: list[str] | None = None) -> None:
        cmd = command or [sys.executable, "-m", "arl_trainer", "--device", "cuda" if ON_CUDA else "cpu", *(args or [])]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env or trainer_env(), cwd=ROOT)
        self.next_id = 1

    def request(self, method: str, params: Any) -> dict[str, Any]:
        from arl_trainer.framing import read_frame, write_frame

        rid = self.next_id
        self.next_id += 1
        assert self.proc.stdin is not None and self.proc.stdout is not None
        write_frame(self.proc.stdin, {"id": rid, "method": method, "params": params})
        msg = read_frame(self.proc.stdout)
        if msg is None:
            raise RuntimeError(f"trainer died: {self.stderr()}")
        assert msg["id"] == rid, msg
        return msg

    def call(self, method: str, params: Any) -> Any:
        msg = self.request(method, params)
        if "error" in msg:
            raise AssertionError(f"{method} failed: {msg['error']}\n{self.stderr()}")
        return msg["result"]

    def stderr(self) -> str:
        try:
            self.proc.kill()
            _, err = self.proc.communicate(timeout=10)
            return err.decode(errors="replace")
        except Exception:  # noqa: BLE001
            return ""

    def close(self, timeout: float = 30) -> tuple[int, str]:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.close()
        except BrokenPipeError:
            pass
        code = self.proc.wait(timeout=timeout)
        err = self.proc.stderr.read().decode(errors="replace") if self.proc.stderr else ""
        return code, err


def run_ranks(worker, world: int, prefix: str) -> list[Any]:
    """Runs `worker(rank, world, init_file, out_dir)` in `world` gloo processes (each pickles its
    result to out_dir/rank{R}.pkl) and returns the results by rank."""
    import pickle
    import shutil
    import tempfile

    import torch.multiprocessing as mp

    out = tempfile.mkdtemp(prefix=prefix)
    try:
        mp.spawn(worker, args=(world, os.path.join(out, "init"), out), nprocs=world, join=True)
        results = []
        for r in range(world):
            with open(os.path.join(out, f"rank{r}.pkl"), "rb") as f:
                results.append(pickle.load(f))
        return results
    finally:
        shutil.rmtree(out, ignore_errors=True)
