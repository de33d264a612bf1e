"""logprobs and values: scoring given sequences with a policy slot or the critic.

logprobs[k] = log p(ids[k] | ids[:k]) (position 0 has no prediction and is 0); values[k] =
V(h_k), the value head on the hidden state at position k (context ids[:k+1])."""
from __future__ import annotations

import numpy as np
import torch

from .batching import chunks_by_tokens, padded
from .errors import invalid
from .framing import Ragged
from .model import PolicyForward
from .requests import check_ids, ragged, required_ragged, sampling_params
from .sampling import SamplingParams, token_logprobs
from .state import TrainerState, autocast, configured, infers
from .weights import scoring_weights

# log-probs of at most this many selected positions at once (bounds the softmax's memory)
_LOGPROB_BLOCK = 4096


def logprobs(state: TrainerState, p: dict) -> dict | None:
    conf = configured(state)
    ids = required_ragged(p, "ids", "int32")
    check_ids(ids, conf.weights.handle.vocab_size)
    sampling = sampling_params(p["sampling"])
    mask = ragged(p, "mask", "uint8", len(ids), ids.offsets, required=False)
    module = scoring_weights(state, p["policy"])
    if not infers(state):
        return None
    was = module.training
    module.eval()
    try:
        rows = sequence_logprobs(state, module, ids, sampling, mask)
    finally:
        module.train(was)
    return {"logprobs": Ragged.from_sequences(rows, "float32")}


@torch.no_grad()
def sequence_logprobs(state: TrainerState, module: PolicyForward, ids: Ragged, sampling: SamplingParams | None, mask: Ragged | None = None) -> list[np.ndarray]:
    conf = configured(state)
    device = state.device
    rows = ids.rows()
    wanted = mask.rows() if mask is not None else None
    out: list[np.ndarray] = [np.zeros(len(r), dtype=np.float32) for r in rows]
    budget = int(conf.options.get("infer_tokens", 16384))
    for chunk in chunks_by_tokens(ids.lengths(), budget):
        sub = [rows[i] for i in chunk]
        x, T = padded(sub, conf.tokenizer.pad_id, device)
        select, targets, where = [], [], []
        for r, seq in enumerate(sub):
            m = wanted[chunk[r]] if wanted is not None else None
            for k in range(1, len(seq)):
                # Only positions the caller reads get the vocabulary projection (docs/protocol.md).
                if m is not None and not m[k]:
                    continue
                select.append(r * T + k - 1)
                targets.append(int(seq[k]))
                where.append((chunk[r], k))
        if not select:
            continue
        with autocast(state):
            logits = module(x, torch.tensor(select, device=device))
        lp_parts = []
        tgt = torch.tensor(targets, device=device)
        for s in range(0, len(select), _LOGPROB_BLOCK):
            lp, _ = token_logprobs(logits[s : s + _LOGPROB_BLOCK], tgt[s : s + _LOGPROB_BLOCK], sampling)
            lp_parts.append(lp)
        lp = torch.cat(lp_parts).float().cpu().numpy()
        for (i, k), v in zip(where, lp, strict=True):
            out[i][k] = v
    return out


@torch.no_grad()
def values(state: TrainerState, p: dict) -> dict | None:
    conf = configured(state)
    critic = conf.weights.critic
    if critic is None:
        raise invalid("no critic: configure algorithm.critic")
    ids = required_ragged(p, "ids", "int32")
    check_ids(ids, conf.weights.handle.vocab_size)
    if not infers(state):
        return None
    rows = ids.rows()
    out = [np.zeros(len(r), dtype=np.float32) for r in rows]
    critic.eval()
    try:
        for chunk in chunks_by_tokens(ids.lengths(), int(conf.options.get("infer_tokens", 16384))):
            sub = [rows[i] for i in chunk]
            x, _ = padded(sub, conf.tokenizer.pad_id, state.device)
            with autocast(state):
                v = critic(x).float().cpu().numpy()
            for r, i in enumerate(chunk):
                out[i][:] = v[r, : len(sub[r])]
    finally:
        critic.train()
    return {"values": Ragged.from_sequences(out, "float32")}
