"""The sampler as it was before it cut to candidates and drew in blocks: the truncated logits over
the whole vocabulary, log_softmax, exp and a float64 cumulative sum over every token, then the
inverse CDF. Kept as the oracle the faster sampler is checked against (tests/test_sampling_exact.py)
and as the baseline it is timed against (bench/sampler_bench.py); it is never used in a run."""
from __future__ import annotations

from collections.abc import Sequence

import torch

from arl_trainer.sampling import SamplingParams


class FullVocabularyScratch:
    """The former sampler's buffers: the probabilities and their CDF over the vocabulary, float64."""

    def __init__(self) -> None:
        self.probs: torch.Tensor | None = None
        self.cdf: torch.Tensor | None = None

    def buffers(self, like: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        if self.probs is None or self.cdf is None or self.probs.shape != like.shape or self.probs.device != like.device:
            self.probs = torch.empty(like.shape, dtype=torch.float64, device=like.device)
            self.cdf = torch.empty(like.shape, dtype=torch.float64, device=like.device)
        return self.probs, self.cdf


def full_vocabulary_truncate(logits: torch.Tensor, params: SamplingParams, stable_ties: bool = True) -> torch.Tensor:
    """The kept set built over the whole vocabulary: the k-th largest by topk, top-p by a sort of
    the whole row. `stable_ties` orders tokens of equal probability by the lower id (the rule now);
    False is the former sort, which left their order to the sort's implementation."""
    V = logits.shape[-1]
    if not params.truncates(V):
        return logits if params.temperature == 1.0 else logits / params.temperature
    if params.temperature == 0:
        keep = torch.zeros_like(logits, dtype=torch.bool)
        keep.scatter_(-1, logits.argmax(-1, keepdim=True), True)
        return logits.masked_fill(~keep, float("-inf"))
    scaled = logits / params.temperature if params.temperature != 1.0 else logits
    keep = torch.ones_like(scaled, dtype=torch.bool)
    if 0 < params.top_k < V:
        kth = torch.topk(scaled, params.top_k, dim=-1).values[..., -1:]
        keep = scaled >= kth
    if params.top_p < 1.0:
        probs = torch.softmax(scaled.masked_fill(~keep, float("-inf")).double(), dim=-1)
        if stable_ties:
            sorted_p, order = torch.sort(probs, dim=-1, descending=True, stable=True)
        else:
            sorted_p, order = torch.sort(probs, dim=-1, descending=True)
        before = torch.cumsum(sorted_p, dim=-1) - sorted_p
        keep_sorted = before < params.top_p
        keep_sorted[..., 0] = True
        keep_p = torch.zeros_like(keep)
        keep_p.scatter_(-1, order, keep_sorted)
        keep = keep & keep_p
    return scaled.masked_fill(~keep, float("-inf"))


def full_vocabulary_sample(
    logits: torch.Tensor,
    params: SamplingParams,
    generators: Sequence[torch.Generator],
    scratch: FullVocabularyScratch | None = None,
    stable_ties: bool = True,
):
    """(tokens [n], logp [n]) drawn as the former `sample` drew them: u ~ U(0, 1] from each row's
    generator, the first token whose cumulative probability reaches u."""
    work = logits if logits.dtype == torch.float64 else logits.float()
    logp_all = torch.log_softmax(full_vocabulary_truncate(work, params, stable_ties), dim=-1)
    if params.temperature == 0:
        tokens = logp_all.argmax(-1)
    else:
        u = torch.tensor([1.0 - torch.rand((), generator=g, dtype=torch.float64).item() for g in generators], dtype=torch.float64, device=logits.device)
        probs, cdf = (scratch or FullVocabularyScratch()).buffers(logp_all)
        probs.copy_(logp_all)
        probs.exp_()
        torch.cumsum(probs, dim=-1, out=cdf)
        target = (u * cdf[:, -1]).unsqueeze(-1)
        tokens = torch.searchsorted(cdf, target).squeeze(-1).clamp_(max=logits.shape[-1] - 1)
    return tokens, logp_all.gather(-1, tokens[:, None]).squeeze(-1)
