"""The sampler that draws from the kept candidates in blocks picks the tokens the full-vocabulary
inverse CDF picks (tests/sampling_reference.py, the former sampler), and reports the log-probs
that token_logprobs recomputes, over many random rows, seeds and sampling settings."""
import pytest

torch = pytest.importorskip("torch")

from sampling_reference import full_vocabulary_sample, full_vocabulary_truncate  # noqa: E402

from arl_trainer.sampling import _CDF_BLOCK, _TOP_P_CANDIDATES, SampleScratch, SamplingParams, sample, token_logprobs, truncate  # noqa: E402

SETTINGS = [
    SamplingParams(1.0, 1.0, 0),
    SamplingParams(0.7, 1.0, 0),
    SamplingParams(1.3, 1.0, 5),
    SamplingParams(1.0, 1.0, 50),
    SamplingParams(1.0, 0.8, 0),
    SamplingParams(0.9, 0.95, 0),
    SamplingParams(0.9, 0.85, 12),
    SamplingParams(0.0, 1.0, 0),
]
# 301: one cumulative sum; 4099: the blocked inverse CDF with a part-filled last block, and the
# top-p cut from the 1,024 largest (peaked rows) or from the whole sorted row (flat ones).
VOCABS = (301, 4099)
ROWS = 192


def ids(p: SamplingParams) -> str:
    return f"T{p.temperature}-p{p.top_p}-k{p.top_k}"


def rows_of_logits(V: int, scale: float, dtype: torch.dtype, seed: int) -> torch.Tensor:
    return (torch.randn(ROWS, V, generator=torch.Generator().manual_seed(seed), dtype=torch.float64) * scale).to(dtype)


def generators(seed: int) -> list[torch.Generator]:
    return [torch.Generator().manual_seed(seed * 100_003 + r) for r in range(ROWS)]


@pytest.mark.parametrize("params", SETTINGS, ids=ids)
def test_float64_rows_draw_the_full_vocabulary_samplers_tokens(params):
    # The same float64 probabilities summed in another order: equal tokens, log-probs to rounding.
    draws = 0
    for V in VOCABS:
        for scale in (1.0, 6.0):  # near flat, and peaked (a nucleus of a few tokens)
            seed = V + int(scale)
            logits = rows_of_logits(V, scale, torch.float64, seed)
            unchanged = logits.clone()
            tokens, logp = sample(logits, params, generators(seed))
            assert torch.equal(logits, unchanged)  # the sampler works on copies of the caller's logits
            want, want_logp = full_vocabulary_sample(logits, params, generators(seed))
            assert torch.equal(tokens, want), (V, scale)
            assert torch.allclose(logp, want_logp, rtol=0, atol=1e-12)
            again, _ = token_logprobs(logits, tokens, params)
            assert torch.allclose(logp, again, rtol=0, atol=1e-12)
            draws += ROWS
    assert draws == len(VOCABS) * 2 * ROWS


@pytest.mark.parametrize("params", SETTINGS, ids=ids)
def test_float32_rows_draw_what_the_float64_cdf_of_their_scaled_logits_draws(params):
    # The CDF is built in float64 from the float32 scaled logits: the float64 oracle given those
    # scaled logits (temperature 1) draws the same tokens; the log-probs are token_logprobs'.
    unscaled = SamplingParams(1.0, params.top_p, params.top_k) if params.temperature else params
    for V in VOCABS:
        for scale in (1.0, 6.0):
            seed = 7 * V + int(scale)
            logits = rows_of_logits(V, scale, torch.float32, seed)
            tokens, logp = sample(logits, params, generators(seed))
            scaled = logits / params.temperature if params.temperature not in (0.0, 1.0) else logits
            want, _ = full_vocabulary_sample(scaled.double(), unscaled, generators(seed))
            assert torch.equal(tokens, want), (V, scale)
            assert logp.dtype == torch.float32
            again, _ = token_logprobs(logits, tokens, params)
            assert torch.allclose(logp, again, rtol=0, atol=2e-5)


@pytest.mark.parametrize("params", SETTINGS, ids=ids)
def test_float32_rows_differ_from_the_former_float32_sampler_only_at_its_rounding(params):
    # The former sampler summed exp of float32 log-probs (each rounded by up to ~1e-6 at a large
    # vocabulary): where it drew another token, the draw lay that close to a boundary of the exact CDF.
    draws = differ = 0
    for V in VOCABS:
        for scale in (1.0, 6.0):
            seed = 11 * V + int(scale)
            logits = rows_of_logits(V, scale, torch.float32, seed)
            tokens, _ = sample(logits, params, generators(seed))
            former, _ = full_vocabulary_sample(logits, params, generators(seed))
            draws += ROWS
            for r in torch.nonzero(tokens != former).flatten().tolist():
                differ += 1
                u = 1.0 - torch.rand((), generator=generators(seed)[r], dtype=torch.float64).item()
                cdf = torch.cumsum(torch.softmax(full_vocabulary_truncate(logits[r : r + 1].double(), params), -1), -1)[0]
                lo, hi = sorted((int(tokens[r]), int(former[r])))
                assert abs(float(cdf[lo]) - u) <= 1e-5 and float(cdf[hi - 1] - cdf[lo]) <= 1e-5, (V, scale, r)
    assert differ <= draws // 1000, f"{differ} of {draws} draws differ"


