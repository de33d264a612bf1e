"""The `eval_op` method: the conformance ops (test/conformance/*.json) computed with torch in float64.

policy_loss and kl go through the same functions as train_step (losses.py), so the shared vectors
hold the trainer's own loss code to the reference. Outputs are plain JSON (lists, numbers, objects),
never typed arrays, so that the runtime compares them structurally.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import torch

from . import losses

EPS = 1e-6
F64 = torch.float64


def _num(x: Any, what: str) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise ValueError(f"{what} must be a number")
    return float(x)


def _vec(x: Any, what: str) -> list[float]:
    if not isinstance(x, list):
        raise ValueError(f"{what} must be an array of numbers")
    return [_num(v, f"{what}[{i}]") for i, v in enumerate(x)]


def _all_equal(t: torch.Tensor) -> bool:
    return bool((t == t[0]).all()) if t.numel() else True


def advantages(inp: dict[str, Any]) -> list[list[float]]:
    baseline, normalize = inp.get("baseline"), inp.get("normalize")
    if baseline not in ("mean", "leave_one_out", "none"):
        raise ValueError("baseline must be mean, leave_one_out or none")
    if normalize not in ("std", "none"):
        raise ValueError("normalize must be std or none")
    out = []
    for g, rewards in enumerate(inp.get("rewards") or []):
        r = torch.tensor(_vec(rewards, f"rewards[{g}]"), dtype=F64)
        G = r.numel()
        if G == 0:
            raise ValueError(f"group {g} is empty")
        if baseline != "none" and _all_equal(r):
            out.append([0.0] * G)
            continue
        if baseline == "mean":
            b = r.mean().expand(G)
        elif baseline == "leave_one_out":
            b = (r.sum() - r) / (G - 1)
        else:
            b = torch.zeros(G, dtype=F64)
        a = r - b
        if normalize == "std":
            std = torch.sqrt(((r - r.mean()) ** 2).mean())
            a = a / (std + EPS)
        out.append(a.tolist())
    return out


def task_normalize(inp: dict[str, Any]) -> list[float]:
    adv = torch.tensor(_vec(inp.get("advantages"), "advantages"), dtype=F64)
    tasks = inp.get("tasks")
    if not isinstance(tasks, list) or len(tasks) != adv.numel():
        raise ValueError("tasks must name the task of every advantage")
    weights = torch.tensor(_vec(inp["weights"], "weights"), dtype=F64) if inp.get("weights") is not None else torch.ones_like(adv)
    out = torch.zeros_like(adv)
    for t in dict.fromkeys(tasks):
        idx = torch.tensor([i for i, x in enumerate(tasks) if x == t], dtype=torch.long)
        vals, w = adv[idx], weights[idx]
        total = w.sum()
        if total <= 0 or _all_equal(vals):
            continue
        mu = (w * vals).sum() / total
        sigma = torch.sqrt((w * (vals - mu) ** 2).sum() / total)
        out[idx] = (vals - mu) / (sigma + EPS)
    return out.tolist()


def gae(inp: dict[str, Any]) -> list[float]:
    r = torch.tensor(_vec(inp.get("rewards"), "rewards"), dtype=F64)
    v = torch.tensor(_vec(inp.get("values"), "values"), dtype=F64)
    if r.numel() != v.numel():
        raise ValueError("one value per reward")
    gamma, lam = _num(inp.get("gamma"), "gamma"), _num(inp.get("lambda"), "lambda")
    end = inp.get("end")
    if end == "terminated":
        last = 0.0
    elif end == "truncated":
        last = _num(inp.get("bootstrap_value"), "bootstrap_value (needed when truncated)")
    else:
        raise ValueError("end must be terminated or truncated")
    T = r.numel()
    nxt = torch.cat((v[1:], torch.tensor([last], dtype=F64)))
    delta = r + gamma * nxt - v
    adv = torch.zeros(T, dtype=F64)
    acc = torch.zeros((), dtype=F64)
    for t in range(T - 1, -1, -1):
        acc = delta[t] + gamma * lam * acc
        adv[t] = acc
    return adv.tolist()


def policy_loss(inp: dict[str, Any]) -> dict[str, float]:
    logp, logp_old, mask, adv = inp.get("logp"), inp.get("logp_old"), inp.get("mask"), inp.get("advantages")
    if not all(isinstance(x, list) for x in (logp, logp_old, mask, adv)):
        raise ValueError("logp, logp_old, mask and advantages must be arrays")
    n = len(logp)
    if not (len(logp_old) == len(mask) == len(adv) == n):
        raise ValueError("logp, logp_old, mask and advantages need one entry per sequence")
    for i in range(n):
        if not (len(logp[i]) == len(logp_old[i]) == len(mask[i])):
            raise ValueError(f"sequence {i}: logp, logp_old and mask differ in length")
    clip = inp.get("clip")
    if not isinstance(clip, dict) or "low" not in clip or "high" not in clip:
        raise ValueError("clip must be {low, high, dual}")
    reduction = losses.Reduction.from_message(inp.get("reduction"))
    groups = None
    if inp.get("groups") is not None:
        labels = inp["groups"]
        if len(labels) != n:
            raise ValueError("one group per sequence")
        index = {g: j for j, g in enumerate(dict.fromkeys(labels))}
        groups = [index[g] for g in labels]
    elif reduction.mode == "group_token_mean":
        raise ValueError("group_token_mean needs the group of every sequence")
    mbs = inp.get("microbatches")
    if mbs is not None:
        flat = sorted(i for mb in mbs for i in mb)
        if flat != list(range(n)):
            raise ValueError("microbatches must be a partition of the sequences")
    is_w = inp.get("is_weights")
    if is_w is not None and (len(is_w) != n or any(len(is_w[i]) != len(mask[i]) for i in range(n))):
        raise ValueError("is_weights needs one row per sequence, as long as its mask")
    loss = losses.policy_loss_reference(logp, logp_old, mask, adv, clip, reduction, groups, mbs, dtype=F64, is_weights=is_w)
    return {"loss": loss}


def kl(inp: dict[str, Any]) -> list[float]:
    lp = torch.tensor(_vec(inp.get("logp"), "logp"), dtype=F64)
    ref = torch.tensor(_vec(inp.get("logp_ref"), "logp_ref"), dtype=F64)
    if lp.numel() != ref.numel():
        raise ValueError("one reference log-prob per token")
    return losses.kl_terms(lp, ref, str(inp.get("estimator"))).tolist()


def _mismatch_batch(inp: dict[str, Any]) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Per sequence: the target positions and d = logp_old - logp_engine there (docs/semantics.md §12)."""
    old, engine, mask = inp.get("logp_old"), inp.get("logp_engine"), inp.get("mask")
    if not all(isinstance(x, list) for x in (old, engine, mask)) or not (len(old) == len(engine) == len(mask)):
        raise ValueError("logp_old, logp_engine and mask need one row per sequence")
    out = []
    for i in range(len(mask)):
        m = torch.tensor(_vec(mask[i], f"mask[{i}]"), dtype=F64)
        lo, le = torch.tensor(_vec(old[i], f"logp_old[{i}]"), dtype=F64), torch.tensor(_vec(engine[i], f"logp_engine[{i}]"), dtype=F64)
        if not (lo.numel() == le.numel() == m.numel()):
            raise ValueError(f"sequence {i}: logp_old, logp_engine and mask differ in length")
        ks = torch.nonzero(m == 1).reshape(-1)
        out.append((ks, lo[ks] - le[ks]))
    return out


