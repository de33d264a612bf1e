"""Sampling with temperature, top-k and top-p, and the keep-sampling mask (docs/semantics.md §7).

The truncated distribution is built in this order: divide the logits by the temperature; keep the
tokens whose logit is at least the k-th largest (top-k; ties at the boundary are all kept); of
those, renormalised, keep the smallest prefix of the tokens sorted by probability (equal ones by
the lower id) whose mass reaches top_p (a token is kept when the mass before it is < top_p; the
most likely token always is); renormalise over the kept set. Temperature 0 means greedy decoding:
the kept set is the arg-max alone (logits unscaled), so its log-probability is 0.

The draw is the inverse CDF in vocabulary order: u ~ U(0, 1] from the prompt's generator, the
first token whose cumulative probability reaches u, the probabilities exp(logit) in float64 over
their sum (computed relative to the row's largest logit where they would overflow). No log_softmax
or float64 cumulative sum runs over the whole vocabulary: top-k and top-p find their kept
candidates with topk (a top-p cut sorts the whole row only when its nucleus is larger than the
candidates looked at first), and on a CPU the mass is summed in blocks, so that only the block u
falls in is summed token by token (tests/test_sampling_exact.py holds the draws to those of the
full-vocabulary sampler it replaced, tests/sampling_reference.py).

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
    entries; the kept set itself is a constant, the one `sample` draws from."""
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
            ids, kept = kept_candidates(scaled, params)
            keep = torch.zeros_like(logits, dtype=torch.bool)
            keep.scatter_(-1, ids, torch.isfinite(kept))
    if force is not None:
        keep = keep.clone()
        keep[torch.arange(keep.shape[0], device=keep.device), force] = True
    return scaled.masked_fill(~keep, float("-inf"))


# A top-p cut without top-k looks at this many of a row's most likely tokens first: a trained
# model's nucleus is usually far smaller. When some row's nucleus reaches past them (a flat
# distribution), the rows are cut from their whole sorted rows instead.
_TOP_P_CANDIDATES = 1024


def kept_candidates(scaled: torch.Tensor, params: SamplingParams) -> tuple[torch.Tensor, torch.Tensor]:
    """The kept set of each row of scaled logits [n, V] (params that truncate, temperature > 0),
    found without sorting the whole row where the cut allows: (ids [n, c] ascending, their scaled
    logits [n, c] with -inf where not kept). The set the module docstring defines; tokens of equal
    probability at the top-p cut are taken lower id first (as the embedded trainer takes them)."""
    n, V = scaled.shape
    k = params.top_k
    if 0 < k < V:
        ordered, ids = _top_k(scaled, k)
        ids, by_id = ids.sort(-1)
        kept = ordered.gather(-1, by_id)
        if params.top_p < 1.0:
            keep = _nucleus(ordered, kept, params.top_p, None, partial=False)
            assert keep is not None
            kept = kept.masked_fill(~keep, float("-inf"))
        return ids, kept
    # top-p alone: normalised over the whole row, whose sum of probability mass both cuts share
    total = _block_mass(scaled, torch.amax(scaled, dim=-1, keepdim=True).double(), None).sum(-1, keepdim=True)
    # No token's mass exceeds the largest one's, 1: the candidates can hold a row's nucleus only if
    # as many times 1 reaches top_p of its total.
    if 2 * _TOP_P_CANDIDATES < V and bool((_TOP_P_CANDIDATES >= params.top_p * total).all()):
        ordered, ids = torch.topk(scaled, _TOP_P_CANDIDATES, dim=-1)
        ids, by_id = ids.sort(-1)
        kept = ordered.gather(-1, by_id)
        keep = _nucleus(ordered, kept, params.top_p, total, partial=True)
        if keep is not None:
            return ids, kept.masked_fill(~keep, float("-inf"))
    # the whole row, sorted (ties in any order: the cut orders them by id)
    keep = _nucleus(torch.sort(scaled, dim=-1, descending=True).values, scaled, params.top_p, total, partial=False)
    assert keep is not None
    return torch.arange(V, device=scaled.device).expand(n, V), scaled.masked_fill(~keep, float("-inf"))


