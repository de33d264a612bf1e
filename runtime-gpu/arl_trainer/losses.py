"""Policy and value losses (docs/semantics.md §4-§6) with reductions over GLOBAL denominators.

Every reduction in §5 is a weighted sum of per-token terms, `reduce(x) = sum_i sum_k w_i m_ik x_ik`,
with a weight that depends only on the token's sequence i and on counts of the whole optimizer
step (all microbatches, all ranks), which the runtime sends as `denominators`:

    token_mean            w_i = 1 / tokens                      (tokens = sum_i L_i)
    seq_mean_token_mean   w_i = 1 / (sequences * L_i)           (L_i = sequence_tokens[i])
    seq_mean_token_sum    w_i = 1 / sequences
    constant(C)           w_i = 1 / (sequences * C)
    group_token_mean      w_i = 1 / (groups * group_tokens[g_i]) (g_i = groups[i], an index)

So a microbatch (or a rank's shard) contributes the exact partial sum of the whole-batch loss,
and the sum of the contributions (gradient accumulation; gradient all-reduce with SUM) is the
declared reduction: never a mean of per-microbatch means. A weight whose denominator is 0 is 0
(such a sequence or group has no target tokens, so it contributes nothing anyway).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

REDUCTIONS = ("token_mean", "seq_mean_token_mean", "seq_mean_token_sum", "constant", "group_token_mean")
KL_ESTIMATORS = ("k1", "k2", "k3")
KL_PLACEMENTS = ("loss", "reward", "both")


@dataclass
class Reduction:
    mode: str
    constant: float | None = None

    @classmethod
    def from_message(cls, obj: Any) -> Reduction:
        if isinstance(obj, str):
            obj = {"mode": obj}
        if not isinstance(obj, dict) or obj.get("mode") not in REDUCTIONS:
            raise ValueError(f"reduction.mode must be one of {', '.join(REDUCTIONS)}, got {obj!r}")
        c = obj.get("constant")
        if obj["mode"] == "constant":
            if not isinstance(c, (int, float)) or isinstance(c, bool) or not c > 0:
                raise ValueError("reduction constant(L) needs a positive number 'constant'")
            return cls("constant", float(c))
        return cls(obj["mode"])


@dataclass
class Denominators:
    tokens: float
    sequences: float
    groups: float
    group_tokens: np.ndarray  # float64[g]
    sequence_tokens: np.ndarray  # float64[n]

    @classmethod
    def from_message(cls, obj: Any, n: int) -> Denominators:
        if not isinstance(obj, dict):
            raise ValueError("denominators must be an object {tokens, sequences, groups, group_tokens, sequence_tokens}")
        try:
            d = cls(
                tokens=float(obj["tokens"]),
                sequences=float(obj["sequences"]),
                groups=float(obj["groups"]),
                group_tokens=np.asarray(obj.get("group_tokens", []), dtype=np.float64).reshape(-1),
                sequence_tokens=np.asarray(obj.get("sequence_tokens", []), dtype=np.float64).reshape(-1),
            )
        except KeyError as e:
            raise ValueError(f"denominators.{e.args[0]} is missing") from None
        if len(d.sequence_tokens) != n:
            raise ValueError(f"denominators.sequence_tokens has {len(d.sequence_tokens)} entries for {n} sequences")
        return d

    @classmethod
    def from_mask(cls, masks: Sequence[Sequence[float]], groups: Sequence[int] | None = None, n_groups: int | None = None) -> Denominators:
        """The denominators of a whole batch from its target masks (what the runtime computes)."""
        L = np.array([float(np.sum(np.asarray(m, dtype=np.float64))) for m in masks], dtype=np.float64)
        if groups is None:
            groups = [0] * len(masks)
        g = int(n_groups if n_groups is not None else (max(groups) + 1 if len(groups) else 0))
        gt = np.zeros(g, dtype=np.float64)
        for i, gi in enumerate(groups):
            gt[gi] += L[i]
        return cls(tokens=float(L.sum()), sequences=float(len(masks)), groups=float(g), group_tokens=gt, sequence_tokens=L)


def _inv(x: np.ndarray | float) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(x > 0, 1.0 / np.where(x > 0, x, 1.0), 0.0)


def sequence_weights(reduction: Reduction, den: Denominators, groups: np.ndarray | None = None) -> np.ndarray:
    """float64[n]: the weight w_i of every target token of sequence i (see the module docstring)."""
    n = len(den.sequence_tokens)
    mode = reduction.mode
    if mode == "token_mean":
        return np.full(n, float(_inv(den.tokens)))
    if mode == "seq_mean_token_mean":
        return _inv(den.sequences * den.sequence_tokens)
    if mode == "seq_mean_token_sum":
        return np.full(n, float(_inv(den.sequences)))
    if mode == "constant":
        assert reduction.constant is not None
        return np.full(n, float(_inv(den.sequences * reduction.constant)))
    if mode == "group_token_mean":
        if groups is None or len(groups) != n:
            raise ValueError("group_token_mean needs the group of every sequence")
        groups = np.asarray(groups, dtype=np.int64)
        if n and (groups.min() < 0 or groups.max() >= len(den.group_tokens)):
            raise ValueError(f"group ids must index denominators.group_tokens (0..{len(den.group_tokens) - 1})")
        return _inv(den.groups * den.group_tokens[groups]) if n else np.zeros(0)
    raise ValueError(f"unknown reduction '{mode}'")


def surrogate(logp: torch.Tensor, logp_old: torch.Tensor, adv: torch.Tensor, low: float, high: float, dual: float | None):
    """Per-token PPO objective u (to maximise), ratio rho and a clipped indicator.

    u = min(rho*A, clip(rho, 1-low, 1+high)*A); with dual clip c: for A < 0, u = max(u, c*A)."""
    rho = torch.exp(logp - logp_old)
    unclipped = rho * adv
    clipped = torch.clamp(rho, 1.0 - low, 1.0 + high) * adv
    u = torch.minimum(unclipped, clipped)
    if dual is not None:
        u = torch.where(adv < 0, torch.maximum(u, dual * adv), u)
    with torch.no_grad():
        was_clipped = u != unclipped
    return u, rho, was_clipped


def kl_terms(logp: torch.Tensor, logp_ref: torch.Tensor, estimator: str) -> torch.Tensor:
    """Per-token KL estimate from log_r = logp_ref - logp (docs/semantics.md §6)."""
    log_r = logp_ref - logp
    if estimator == "k1":
        return -log_r
    if estimator == "k2":
        return 0.5 * log_r * log_r
    if estimator == "k3":
        return torch.expm1(log_r) - log_r
    raise ValueError(f"unknown KL estimator '{estimator}' (known: {', '.join(KL_ESTIMATORS)})")


def value_terms(v: torch.Tensor, old_v: torch.Tensor, returns: torch.Tensor, value_clip: float | None) -> torch.Tensor:
    """Per-token value loss 0.5*(V - R)^2, or with value clipping c (PPO):
    0.5*max((V - R)^2, (old + clip(V - old, -c, c) - R)^2)."""
    err = (v - returns) ** 2
    if value_clip is not None:
        v_clipped = old_v + torch.clamp(v - old_v, -value_clip, value_clip)
        err = torch.maximum(err, (v_clipped - returns) ** 2)
    return 0.5 * err


def policy_loss_reference(
    logp: Sequence[Sequence[float]],
    logp_old: Sequence[Sequence[float]],
    mask: Sequence[Sequence[float]],
    advantages: Sequence[Any],
    clip: dict[str, Any],
    reduction: Reduction,
    groups: Sequence[int] | None = None,
    microbatches: Sequence[Sequence[int]] | None = None,
    dtype: torch.dtype = torch.float64,
    is_weights: Sequence[Sequence[float]] | None = None,
) -> float:
    """-reduce(u) of a batch given as lists, summed over microbatches (each microbatch divides by
    the global denominators), each token's u times its importance weight when `is_weights` is
    given. The same code path as the trainer's train_step, without a model."""
    n = len(logp)
    den = Denominators.from_mask(mask, groups, None if groups is None else (max(groups) + 1 if groups else 0))
    w = sequence_weights(reduction, den, None if groups is None else np.asarray(groups))
    parts = microbatches if microbatches is not None else [list(range(n))]
    total = torch.zeros((), dtype=dtype)
    for mb in parts:
        lp, lo, a, ww, iw = [], [], [], [], []
        for i in mb:
            for k in range(len(logp[i])):
                if mask[i][k]:
                    lp.append(logp[i][k])
                    lo.append(logp_old[i][k])
                    a.append(advantages[i][k] if isinstance(advantages[i], (list, tuple)) else advantages[i])
                    ww.append(w[i])
                    iw.append(is_weights[i][k] if is_weights is not None else 1.0)
        if not lp:
            continue
        u, _, _ = surrogate(
            torch.tensor(lp, dtype=dtype), torch.tensor(lo, dtype=dtype), torch.tensor(a, dtype=dtype),
            float(clip["low"]), float(clip["high"]), None if clip.get("dual") is None else float(clip["dual"]),
        )
        if is_weights is not None:
            u = torch.tensor(iw, dtype=dtype) * u
        total = total + (torch.tensor(ww, dtype=dtype) * u).sum()
    return float(-total)
