"""Sampling with temperature, top-k and top-p, and the keep-sampling mask (docs/semantics.md §7).

The truncated distribution is built in this order: divide the logits by the temperature; keep the
tokens whose logit is at least the k-th largest (top-k; ties at the boundary are all kept); of
those, renormalised, keep the smallest prefix of the tokens sorted by probability whose mass
reaches top_p (a token is kept when the mass before it is < top_p; the most likely token always
is); renormalise over the kept set. Temperature 0 means greedy decoding: the kept set is the
arg-max alone (logits unscaled), so its log-probability is 0.

`generate` reports log-probabilities under exactly this distribution; `logprobs` and `train_step`
with `sampling` apply the same function to the current policy's logits (the keep-sampling
mask). There the target token is always added to the kept set, so that a log-probability is never
-inf: for a token the same policy sampled this changes nothing.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch


@dataclass(frozen=True)
class SamplingParams:
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = 0

    @classmethod
    def from_message(cls, obj: Any) -> SamplingParams | None:
        if obj is None:
            return None
        if not isinstance(obj, dict):
            raise ValueError("sampling must be null or {temperature, top_p, top_k}")
        t = float(obj.get("temperature", 1.0))
        p = float(obj.get("top_p", 1.0))
        k = int(obj.get("top_k", 0) or 0)
        if t < 0 or not (0 < p <= 1) or k < 0:
            raise ValueError(f"sampling out of range: temperature {t} (>= 0), top_p {p} (0 < p <= 1), top_k {k} (>= 0)")
        return cls(t, p, k)

    def truncates(self, vocab_size: int) -> bool:
        """Whether some tokens fall outside the kept set: greedy, top-k below the vocabulary or
        top-p below 1 (the embedded trainer's `truncates`, with greedy as a kept set of one)."""
        return self.temperature == 0 or 0 < self.top_k < vocab_size or self.top_p < 1.0


def truncate(logits: torch.Tensor, params: SamplingParams | None, force: torch.Tensor | None = None) -> torch.Tensor:
    """Logits [n, V] of the truncated distribution: scaled, with -inf outside the kept set.
    `force` (int64 [n]) names a token per row that is always kept. Differentiable in the kept
    entries; the kept set itself is a constant."""
    V = logits.shape[-1]
    if params is None or not params.truncates(V):
        # Every token is kept: no mask to build (and none in the backward pass).
        return logits if params is None or params.temperature == 1.0 else logits / params.temperature
    if params.temperature == 0:
        scaled = logits
        with torch.no_grad():
            keep = torch.zeros_like(logits, dtype=torch.bool)
            keep.scatter_(-1, logits.argmax(-1, keepdim=True), True)
    else:
        scaled = logits / params.temperature if params.temperature != 1.0 else logits
        with torch.no_grad():
            keep = torch.ones_like(logits, dtype=torch.bool)
            if 0 < params.top_k < V:
                kth = torch.topk(scaled, params.top_k, dim=-1).values[..., -1:]
                keep = scaled >= kth
            if params.top_p < 1.0:
                masked = scaled.masked_fill(~keep, float("-inf"))
                probs = torch.softmax(masked.double(), dim=-1)
                sorted_p, order = torch.sort(probs, dim=-1, descending=True)
                before = torch.cumsum(sorted_p, dim=-1) - sorted_p
                keep_sorted = before < params.top_p
                keep_sorted[..., 0] = True
                keep_p = torch.zeros_like(keep)
                keep_p.scatter_(-1, order, keep_sorted)
                keep = keep & keep_p
    if force is not None:
        keep = keep.clone()
        keep[torch.arange(keep.shape[0], device=keep.device), force] = True
    return scaled.masked_fill(~keep, float("-inf"))


def token_logprobs(logits: torch.Tensor, targets: torch.Tensor, params: SamplingParams | None, want_entropy: bool = False):
    """log p(target) under the (truncated) distribution; logits [n, V], targets int64 [n].
    Computed in float32 (float64 for a float64 model). Returns (logp [n], entropy [n] or None)."""
    work = logits if logits.dtype == torch.float64 else logits.float()
    work = truncate(work, params, force=targets)
    logp_all = torch.log_softmax(work, dim=-1)
    logp = logp_all.gather(-1, targets[:, None]).squeeze(-1)
    ent = None
    if want_entropy:
        with torch.no_grad():
            ent = _entropy(logp_all.detach(), truncated=params is not None and params.truncates(logits.shape[-1]))
    return logp, ent


# Rows of [n, V] worked on at a time by the entropy statistic: a block small enough to be reused
# from the cache, rather than two [n, V] temporaries a call (at a 151k vocabulary, hundreds of MB,
# which the allocator maps and faults in afresh each time).
_ENTROPY_ROWS = 16


def _entropy(logp_all: torch.Tensor, truncated: bool) -> torch.Tensor:
    """-sum p log p of each row of log-probabilities [n, V]; entries outside a truncated kept set
    (-inf) count 0. Each row's sum is the same reduction as over the whole matrix at once."""
    n = logp_all.shape[0]
    out = torch.empty(n, dtype=logp_all.dtype, device=logp_all.device)
    work = torch.empty((min(n, _ENTROPY_ROWS), logp_all.shape[-1]), dtype=logp_all.dtype, device=logp_all.device)
    for s in range(0, n, _ENTROPY_ROWS):
        rows = logp_all[s : s + _ENTROPY_ROWS]
        w = work[: rows.shape[0]]
        torch.exp(rows, out=w)
        if truncated:
            # p log p is 0 * -inf = nan outside the kept set, where p is 0
            w.copy_(torch.where(w > 0, w * rows, torch.zeros_like(w)))
        else:
            w.mul_(rows)  # no -inf entries: no mask to build
        torch.sum(w, dim=-1, out=out[s : s + _ENTROPY_ROWS])
    return out.neg_()


class SampleScratch:
    """Buffers that `sample` reuses from one decoding step to the next (the CDF over the
    vocabulary, in float64): allocated once per generation, not once per token."""

    def __init__(self) -> None:
        self.probs: torch.Tensor | None = None
        self.cdf: torch.Tensor | None = None

    def buffers(self, like: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        if self.probs is None or self.cdf is None or self.probs.shape != like.shape or self.probs.device != like.device:
            self.probs = torch.empty(like.shape, dtype=torch.float64, device=like.device)
            self.cdf = torch.empty(like.shape, dtype=torch.float64, device=like.device)
        return self.probs, self.cdf


def sample(logits: torch.Tensor, params: SamplingParams, generators: Sequence[torch.Generator], scratch: SampleScratch | None = None):
    """Draws one token per row; returns (tokens int64 [n], logp [n] float under the sampled
    distribution). Each row uses its own generator (one per prompt seed), so a prompt's sample does
    not depend on the rest of the batch: u ~ U(0, 1] per row, inverse CDF. `scratch` keeps the
    CDF's buffers between the calls of one generation."""
    work = logits if logits.dtype == torch.float64 else logits.float()
    masked = truncate(work, params)
    logp_all = torch.log_softmax(masked, dim=-1)
    if params.temperature == 0:
        tokens = logp_all.argmax(-1)
    else:
        u = torch.tensor([1.0 - torch.rand((), generator=g, dtype=torch.float64).item() for g in generators], dtype=torch.float64, device=logits.device)
        probs, cdf = (scratch or SampleScratch()).buffers(logp_all)
        probs.copy_(logp_all)
        probs.exp_()
        torch.cumsum(probs, dim=-1, out=cdf)
        target = (u * cdf[:, -1]).unsqueeze(-1)
        tokens = torch.searchsorted(cdf, target).squeeze(-1).clamp_(max=logits.shape[-1] - 1)
    logp = logp_all.gather(-1, tokens[:, None]).squeeze(-1)
    return tokens, logp