@pytest.mark.parametrize("params", [p for p in SETTINGS if p.truncates(301)], ids=ids)
def test_kept_sets_with_ties_equal_the_full_vocabulary_cut(params):
    # bfloat16 logits tie often: every token tied with the k-th largest is kept, and at the top-p
    # cut tokens of equal probability are taken lower id first (as the embedded trainer does).
    for V in VOCABS:
        for scale in (1.0, 6.0):
            logits = rows_of_logits(V, scale, torch.bfloat16, 3 * V).float()
            got = torch.isfinite(truncate(logits, params))
            want = torch.isfinite(full_vocabulary_truncate(logits, params))
            assert torch.equal(got, want), (V, scale)
            seed = 5 * V + int(scale)
            tokens, logp = sample(logits, params, generators(seed))
            assert got[torch.arange(ROWS), tokens].all()
            again, _ = token_logprobs(logits, tokens, params)
            assert torch.allclose(logp, again, rtol=0, atol=2e-5)


def test_the_top_p_cut_is_exercised_from_the_candidates_and_from_the_whole_row():
    # peaked rows keep fewer tokens than the candidates looked at first, flat rows more
    V = VOCABS[-1]
    params = SamplingParams(1.0, 0.9, 0)
    assert 2 * _TOP_P_CANDIDATES < V and V > 2 * _CDF_BLOCK
    peaked = torch.isfinite(truncate(rows_of_logits(V, 6.0, torch.float32, 1), params)).sum(-1)
    flat = torch.isfinite(truncate(rows_of_logits(V, 1.0, torch.float32, 1), params)).sum(-1)
    assert int(peaked.max()) < _TOP_P_CANDIDATES < int(flat.min())


def test_a_reused_buffer_of_the_same_width_keeps_no_mass_from_a_wider_row():
    # 5,003 and 4,999 tokens fill the same five blocks: the second call must not see the first's tail
    scratch = SampleScratch()
    params = SamplingParams(1.0, 1.0, 0)
    for V in (5003, 4999, 5003):
        logits = rows_of_logits(V, 1.0, torch.float32, V)
        reused = sample(logits, params, generators(V), scratch)
        fresh = sample(logits, params, generators(V))
        assert torch.equal(reused[0], fresh[0]) and torch.equal(reused[1], fresh[1])
        assert int(reused[0].max()) < V


@pytest.mark.parametrize("params", [SamplingParams(1.0, 1.0, 0), SamplingParams(0.7, 1.0, 50), SamplingParams(1.0, 0.95, 0)], ids=ids)
def test_rows_of_the_qwen_vocabulary_draw_the_full_vocabulary_samplers_tokens(params):
    # 151,936 tokens: on a CPU the blocks are weighed one row at a time
    for scale in (1.0, 6.0):
        logits = (torch.randn(12, 151_936, generator=torch.Generator().manual_seed(int(scale)), dtype=torch.float64) * scale).float()
        gens = lambda: [torch.Generator().manual_seed(r) for r in range(12)]  # noqa: E731
        tokens, logp = sample(logits, params, gens())
        scaled = logits / params.temperature if params.temperature != 1.0 else logits
        want, _ = full_vocabulary_sample(scaled.double(), SamplingParams(1.0, params.top_p, params.top_k), gens())
        assert torch.equal(tokens, want), scale
        again, _ = token_logprobs(logits, tokens, params)
        assert torch.allclose(logp, again, rtol=0, atol=2e-5)


def test_every_way_of_weighing_the_rows_draws_the_same_tokens(monkeypatch):
    # One CPU thread weighs the blocks a few rows at a time through a small buffer (here 51 rows,
    # or one), several threads and a GPU every row at once; a GPU then draws from one cumulative
    # sum over the row.
    import arl_trainer.sampling as sampling

    logits = rows_of_logits(4099, 1.0, torch.float32, 2)
    params = SamplingParams(1.0, 1.0, 0)
    threads = torch.get_num_threads()
    draws = []
    try:
        for n_threads, buffer in ((2, sampling._CPU_BUFFER_BYTES), (1, sampling._CPU_BUFFER_BYTES), (1, 1), (1, 1 << 40)):
            torch.set_num_threads(n_threads)
            monkeypatch.setattr(sampling, "_CPU_BUFFER_BYTES", buffer)
            draws.append(sample(logits, params, generators(2)))
    finally:
        torch.set_num_threads(threads)
    monkeypatch.setattr(sampling, "_weighs_in_blocks", lambda x: False)
    draws.append(sample(logits, params, generators(2)))
    for other in draws[1:]:
        assert torch.equal(draws[0][0], other[0]) and torch.allclose(draws[0][1], other[1], rtol=0, atol=1e-6)


@pytest.mark.parametrize(
    "logits, params, kept",
    [
        ([2, 1, 1, 1, 0], SamplingParams(1.0, 1.0, 2), [0, 1, 2, 3]),
        ([0, 1, 1, 1, -1], SamplingParams(1.0, 0.5, 0), [1, 2]),
        ([1, 1, 1, 1, 0], SamplingParams(1.0, 0.6, 3), [0, 1, 2]),
    ],
)
def test_ties_are_cut_as_the_embedded_trainer_cuts_them(logits, params, kept):
    # the cases of test/trainer/embedded-sampling.test.ts
    for dtype in (torch.float32, torch.float64):
        row = torch.tensor([logits], dtype=dtype)
        assert torch.isfinite(truncate(row, params))[0].nonzero().flatten().tolist() == kept


def test_logits_far_from_zero_are_weighed_relative_to_their_largest():
    # beyond about +-600 exp(logit) itself would overflow, or lose the largest mass to subnormals:
    # the blocks are weighed again relative to the largest logit
    params = SamplingParams(1.0, 1.0, 0)
    for offset in (-5000.0, -700.0, 700.0, 5000.0):
        logits = rows_of_logits(4099, 1.0, torch.float64, 4) + offset
        tokens, logp = sample(logits, params, generators(4))
        want, want_logp = full_vocabulary_sample(logits, params, generators(4))
        assert torch.equal(tokens, want) and torch.allclose(logp, want_logp, rtol=0, atol=1e-9), offset
