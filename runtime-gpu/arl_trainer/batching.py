"""Padding ragged sequences into device batches, and cutting a request into forward passes of
bounded padded size (generate, score and update share these)."""
from __future__ import annotations

import numpy as np
import torch


def padded(rows: list[np.ndarray], pad: int, device: torch.device, left: bool = False) -> tuple[torch.Tensor, int]:
    """[len(rows), T] int64 ids on `device`, T the longest row (at least 1), padded with `pad` on
    the right (or on the left: generation's prompts end together)."""
    T = max((len(r) for r in rows), default=1) or 1
    out = np.full((len(rows), T), pad, dtype=np.int64)
    for i, r in enumerate(rows):
        if len(r):
            if left:
                out[i, T - len(r) :] = r
            else:
                out[i, : len(r)] = r
    return torch.from_numpy(out).to(device), T


def chunks_by_tokens(lengths: np.ndarray, budget: int) -> list[list[int]]:
    """Sequence indices in chunks whose padded size (rows * longest) stays within budget tokens,
    longest first (a chunk's rows then have similar lengths)."""
    order = sorted(range(len(lengths)), key=lambda i: (-int(lengths[i]), i))
    chunks: list[list[int]] = []
    cur: list[int] = []
    longest = 0
    for i in order:
        L = max(1, int(lengths[i]))
        if cur and (len(cur) + 1) * max(longest, L) > budget:
            chunks.append(cur)
            cur, longest = [], 0
        cur.append(i)
        longest = max(longest, L)
    if cur:
        chunks.append(cur)
    return chunks
