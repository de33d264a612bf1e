"""train_step and compute_gradients: the batch, its microbatches, the gradient, the optimizer step.

Alignment (every ragged array is aligned with `ids`): loss_mask[k] = 1 makes token k a target;
its log-prob comes from the logits at position k-1 (next-token shift); advantages[k],
old_logprobs[k], ref_logprobs[k], is_weights[k] belong to token k; loss_mask[0] must be 0. The critic's
returns[k] and old_values[k] belong to target token k: the value regressed is that of the state
in which token k was chosen, V(h_{k-1}), i.e. what `values` reports at position k-1.
old_logprobs null is the on-policy step: the old log-probs are the current ones, detached (ratio
exactly 1, the gradient of logp).
The loss terms are losses.py's; the statistics are pooled by stats.py.
"""
from __future__ import annotations

import logging
import time
from contextlib import nullcontext
from dataclasses import dataclass

import numpy as np
import torch

from . import losses
from .batching import padded
from .errors import invalid
from .framing import Ragged
from .optimizer import grad_norm, optimizer_step, reset_state
from .requests import check_ids, is_weights, ragged, required_ragged, sampling_params, step_lr
from .sampling import SamplingParams, token_logprobs
from .state import Configured, TrainerState, autocast, configured
from .stats import StatsPool, step_result
from .weights import reference_slot, refresh_reference

log = logging.getLogger("arl_trainer")


@dataclass
class TrainBatch:
    """The decoded sequences of a train_step and each sequence's reduction weight."""

    ids: Ragged
    mask: Ragged
    adv: Ragged
    old: Ragged | None  # None: the on-policy step
    ref: Ragged | None
    is_w: Ragged | None  # importance weights (mask.tis); None: 1 everywhere
    returns: Ragged | None
    old_values: Ragged | None
    weights: np.ndarray


@dataclass
class LossSettings:
    """The request's loss options (clip, KL, sampling for the log-probs, value clip)."""

    low: float
    high: float
    dual: float | None
    kl_coef: float
    kl_estimator: str
    kl_in_loss: bool
    sampling: SamplingParams | None
    value_clip: float | None
    microbatches: int
    step_lr: float | None


@dataclass
class Microbatch:
    """One microbatch on the device: padded ids `x`, the flat positions `sel` whose logits predict
    the targets `tgt`, and per-target tensors. A dummy one (a rank with fewer sequences than
    microbatches) has only x and sel and makes a zero-weighted pass."""

    x: torch.Tensor
    sel: torch.Tensor
    dummy: bool = False
    n: int = 0
    tgt: torch.Tensor | None = None
    adv: torch.Tensor | None = None
    old: torch.Tensor | None = None
    ref: torch.Tensor | None = None
    is_w: torch.Tensor | None = None
    ret: torch.Tensor | None = None
    oldv: torch.Tensor | None = None
    w: torch.Tensor | None = None


def compute_gradients(state: TrainerState, p: dict) -> dict:
    """train_step without clipping and without the optimizer step (tests): the summed
    gradients of the whole step stay in the parameters' .grad."""
    return _step(state, p, apply=False)


def train_step(state: TrainerState, p: dict) -> dict:
    return _step(state, p, apply=True)


def reset_optimizer(state: TrainerState, p: dict) -> dict:
    """Starts the policy's and the critic's optimizers afresh (the twin of resetOptimizers in
    src/trainer/embedded/update.ts): the weights stay; the warm-up and the reference refresh count
    from the next step. Under torchrun every rank runs it on its own (shard of the) state."""
    opts = configured(state).optimizers
    reset_state(opts.policy)
    if opts.critic is not None:
        reset_state(opts.critic)
    state.step = 0
    return {"step": state.step}


