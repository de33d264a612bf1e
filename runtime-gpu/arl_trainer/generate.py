"""generate: sampling continuations of prompts with the current or the behaviour policy.

Prompts are left-padded so that they end together; one prefill builds the KV cache, then one
decode step per new token. Each prompt has its own seeded generator, so its sample does not
depend on the other prompts of the request. A row stops at a stop id or at max_new_tokens."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from .batching import padded
from .errors import invalid
from .framing import Ragged
from .model import PolicyForward
from .requests import check_ids, required_ragged, sampling_params, seeds
from .sampling import SampleScratch, SamplingParams, sample
from .state import TrainerState, autocast, configured, infers
from .weights import sampler_of


@dataclass
class _Outputs:
    """The request's answer, filled row by row as chunks of prompts are generated."""

    ids: list[list[int]]
    logprobs: list[list[float]]
    finish: list[str]


@torch.no_grad()
def generate(state: TrainerState, p: dict) -> dict | None:
    conf = configured(state)
    prompts = required_ragged(p, "prompts", "int32")
    check_ids(prompts, conf.weights.handle.vocab_size)
    n = len(prompts)
    if np.any(prompts.lengths() == 0):
        raise invalid("every prompt needs at least one token")
    sampling = sampling_params({"temperature": p["temperature"], "top_p": p["top_p"], "top_k": p["top_k"]})
    assert sampling is not None
    max_new = int(p["max_new_tokens"])
    if max_new < 1:
        raise invalid("max_new_tokens must be >= 1")
    stop = {int(s) for s in p["stop_ids"]}
    row_seeds = seeds(p["seeds"], n)
    module, version = sampler_of(state, p["policy"])
    if not infers(state):
        return None
    batch = int(conf.options.get("generate_batch", 64))
    out = _Outputs(ids=[[] for _ in range(n)], logprobs=[[] for _ in range(n)], finish=["length"] * n)
    was = module.training
    module.eval()
    try:
        for start in range(0, n, batch):
            idx = list(range(start, min(n, start + batch)))
            _generate_chunk(state, module, prompts, idx, sampling, max_new, stop, row_seeds, out)
    finally:
        module.train(was)
    return {
        "ids": Ragged.from_sequences(out.ids, "int32"),
        "logprobs": Ragged.from_sequences(out.logprobs, "float32"),
        "finish": out.finish,
        "policy_version": version,
    }


def _generate_chunk(
    state: TrainerState,
    module: PolicyForward,
    prompts: Ragged,
    idx: list[int],
    sampling: SamplingParams,
    max_new: int,
    stop: set[int],
    row_seeds: list[int],
    out: _Outputs,
) -> None:
    pad_id = configured(state).tokenizer.pad_id
    device = state.device
    rows = [prompts.row(i) for i in idx]
    x, T = padded(rows, pad_id, device, left=True)
    b = len(rows)
    mask = torch.zeros(b, T, dtype=torch.long, device=device)
    for r, seq in enumerate(rows):
        mask[r, T - len(seq) :] = 1
    pos = (mask.cumsum(-1) - 1).clamp(min=0)
    gens = [torch.Generator().manual_seed(int(row_seeds[i])) for i in idx]
    last = torch.arange(b, device=device) * T + (T - 1)
    with autocast(state):
        logits, past = module(x, last, attention_mask=mask, position_ids=pos, use_cache=True)
    next_pos = pos[:, -1] + 1
    active = [True] * b
    scratch = SampleScratch()
    for _ in range(max_new):
        tokens, lps = sample(logits, sampling, gens, scratch)
        t_list, lp_list = tokens.tolist(), lps.float().tolist()
        for r in range(b):
            if not active[r]:
                continue
            out.ids[idx[r]].append(int(t_list[r]))
            out.logprobs[idx[r]].append(float(lp_list[r]))
            if int(t_list[r]) in stop:
                active[r] = False
                out.finish[idx[r]] = "stop"
        if not any(active):
            break
        if all(len(out.ids[idx[r]]) >= max_new for r in range(b) if active[r]):
            break
        feed = tokens.clone()
        for r in range(b):
            if not active[r]:
                feed[r] = pad_id
        mask = torch.cat((mask, torch.ones(b, 1, dtype=mask.dtype, device=device)), dim=1)
        with autocast(state):
            logits, past = module(feed[:, None], torch.arange(b, device=device), attention_mask=mask, position_ids=next_pos[:, None], past=past, use_cache=True)
        next_pos = next_pos + 1