def mismatch(inp: dict[str, Any]) -> dict[str, float]:
    threshold = _num(inp.get("threshold"), "threshold")
    d = torch.cat([g for _, g in _mismatch_batch(inp)] or [torch.zeros(0, dtype=F64)]).abs()
    n = d.numel()
    if n == 0:
        return {"mean_abs": 0.0, "max_abs": 0.0, "frac_over": 0.0, "tokens": 0}
    return {"mean_abs": float(d.mean()), "max_abs": float(d.max()), "frac_over": float((d > threshold).double().mean()), "tokens": n}


def tis_weights(inp: dict[str, Any]) -> list[list[float]]:
    cap = _num(inp.get("cap"), "cap")
    level = inp.get("level")
    if not cap > 1 or level not in ("token", "sequence"):
        raise ValueError("tis needs cap > 1 and level token or sequence")
    out = []
    for i, (ks, d) in enumerate(_mismatch_batch(inp)):
        w = torch.zeros(len(inp["mask"][i]), dtype=F64)
        ratio = d.exp() if level == "token" else d.sum().exp().expand(ks.numel())
        w[ks] = torch.clamp(ratio, max=cap)
        out.append(w.tolist())
    return out


def pass_at_k(inp: dict[str, Any]) -> float:
    n, c, k = (int(_num(inp.get(x), x)) for x in ("n", "c", "k"))
    if not (0 <= c <= n and 1 <= k <= n):
        raise ValueError("pass_at_k needs 0 <= c <= n and 1 <= k <= n")
    if n - c < k:
        return 1.0
    # 1 - C(n-c, k)/C(n, k) in exact rational arithmetic, rounded once to float64.
    return float(1 - Fraction(math.comb(n - c, k), math.comb(n, k)))


def mixed_group_probability(inp: dict[str, Any]) -> float:
    p = torch.tensor(_num(inp.get("p"), "p"), dtype=F64)
    G = int(_num(inp.get("group_size"), "group_size"))
    if not (0 <= float(p) <= 1) or G < 1:
        raise ValueError("needs 0 <= p <= 1 and group_size >= 1")
    return float(1 - p**G - (1 - p) ** G)


OPS: dict[str, Callable[[dict[str, Any]], Any]] = {
    "advantages": advantages,
    "task_normalize": task_normalize,
    "gae": gae,
    "policy_loss": policy_loss,
    "kl": kl,
    "mismatch": mismatch,
    "tis_weights": tis_weights,
    "pass_at_k": pass_at_k,
    "mixed_group_probability": mixed_group_probability,
}


class UnsupportedOp(NotImplementedError):
    pass


def eval_op(op: str, inp: Any) -> Any:
    fn = OPS.get(op)
    if fn is None:
        raise UnsupportedOp(f"conformance op '{op}' is not implemented (known: {', '.join(OPS)})")
    if not isinstance(inp, dict):
        raise ValueError("input must be an object")
    return fn(inp)