def _read_request(conf: Configured, p: dict) -> tuple[TrainBatch, LossSettings]:
    ids = required_ragged(p, "ids", "int32")
    check_ids(ids, conf.weights.handle.vocab_size)
    lr = step_lr(p)
    n = len(ids)
    mask = required_ragged(p, "loss_mask", "uint8", n, ids.offsets)
    adv = required_ragged(p, "advantages", "float32", n, ids.offsets)
    old = ragged(p, "old_logprobs", "float32", n, ids.offsets, required=False)
    ref = ragged(p, "ref_logprobs", "float32", n, ids.offsets, required=False)
    is_w = is_weights(p, n, ids.offsets)
    for i in range(n):
        if len(mask.row(i)) and mask.row(i)[0]:
            raise invalid(f"sequence {i}: token 0 cannot be a target (nothing predicts it); loss_mask[0] must be 0")
    groups = np.asarray(p["groups"], dtype=np.int64).reshape(-1)
    if len(groups) != n:
        raise invalid(f"groups has {len(groups)} entries for {n} sequences")
    try:
        reduction = losses.Reduction.from_message(p["reduction"])
        den = losses.Denominators.from_message(p["denominators"], n)
        weights = losses.sequence_weights(reduction, den, groups)
    except ValueError as e:
        raise invalid(str(e)) from None
    L = np.array([float(mask.row(i).astype(np.float64).sum()) for i in range(n)])
    bad = np.nonzero(L != den.sequence_tokens)[0]
    if len(bad):
        i = int(bad[0])
        raise invalid(f"denominators.sequence_tokens[{i}] is {den.sequence_tokens[i]}, but sequence {i} has {L[i]:g} target tokens (sum of its loss_mask)")
    if den.tokens != L.sum() or den.sequences != n:
        # Allowed (the runtime owns the denominators), but usually a bug: say so in the log.
        log.warning(
            "train_step: denominators (tokens %g, sequences %g) differ from this batch (%g target tokens, %d sequences)", den.tokens, den.sequences, L.sum(), n
        )
    clip = p["clip"]
    low, high = float(clip["low"]), float(clip["high"])
    dual = None if clip["dual"] is None else float(clip["dual"])
    kl = p["kl"]
    kl_coef = float(kl["coef"])
    kl_in_loss = kl_coef > 0 and kl["placement"] in ("loss", "both")
    if kl_in_loss and ref is None and conf.weights.reference is None:
        raise invalid("KL in the loss needs ref_logprobs or a reference policy")
    sampling = sampling_params(p["sampling"])
    critic = p["critic"]
    returns = old_values = None
    value_clip = None
    if critic is not None:
        if conf.weights.critic is None:
            raise invalid("train_step has critic data, but no critic is configured (algorithm.critic)")
        returns = required_ragged(critic, "returns", "float32", n, ids.offsets)
        old_values = required_ragged(critic, "old_values", "float32", n, ids.offsets)
        value_clip = None if critic["value_clip"] is None else float(critic["value_clip"])
    batch = TrainBatch(ids, mask, adv, old, ref, is_w, returns, old_values, weights)
    return batch, LossSettings(low, high, dual, kl_coef, kl["estimator"], kl_in_loss, sampling, value_clip, int(p["microbatches"]), lr)


def _step(state: TrainerState, p: dict, apply: bool) -> dict:
    conf = configured(state)
    t0 = time.perf_counter()
    batch, settings = _read_request(conf, p)
    w, opts = conf.weights, conf.optimizers
    if settings.kl_in_loss and batch.ref is None:
        reference_slot(state)  # taken (at its first use) here on every rank, not in a microbatch: a rank may have none
    with_value = batch.returns is not None
    mine = state.dist.shard(batch.ids.lengths())
    mbs = split_balanced(mine, batch.ids.lengths(), settings.microbatches)
    # Statistics stay on the device until the end of the step: no host synchronisation per
    # microbatch (the CPU keeps queueing kernels while the GPU computes).
    acc = StatsPool(state.device)

    opts.policy.zero_grad(set_to_none=True)
    if opts.critic is not None:
        opts.critic.zero_grad(set_to_none=True)
    trained = [m for m in (w.policy_train, w.critic_train if with_value else None) if m is not None]
    prepared = [_prepare(state, batch, mb) for mb in mbs]
    for j, m in enumerate(prepared):
        sync = j == len(prepared) - 1
        with (nullcontext() if sync else state.dist.no_sync(*trained)):
            _microbatch(state, acc, batch, m, settings)

    sums = acc.pooled(state.dist)
    if apply and sums.tokens == 0:
        # No target token anywhere: no signal. Skip the update (AdamW would still move the
        # weights through decay and momentum); the step still counts.
        log.warning("train_step without target tokens: optimizer step skipped")
        norm: float | None = 0.0
        state.step += 1
        state.policy_version += 1
    elif apply:
        norm = optimizer_step(opts.policy, w.policy, opts.policy_cfg, state.step, settings.step_lr)
        if with_value and opts.critic is not None:
            assert w.critic is not None and opts.critic_cfg is not None
            optimizer_step(opts.critic, w.critic, opts.critic_cfg, state.step)
        state.step += 1
        state.policy_version += 1
        if w.reference is not None and conf.reference_refresh and state.step % conf.reference_refresh == 0:
            refresh_reference(state)
    else:
        norm = grad_norm(w.policy)
    result = step_result(sums, settings.kl_coef, settings.kl_in_loss, with_value, norm, state.policy_version)
    log.debug("train_step %d: %d sequences, %d target tokens, %.3fs", state.step, len(batch.ids), result["tokens"], time.perf_counter() - t0)
    return result


def split_balanced(indices: list[int], lengths: np.ndarray, parts: int) -> list[list[int]]:
    """`parts` microbatches (some possibly empty) with balanced token counts, deterministic."""
    bins: list[list[int]] = [[] for _ in range(parts)]
    load = [0] * parts
    for i in sorted(indices, key=lambda j: (-int(lengths[j]), j)):
        b = min(range(parts), key=lambda q: (load[q], q))
        bins[b].append(i)
        load[b] += int(lengths[i]) + 1
    return [sorted(b) for b in bins]


