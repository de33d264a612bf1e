"""Request checks: the decoded bulk arrays of a request (dtype, length, alignment with `ids`) and
the values whose rules the protocol states in words (token ids within the vocabulary, seeds,
the step's learning rate)."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from .errors import invalid
from .framing import Ragged
from .sampling import SamplingParams


def ragged(params: dict, key: str, dtype: str, n: int | None = None, offsets: np.ndarray | None = None, required: bool = True) -> Ragged | None:
    """params[key] as a Ragged of `dtype` with `n` sequences laid out like `offsets`, or None when
    it is absent and not required."""
    obj = params.get(key)
    if obj is None:
        if required:
            raise invalid(f"'{key}' is missing")
        return None
    try:
        r = Ragged.from_message(obj, key, dtype)
    except ValueError as e:
        raise invalid(str(e)) from None
    if n is not None and len(r) != n:
        raise invalid(f"'{key}' has {len(r)} sequences, expected {n}")
    if offsets is not None and not np.array_equal(r.offsets, offsets):
        raise invalid(f"'{key}' is not aligned with 'ids' (different offsets)")
    return r


def required_ragged(params: dict, key: str, dtype: str, n: int | None = None, offsets: np.ndarray | None = None) -> Ragged:
    r = ragged(params, key, dtype, n, offsets)
    assert r is not None
    return r


def check_ids(ids: Ragged, vocab_size: int) -> None:
    v = ids.values
    if len(v) and (v.min() < 0 or v.max() >= vocab_size):
        raise invalid(f"token ids must lie in [0, {vocab_size})")


def seeds(obj: Any, n: int) -> list[int]:
    """Seeds as uint32 values: an array, a list, or the {"0": s0, "1": s1, ...} object that
    JSON.stringify makes of a Uint32Array (which the framing does not carry as a typed array)."""
    if obj is None:
        return [0] * n
    if isinstance(obj, dict):
        try:
            values = [obj[str(i)] for i in range(len(obj))]
        except KeyError:
            raise invalid("seeds must be an array with one seed per prompt") from None
    else:
        values = list(np.asarray(obj).reshape(-1).tolist())
    if len(values) != n:
        raise invalid(f"seeds has {len(values)} entries for {n} prompts")
    return [int(v) % (2**32) for v in values]


def step_lr(params: dict) -> float | None:
    """train_step's optional `lr`: a positive finite peak rate for this step, or None."""
    lr = params.get("lr")
    if lr is None:
        return None
    if isinstance(lr, bool) or not isinstance(lr, (int, float)) or not math.isfinite(lr) or lr <= 0:
        raise invalid(f"lr must be a positive finite number or null, got {lr!r}")
    return float(lr)


def sampling_params(obj: Any) -> SamplingParams | None:
    try:
        return SamplingParams.from_message(obj)
    except (ValueError, TypeError) as e:
        raise invalid(str(e)) from None
