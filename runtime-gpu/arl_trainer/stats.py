"""The statistics of a train step, pooled over microbatches and ranks, and the step's result.

Every statistic is a sum of weighted per-token terms (losses.py), so microbatches and ranks add
up exactly: each microbatch adds its sums on the device (no host synchronisation per microbatch),
one transfer brings them to the host at the end, and the ranks all-reduce them in float64."""
from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any

import numpy as np
import torch

from .distributed import Dist


@dataclass
class StepSums:
    """The host-side totals of one step."""

    surrogate_sum: float = 0.0  # sum of w * surrogate (policy_loss is its negative)
    kl_sum: float = 0.0  # sum of w * KL term, over the tokens that had reference log-probs
    entropy_sum: float = 0.0
    logp_sum: float = 0.0  # the target tokens' log-probs under the weights before the step
    value_loss: float = 0.0  # sum of w * value term
    clipped: float = 0.0  # tokens whose ratio was clipped
    ratio_sum: float = 0.0
    tokens: float = 0.0  # target tokens
    kl_tokens: float = 0.0  # target tokens with a KL term
    ratio_min: float = math.inf
    ratio_max: float = -math.inf


_SUMMED = [f.name for f in fields(StepSums) if f.name not in ("ratio_min", "ratio_max")]


class StatsPool:
    """StepSums accumulated on the device, one float64 scalar per field."""

    def __init__(self, device: torch.device) -> None:
        self._sums = {name: torch.zeros((), dtype=torch.float64, device=device) for name in _SUMMED}
        self._ratio_min = torch.full((), math.inf, dtype=torch.float64, device=device)
        self._ratio_max = torch.full((), -math.inf, dtype=torch.float64, device=device)

    def add(self, name: str, value: Any) -> None:
        self._sums[name] += value.detach().double() if isinstance(value, torch.Tensor) else float(value)

    def ratios(self, rho: torch.Tensor) -> None:
        """Extends ratio_min / ratio_max over the ratios of a microbatch."""
        self._ratio_min = torch.minimum(self._ratio_min, rho.detach().min().double())
        self._ratio_max = torch.maximum(self._ratio_max, rho.detach().max().double())

    def pooled(self, dist: Dist) -> StepSums:
        """The sums of the whole step: one device-to-host transfer, then the ranks' all-reduce."""
        both = torch.stack([*(self._sums[name] for name in _SUMMED), self._ratio_min, self._ratio_max]).cpu().numpy()
        summed = dist.all_reduce(both[: len(_SUMMED)].copy(), "sum")
        ratio_min = float(dist.all_reduce(np.array([float(both[-2])]), "min")[0])
        ratio_max = float(dist.all_reduce(np.array([float(both[-1])]), "max")[0])
        return StepSums(**{name: float(summed[i]) for i, name in enumerate(_SUMMED)}, ratio_min=ratio_min, ratio_max=ratio_max)


def step_result(sums: StepSums, kl_coef: float, kl_in_loss: bool, with_value: bool, grad_norm: float | None, policy_version: int) -> dict[str, Any]:
    """train_step's answer (docs/protocol.md): means per target token, 1 for the ratios of a step
    without targets, the KL only when some token had a reference."""
    count = sums.tokens
    policy_loss = -sums.surrogate_sum + 0.0  # no -0.0
    kl_value = sums.kl_sum if sums.kl_tokens > 0 else 0.0
    result: dict[str, Any] = {
        "loss": policy_loss + (kl_coef * kl_value if kl_in_loss else 0.0),
        "policy_loss": policy_loss,
        "kl": kl_value,
        "entropy": float(sums.entropy_sum / count) if count else 0.0,
        "nll": float(-sums.logp_sum / count) + 0.0 if count else 0.0,  # no -0.0
        "clip_fraction": float(sums.clipped / count) if count else 0.0,
        "ratio_mean": float(sums.ratio_sum / count) if count else 1.0,
        "ratio_min": sums.ratio_min if count else 1.0,
        "ratio_max": sums.ratio_max if count else 1.0,
        "grad_norm": grad_norm,
        "tokens": int(count),
        "policy_version": policy_version,
    }
    if with_value:
        result["value_loss"] = sums.value_loss
    return result