def _prepare(state: TrainerState, batch: TrainBatch, mb: list[int]) -> Microbatch:
    """Host work and transfers of one microbatch (all done before any compute, so the compute
    loop never waits on a host-to-device copy)."""
    conf = configured(state)
    dev = state.device
    pad_id = conf.tokenizer.pad_id
    if not mb:
        x, _ = padded([np.array([pad_id] * 2)], pad_id, dev)
        return Microbatch(x=x, sel=torch.zeros(1, dtype=torch.long, device=dev), dummy=True)
    rows = [batch.ids.row(i) for i in mb]
    x, T = padded(rows, pad_id, dev)
    sel, tgt = [], []
    parts: dict[str, list[np.ndarray]] = {k: [] for k in ("adv", "old", "ref", "is_w", "ret", "oldv", "w")}
    for r, i in enumerate(mb):
        ks = np.nonzero(batch.mask.row(i))[0]
        if len(ks) == 0:
            continue
        sel.append(r * T + ks - 1)
        tgt.append(batch.ids.row(i)[ks])
        parts["adv"].append(batch.adv.row(i)[ks])
        if batch.old is not None:
            parts["old"].append(batch.old.row(i)[ks])
        if batch.ref is not None:
            parts["ref"].append(batch.ref.row(i)[ks])
        if batch.is_w is not None:
            parts["is_w"].append(batch.is_w.row(i)[ks])
        if batch.returns is not None and batch.old_values is not None:
            parts["ret"].append(batch.returns.row(i)[ks])
            parts["oldv"].append(batch.old_values.row(i)[ks])
        parts["w"].append(np.full(len(ks), batch.weights[i], dtype=np.float64))
    cd = torch.float64 if conf.dtype == torch.float64 else torch.float32

    def dev_cat(chunks: list[np.ndarray], dtype: torch.dtype) -> torch.Tensor:
        arr = np.concatenate(chunks) if chunks else np.zeros(0)
        return torch.from_numpy(np.ascontiguousarray(arr)).to(dev).to(dtype)

    on_device = {k: dev_cat(v, cd) if v else None for k, v in parts.items()}
    m = Microbatch(x=x, sel=dev_cat(sel, torch.long), n=int(sum(len(a) for a in sel)), tgt=dev_cat(tgt, torch.long), **on_device)
    if m.w is None:
        m.w = torch.zeros(0, dtype=cd, device=dev)
        m.adv = m.old = m.w
    return m


def _microbatch(state: TrainerState, acc: StatsPool, batch: TrainBatch, m: Microbatch, s: LossSettings) -> None:
    """Forward and backward of one microbatch; adds its sums to `acc`."""
    w_slots = configured(state).weights
    scale = state.dist.grad_scale
    x, sel = m.x, m.sel
    critic_train = w_slots.critic_train if batch.returns is not None else None
    if m.dummy:
        with autocast(state):
            dummy = w_slots.policy_train(x, sel).sum() * 0.0
        dummy.backward()
        if critic_train is not None:
            with autocast(state):
                dv = critic_train(x, sel).sum() * 0.0
            dv.backward()
        return
    assert m.w is not None and m.tgt is not None and m.adv is not None
    n, w, tgt = m.n, m.w, m.tgt
    with autocast(state):
        logits = w_slots.policy_train(x, sel)
    logp, ent = token_logprobs(logits, tgt, s.sampling, want_entropy=True)
    # On-policy (old_logprobs null): old = the current log-probs, detached, so the ratio is exactly
    # 1 and its gradient is that of logp.
    old = m.old if m.old is not None else logp.detach()
    u, rho, clipped = losses.surrogate(logp, old, m.adv, s.low, s.high, s.dual)
    if m.is_w is not None:
        # Truncated importance sampling: a constant factor of each token's surrogate; the
        # statistics (ratios, clip fraction, entropy) and the KL term stay unweighted.
        u = m.is_w * u
    pol = (w * u).sum()
    loss = -pol
    kl_sum = None
    ref_lp = m.ref
    if ref_lp is None and s.kl_in_loss and n:
        assert w_slots.reference is not None and w_slots.reference_taken
        with torch.no_grad(), autocast(state):
            ref_logits = w_slots.reference(x, sel)
        ref_lp = token_logprobs(ref_logits, tgt, s.sampling)[0].to(w.dtype)
    if ref_lp is not None:
        kl_sum = (w * losses.kl_terms(logp, ref_lp, s.kl_estimator)).sum()
        if s.kl_in_loss:
            loss = loss + s.kl_coef * kl_sum
    (loss * scale).backward()
    with torch.no_grad():
        acc.add("surrogate_sum", pol)
        if kl_sum is not None:
            acc.add("kl_sum", kl_sum)
            acc.add("kl_tokens", n)
        if n:
            acc.add("entropy_sum", ent.sum())
            acc.add("logp_sum", logp.sum())
            acc.add("clipped", clipped.sum())
            acc.add("ratio_sum", rho.sum())
            acc.add("tokens", n)
            acc.ratios(rho)
    if critic_train is not None:
        with autocast(state):
            v = critic_train(x, sel)
        vl = (w * losses.value_terms(v.to(w.dtype), m.oldv, m.ret, s.value_clip)).sum() if n else v.sum() * 0.0
        (vl * scale).backward()
        acc.add("value_loss", vl)
