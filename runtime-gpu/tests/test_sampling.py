"""Sampling: log-probs of generated tokens equal log-probs recomputed with the keep-sampling mask;
per-prompt seeds; truncation semantics."""
import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from helpers import configure_params, new_trainer, tiny_model  # noqa: E402

from arl_trainer.framing import Ragged  # noqa: E402
from arl_trainer.sampling import SamplingParams, sample, token_logprobs, truncate  # noqa: E402

SETTINGS = [
    {"temperature": 1.0, "top_p": 1.0, "top_k": 0},
    {"temperature": 0.7, "top_p": 1.0, "top_k": 0},
    {"temperature": 1.3, "top_p": 1.0, "top_k": 5},
    {"temperature": 1.0, "top_p": 0.8, "top_k": 0},
    {"temperature": 0.9, "top_p": 0.85, "top_k": 12},
    {"temperature": 0.0, "top_p": 1.0, "top_k": 0},
]


@pytest.fixture(scope="module", params=["float64", "float32"])
def trainer(request):
    t = new_trainer()
    # a larger init so that the distribution is far from uniform and truncation matters
    t.configure(configure_params(tiny_model(request.param, hidden=48)))
    with torch.no_grad():
        for p in t.state.conf.weights.handle.module.parameters():
            if p.dim() > 1:
                p.mul_(8)
    return t


def prompts(vocab):
    rng = np.random.default_rng(0)
    return Ragged.from_sequences([rng.integers(6, vocab, size=L) for L in (3, 7, 1, 5)], "int32")


@pytest.mark.parametrize("s", SETTINGS, ids=lambda s: f"T{s['temperature']}-p{s['top_p']}-k{s['top_k']}")
def test_generated_logprobs_equal_recomputed_with_keep_sampling_mask(trainer, s):
    pr = prompts(trainer.state.conf.weights.handle.vocab_size)
    gen = trainer.generate({"prompts": pr, "max_new_tokens": 12, **s, "stop_ids": [], "seeds": np.array([11, 12, 13, 14], dtype=np.int32), "policy": "current"})
    full = Ragged.from_sequences([np.r_[pr.row(i), gen["ids"].row(i)] for i in range(len(pr))], "int32")
    lp = trainer.logprobs({"ids": full, "policy": "current", "sampling": s})["logprobs"]
    plain = trainer.logprobs({"ids": full, "policy": "current", "sampling": None})["logprobs"]
    tol = 1e-9 if trainer.state.conf.dtype == torch.float64 else 5e-5
    truncated = False
    for i in range(len(pr)):
        n = len(gen["ids"].row(i))
        assert n == 12 and gen["finish"][i] == "length"
        assert np.max(np.abs(lp.row(i)[-n:] - gen["logprobs"].row(i))) <= tol
        truncated |= bool(np.max(np.abs(plain.row(i)[-n:] - gen["logprobs"].row(i))) > 1e-3)
    if s != SETTINGS[0]:
        assert truncated  # the mask matters here: without it the log-probs differ
    if s["temperature"] == 0:
        assert np.all(gen["logprobs"].values == 0)


def test_seeds_make_samples_reproducible_and_batch_independent(trainer):
    pr = prompts(trainer.state.conf.weights.handle.vocab_size)
    s = {"temperature": 1.0, "top_p": 0.95, "top_k": 0, "stop_ids": [], "policy": "current", "max_new_tokens": 8}
    a = trainer.generate({"prompts": pr, **s, "seeds": np.array([1, 2, 3, 4], dtype=np.int32)})
    b = trainer.generate({"prompts": pr, **s, "seeds": np.array([1, 2, 3, 4], dtype=np.int32)})
    assert np.array_equal(a["ids"].values, b["ids"].values)
    alone = trainer.generate({"prompts": Ragged.from_sequences([pr.row(2)], "int32"), **s, "seeds": np.array([3], dtype=np.int32)})
    assert np.array_equal(alone["ids"].row(0), a["ids"].row(2))
    c = trainer.generate({"prompts": pr, **s, "seeds": np.array([5, 6, 7, 8], dtype=np.int32)})
    assert not np.array_equal(a["ids"].values, c["ids"].values)


def test_stop_ids_end_a_sequence(trainer):
    vocab = trainer.state.conf.weights.handle.vocab_size
    pr = prompts(vocab)
    stop_ids = list(range(6, vocab, 2))
    sampling = {"temperature": 1.0, "top_p": 1.0, "top_k": 0}
    seeds = np.array([1, 2, 3, 4], dtype=np.int32)
    g = trainer.generate({"prompts": pr, "max_new_tokens": 30, **sampling, "stop_ids": stop_ids, "seeds": seeds, "policy": "current"})
    for i in range(len(pr)):
        row = g["ids"].row(i)
        if g["finish"][i] == "stop":
            assert row[-1] % 2 == 0 and row[-1] >= 6 and all(not (t >= 6 and t % 2 == 0) for t in row[:-1])
        else:
            assert len(row) == 30