def _top_k(scaled: torch.Tensor, k: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The k largest of each row, descending, with their ids; where a row has ties with its k-th
    largest, every row widens to hold all of them (-inf past a row's own ties)."""
    ordered, ids = torch.topk(scaled, k + 1, dim=-1)
    kth = ordered[:, k - 1 : k]
    if not bool((ordered[:, k:] == kth).any()):
        return ordered[:, :k], ids[:, :k]
    width = int((scaled >= kth).sum(-1).max())
    ordered, ids = torch.topk(scaled, width, dim=-1)
    return ordered.masked_fill(ordered < kth, float("-inf")), ids


def _nucleus(ordered: torch.Tensor, by_id: torch.Tensor, top_p: float, total: torch.Tensor | None, partial: bool) -> torch.Tensor | None:
    """Which candidates the top-p cut keeps ([n, c] bool in the order of `by_id`). `ordered` holds
    the candidates' scaled logits in descending order, `by_id` the same in ascending id order (-inf:
    outside the top-k set); `total` [n, 1] is the row's probability mass relative to its largest
    logit (None: the candidates'). A cut of `partial` candidates (the row's c largest) is None when
    some row's nucleus does not end strictly above the smallest candidate: the tokens beyond
    them, or ties with it, could belong to it."""
    mass = torch.exp(ordered.double() - ordered[:, :1].double())
    if total is None:
        total = mass.sum(-1, keepdim=True)
    # a token is kept while the mass before it is below top_p; the most likely one always is
    before = torch.cumsum(mass, dim=-1).sub_(mass)
    count = (before < top_p * total).sum(-1, keepdim=True).clamp_(min=1)
    last = ordered.gather(-1, count - 1)  # the smallest kept logit
    if partial and not bool((last > ordered[:, -1:]).all()):
        return None
    keep = by_id >= last
    ties = keep.sum(-1, keepdim=True) > count
    if not bool(ties.any()):
        return keep
    # of the tokens tied with the smallest kept one, as many as the cut counted, lower ids first
    above = by_id > last
    tied = by_id == last
    return above | (tied & (tied.cumsum(-1) <= count - above.sum(-1, keepdim=True)))


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


# The entropy statistic works on blocks of rows of about this many bytes, bounded rather than two
# more [n, V] temporaries a call (hundreds of MB at a large vocabulary, which the allocator maps and
# faults in afresh each time). With one CPU thread, blocks the cache holds between the passes. With
# several, and on a GPU, few large blocks: each of the three passes over a block is a parallel
# region, and on a loaded machine the regions' waits cost more than the cache saves (the peer
# bench's train step, 1,024 targets of a 151,936 vocabulary, on a shared 2-core machine: 16-row
# blocks took the step from 3.6 to 5.1 CPU seconds, blocks of this size to 3.5; on one thread 16 rows
# cost 0.2 s, the large blocks 0.3 s).
_ENTROPY_CPU_BYTES = 10 << 20
_ENTROPY_BYTES = 128 << 20


def _entropy(logp_all: torch.Tensor, truncated: bool) -> torch.Tensor:
    """-sum p log p of each row of log-probabilities [n, V]; entries outside a truncated kept set
    (-inf) count 0. Each row's sum is the same reduction as over the whole matrix at once."""
    n, V = logp_all.shape
    one_thread = logp_all.device.type == "cpu" and torch.get_num_threads() == 1
    budget = _ENTROPY_CPU_BYTES if one_thread else _ENTROPY_BYTES
    rows = max(2, budget // max(1, V * logp_all.element_size()))
    out = torch.empty(n, dtype=logp_all.dtype, device=logp_all.device)
    work = torch.empty((min(n, rows + 1), V), dtype=logp_all.dtype, device=logp_all.device)
    s = 0
    while s < n:
        # Never a block of one row, unless n is 1: torch sums a lone long row in pieces on several
        # threads, in another order than the same row among others (the whole matrix's).
        e = n if n - (s + rows) == 1 else min(n, s + rows)
        block = logp_all[s:e]
        w = work[: e - s]
        torch.exp(block, out=w)
        if truncated:
            # p log p is 0 * -inf = nan outside the kept set, where p is 0: 0 there, as
            # torch.where(p > 0, p * log p, 0) has it, in place (no float temporaries of the block's size)
            outside = torch.logical_not(w > 0)
            w.mul_(block).masked_fill_(outside, 0.0)
        else:
            w.mul_(block)  # no -inf entries: no mask to build
        torch.sum(w, dim=-1, out=out[s:e])
        s = e
    return out.neg_()


class SampleScratch:
    """The float64 buffer in which `sample` weighs the blocks of its inverse CDF, reused from one
    decoding step to the next: allocated once per generation, not once per token."""

    def __init__(self) -> None:
        self.mass: torch.Tensor | None = None

    def buffer(self, rows: int, width: int, device: torch.device) -> torch.Tensor:
        if self.mass is None or self.mass.shape != (rows, width) or self.mass.device != device:
            self.mass = torch.empty((rows, width), dtype=torch.float64, device=device)
        return self.mass


# The inverse CDF's block: a draw picks its block by the blocks' sums of probability mass, then its
# token by a cumulative sum inside that block alone, not over the whole vocabulary.
_CDF_BLOCK = 1024
# With one CPU thread the blocks are weighed a few rows at a time, through a buffer of about this
# size that the cache holds from the exp to the sum (a 151,936-token row in float64 is 1.2 MB).
# With several threads, and on a GPU, as many rows at once as fit the larger buffer (every row of
# a generate batch; the keep-sampling mask of a long batch in slices): a loop over rows would make
# each pass a parallel region per row, and on a loaded machine those regions' waits cost more
# than the cache saves (bench/sampler_bench.py on a shared 2-core machine: up to 3x slower).
_CPU_BUFFER_BYTES = 2 << 20
_BUFFER_BYTES = 256 << 20
# The blocks are weighed as exp(logit) itself, without the passes that find and subtract the
# row's largest logit, wherever every row's total lies in this range: then no mass overflowed, and
# the largest (at least total / V) is a normal float64, as is every mass within 1e-17 of it. Only
# logits far from 0 (beyond about +-600) are weighed again relative to their row's largest.
_UNSHIFTED_TOTALS = (1e-250, 1e300)


def sample(logits: torch.Tensor, params: SamplingParams, generators: Sequence[torch.Generator], scratch: SampleScratch | None = None):
    """Draws one token per row; returns (tokens int64 [n], logp [n] under the sampled
    distribution, in the logits' working dtype). Each row uses its own generator (one per prompt
    seed), so a prompt's sample does not depend on the rest of the batch: u ~ U(0, 1] per row, and
    the token is the first in vocabulary order whose cumulative probability reaches u (inverse CDF).
    The probabilities are exp(logit) in float64 over their sum; with top-k or top-p only the kept
    candidates are weighed. `scratch` keeps a buffer between the calls of one generation."""
    work = logits if logits.dtype == torch.float64 else logits.float()
    n, V = work.shape
    if params.temperature == 0:
        # the kept set is the arg-max alone: log-probability 0
        return work.argmax(-1), torch.zeros(n, dtype=work.dtype, device=work.device)
    scaled = work / params.temperature if params.temperature != 1.0 else work
    u = torch.tensor([1.0 - torch.rand((), generator=g, dtype=torch.float64).item() for g in generators], dtype=torch.float64, device=logits.device)
    if not params.truncates(V):
        return _inverse_cdf(scaled, u, scratch)
    ids, kept = kept_candidates(scaled, params)
    at, logp = _inverse_cdf(kept, u, scratch)
    return ids.gather(-1, at[:, None]).squeeze(-1), logp


def _inverse_cdf(x: torch.Tensor, u: torch.Tensor, scratch: SampleScratch | None) -> tuple[torch.Tensor, torch.Tensor]:
    """For rows of logits x [n, c] (-inf: probability 0) and u [n] in (0, 1]: the first column
    whose cumulative probability reaches u, and its log-probability."""
    n, c = x.shape
    if not _weighs_in_blocks(x):
        shift = torch.amax(x, dim=-1, keepdim=True).double()
        cdf = torch.cumsum(torch.exp(x.double() - shift), dim=-1)
        total = cdf[:, -1]
        at = torch.searchsorted(cdf, (u * total)[:, None]).squeeze(-1).clamp_(max=c - 1)
    else:
        shift = None
        block_cdf = torch.cumsum(_block_mass(x, None, scratch), dim=-1)
        low, high = _UNSHIFTED_TOTALS
        if not bool(((block_cdf[:, -1] >= low) & (block_cdf[:, -1] <= high)).all()):
            shift = torch.amax(x, dim=-1, keepdim=True).double()
            block_cdf = torch.cumsum(_block_mass(x, shift, scratch), dim=-1)
        at, total = _draw_in_blocks(x, shift, block_cdf, u)
    logp = x.gather(-1, at[:, None]).squeeze(-1).double() - torch.log(total)
    if shift is not None:
        logp -= shift.squeeze(-1)
    return at, logp.to(x.dtype)


def _weighs_in_blocks(x: torch.Tensor) -> bool:
    """Whether rows [n, c] are drawn from by blocks rather than one cumulative sum over the row:
    on a CPU and past two blocks. On a GPU the cumulative sum is a single cheap kernel, where the
    blocks' dozen small ones and a synchronisation would cost more than they save."""
    return x.shape[1] > 2 * _CDF_BLOCK and x.device.type == "cpu"


def _block_mass(x: torch.Tensor, shift: torch.Tensor | None, scratch: SampleScratch | None) -> torch.Tensor:
    """Each block's probability mass relative to exp(shift) ([n, 1] float64; None: 0), float64
    [n, blocks]: exp(x - shift) summed _CDF_BLOCK columns at a time (the last block holds the rest
    of the row)."""
    n, c = x.shape
    blocks = -(-c // _CDF_BLOCK)
    width = blocks * _CDF_BLOCK
    one_thread = x.device.type == "cpu" and torch.get_num_threads() == 1
    rows = min(n, max(1, (_CPU_BUFFER_BYTES if one_thread else _BUFFER_BYTES) // (8 * width)))
    buf = (scratch or SampleScratch()).buffer(rows, width, x.device)
    buf[:, c:].zero_()  # the last block's columns past the row: probability 0
    out = torch.empty((n, blocks), dtype=torch.float64, device=x.device)
    for start in range(0, n, rows):
        part = buf[: min(rows, n - start)]
        mass = part[:, :c]
        mass.copy_(x[start : start + rows])
        if shift is not None:
            mass.sub_(shift[start : start + rows])
        mass.exp_()
        torch.sum(part.view(part.shape[0], blocks, _CDF_BLOCK), dim=-1, out=out[start : start + rows])
    return out


def _draw_in_blocks(x: torch.Tensor, shift: torch.Tensor | None, block_cdf: torch.Tensor, u: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The inverse CDF by blocks: the block whose cumulative mass (block_cdf [n, blocks], relative
    to exp(shift)) reaches u * total, then the token inside it, its mass weighed again from the
    logits. Returns (columns [n], total mass [n])."""
    n, c = x.shape
    total = block_cdf[:, -1]
    target = u * total
    block = torch.searchsorted(block_cdf, target[:, None]).squeeze(-1).clamp_(max=block_cdf.shape[1] - 1)
    before = torch.where(block > 0, block_cdf.gather(-1, (block - 1).clamp(min=0)[:, None]).squeeze(-1), torch.zeros_like(target))
    # The rest of the target inside its block; positive, so that it lands on a token of positive
    # probability even where the block sums and the cumulative sum inside it round differently.
    rest = (target - before).clamp_(min=torch.finfo(torch.float64).tiny)
    columns = block[:, None] * _CDF_BLOCK + torch.arange(_CDF_BLOCK, device=x.device)
    logits = x.gather(-1, columns.clamp(max=c - 1)).double()
    inside = torch.exp(logits if shift is None else logits - shift).masked_fill_(columns >= c, 0.0)
    at = torch.searchsorted(torch.cumsum(inside, dim=-1), rest[:, None]).squeeze(-1)
    # past the block's end only by rounding: its last token of positive probability
    last = (torch.arange(_CDF_BLOCK, device=x.device) * (inside > 0)).argmax(-1)
    return block * _CDF_BLOCK + torch.minimum(at, last), total