def test_truncation_rules():
    logits = torch.log(torch.tensor([[0.5, 0.2, 0.15, 0.1, 0.05]], dtype=torch.float64))
    kept = lambda p: torch.isfinite(truncate(logits, p))[0].tolist()  # noqa: E731
    assert kept(SamplingParams(1.0, 1.0, 2)) == [True, True, False, False, False]
    assert kept(SamplingParams(1.0, 0.45, 0)) == [True, False, False, False, False]  # reached by the first
    assert kept(SamplingParams(1.0, 0.69, 0)) == [True, True, False, False, False]
    assert kept(SamplingParams(1.0, 0.71, 0)) == [True, True, True, False, False]
    assert kept(SamplingParams(0.0, 1.0, 0)) == [True, False, False, False, False]
    # top-p applies to the top-k renormalised distribution: (0.5, 0.2, 0.15)/0.85
    assert kept(SamplingParams(1.0, 0.8, 3)) == [True, True, False, False, False]
    assert kept(SamplingParams(1.0, 0.83, 3)) == [True, True, True, False, False]
    # a target outside the kept set is added to it: finite log-prob
    lp, _ = token_logprobs(logits, torch.tensor([4]), SamplingParams(1.0, 1.0, 2))
    assert torch.isfinite(lp).all() and abs(float(lp) - math.log(0.05 / 0.75)) < 1e-12
    # sampled log-probs are under the renormalised truncated distribution
    g = [torch.Generator().manual_seed(0)]
    tok, lp = sample(logits, SamplingParams(1.0, 1.0, 2), g)
    assert int(tok) in (0, 1) and abs(float(lp) - float(torch.log(logits.exp()[0, tok] / 0.7))) < 1e-12


def test_sampling_frequencies_follow_the_truncated_distribution():
    logits = torch.log(torch.tensor([[0.5, 0.2, 0.15, 0.1, 0.05]], dtype=torch.float64)).expand(4000, 5)
    gens = [torch.Generator().manual_seed(i) for i in range(4000)]
    tok, _ = sample(logits, SamplingParams(1.0, 1.0, 3), gens)
    freq = np.bincount(tok.numpy(), minlength=5) / 4000
    assert freq[3] == 0 and freq[4] == 0
    assert np.allclose(freq[:3], np.array([0.5, 0.2, 0.15]) / 0.85, atol=0.03)


def _entropy_of_the_whole_matrix(logits, targets, params):
    logp_all = torch.log_softmax(truncate(logits, params, force=targets), dim=-1)
    p = logp_all.exp()
    return -torch.where(p > 0, p * logp_all, torch.zeros_like(p)).sum(-1)


@pytest.mark.parametrize("s", SETTINGS, ids=lambda s: f"T{s['temperature']}-p{s['top_p']}-k{s['top_k']}")
def test_entropy_in_row_blocks_equals_the_whole_matrix_reduction(s, monkeypatch):
    # 37 rows in blocks of 4 (the budget made small): eight blocks, and the one row left over
    # joins the last one; in both dtypes
    from arl_trainer import sampling

    params = SamplingParams.from_message(s)
    for dtype in (torch.float32, torch.float64):
        logits = torch.randn(37, 301, generator=torch.Generator().manual_seed(1), dtype=dtype) * 4
        targets = torch.randint(0, 301, (37,), generator=torch.Generator().manual_seed(2))
        for budget in ("_ENTROPY_BYTES", "_ENTROPY_CPU_BYTES"):
            monkeypatch.setattr(sampling, budget, 4 * 301 * logits.element_size())
        _, ent = token_logprobs(logits, targets, params, want_entropy=True)
        assert ent.dtype == dtype and torch.equal(ent, _entropy_of_the_whole_matrix(logits, targets, params))


def test_entropy_at_a_real_vocabulary_has_no_block_of_one_row(monkeypatch):
    # Qwen's 151,936 entries: torch sums a lone row of that length in pieces on several threads
    # (another order than the same row among others), so a last block of one row would differ in
    # its last bits from the whole matrix's reduction. 64 rows in blocks of 3 leave one over.
    from arl_trainer import sampling

    V = 151936
    logits = torch.randn(64, V, generator=torch.Generator().manual_seed(3)) * 3
    targets = torch.randint(0, V, (64,), generator=torch.Generator().manual_seed(4))
    for budget in ("_ENTROPY_BYTES", "_ENTROPY_CPU_BYTES"):
        monkeypatch.setattr(sampling, budget, 3 * V * 4)
    _, ent = token_logprobs(logits, targets, None, want_entropy=True)
    assert torch.equal(ent, _entropy_of_the_whole_matrix(logits, targets, None))


def test_sample_with_reused_buffers_draws_what_fresh_buffers_draw():
    # one scratch over calls of different batch sizes and dtypes: the buffers follow the logits
    from arl_trainer.sampling import SampleScratch

    scratch = SampleScratch()
    params = SamplingParams(0.9, 0.95, 0)
    for rows, dtype in ((4, torch.float32), (4, torch.float32), (2, torch.float32), (3, torch.float64)):
        logits = torch.randn(rows, 997, generator=torch.Generator().manual_seed(rows), dtype=dtype) * 3
        fresh = sample(logits, params, [torch.Generator().manual_seed(i) for i in range(rows)])
        reused = sample(logits, params, [torch.Generator().manual_seed(i) for i in range(rows)], scratch)
        assert torch.equal(fresh[0], reused[0]) and torch.equal(fresh[1], reused[1])
