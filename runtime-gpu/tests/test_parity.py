"""The plain model (qwen2.py, the `builtin:` models) against transformers' Qwen2ForCausalLM with
the same weights, in fp32: whole sequences, padded batches called the way score.py (right
padding, no mask) and generate.py (left padding, attention mask, position ids, KV cache) call
them, and the trainer's requests on either model."""
import copy

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from helpers import configure_params, grads, make_batch, new_trainer, tiny_model  # noqa: E402

from arl_trainer.batching import padded  # noqa: E402
from arl_trainer.framing import Ragged  # noqa: E402
from arl_trainer.qwen2 import Qwen2Config, build_plain  # noqa: E402

ATOL = 1e-5
VOCAB = 61


def pair(attn: str, tie: bool = True, seed: int = 3):
    """(plain model, transformers Qwen2ForCausalLM) holding the same random weights."""
    shape = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2)
    cfg = Qwen2Config(vocab_size=VOCAB, tie_word_embeddings=tie, **shape)
    plain = build_plain(cfg, seed).eval()
    fields = {k: v for k, v in cfg.to_hf_dict().items() if k not in ("architectures", "dtype")}
    hf_cfg = transformers.Qwen2Config(**fields, attn_implementation=attn)
    hf = transformers.Qwen2ForCausalLM(hf_cfg).eval()
    hf.load_state_dict(plain.state_dict(), strict=True)
    return plain, hf


def rows(seed: int, lengths: list[int]) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.integers(0, VOCAB, size=n) for n in lengths]


@pytest.mark.parametrize("attn", ["sdpa", "eager"])
@pytest.mark.parametrize("tie", [True, False], ids=["tied", "untied"])
def test_whole_sequences_give_the_same_logits(attn, tie):
    plain, hf = pair(attn, tie)
    ids = torch.as_tensor(np.stack(rows(1, [12, 12, 12])))
    with torch.no_grad():
        ours, _ = plain(ids)
        theirs = hf(input_ids=ids).logits
    assert (ours - theirs).abs().max().item() < ATOL


@pytest.mark.parametrize("attn", ["sdpa", "eager"])
def test_right_padded_batches_as_scoring_calls_them(attn):
    plain, hf = pair(attn)
    seqs = rows(2, [11, 4, 7])
    x, _ = padded(seqs, 0, torch.device("cpu"))
    with torch.no_grad():
        ours, _ = plain(x)  # score.py: no mask, causal attention, padding after each row
        for r, seq in enumerate(seqs):
            alone = hf(input_ids=torch.as_tensor(seq)[None]).logits[0]
            assert (ours[r, : len(seq)] - alone).abs().max().item() < ATOL


@pytest.mark.parametrize("attn", ["sdpa", "eager"])
def test_left_padded_prefill_and_cached_decoding_as_generate_calls_them(attn):
    plain, hf = pair(attn)
    seqs = rows(3, [9, 3, 6])
    x, T = padded(seqs, 0, torch.device("cpu"), left=True)
    mask = torch.zeros(len(seqs), T, dtype=torch.long)
    for r, seq in enumerate(seqs):
        mask[r, T - len(seq) :] = 1
    pos = (mask.cumsum(-1) - 1).clamp(min=0)
    steps = torch.as_tensor(np.stack(rows(4, [5, 5, 5])))
    with torch.no_grad():
        ours, past = plain(x, mask, pos, None, True)
        out = hf(input_ids=x, attention_mask=mask, position_ids=pos, use_cache=True)
        assert (ours - out.logits)[mask.bool()].abs().max().item() < ATOL
        cache, next_pos = out.cache, pos[:, -1:] + 1
        for k in range(steps.shape[1]):
            mask = torch.cat((mask, torch.ones(len(seqs), 1, dtype=mask.dtype)), dim=1)
            feed = steps[:, k : k + 1]
            ours, past = plain(feed, mask, next_pos, past, True)
            out = hf(input_ids=feed, attention_mask=mask, position_ids=next_pos, cache=cache, use_cache=True)
            cache, next_pos = out.cache, next_pos + 1
            assert (ours - out.logits).abs().max().item() < ATOL
        # and the cached decoding equals a fresh forward over each whole (unpadded) row
        for r, seq in enumerate(seqs):
            whole = torch.as_tensor(np.r_[seq, steps[r].numpy()])[None]
            assert (plain(whole)[0][0, -1] - ours[r, -1]).abs().max().item() < ATOL


def test_the_trainer_gives_the_same_answers_on_either_model(tmp_path):
    """A builtin model, and the same weights saved and configured through AutoModelForCausalLM:
    equal log-probs, samples and gradients through the trainer's requests."""
    plain = new_trainer()
    plain.configure(configure_params(tiny_model("float32")))
    plain.save({"path": str(tmp_path / "ck")})
    hf = new_trainer()
    params = configure_params(str(tmp_path / "ck"))
    params["options"] = {"attn_implementation": "eager", "precision": "fp32"}
    hf.configure(params)
    assert hf.state.conf.weights.handle.kind == "hf"

    ids = Ragged.from_sequences([[6, 7, 8, 9, 10, 11], [12, 13, 14]], "int32")
    a = plain.logprobs({"ids": ids, "policy": "current", "sampling": None})["logprobs"].values
    b = hf.logprobs({"ids": ids, "policy": "current", "sampling": None})["logprobs"].values
    assert np.max(np.abs(a - b)) < ATOL

    s = {"temperature": 0.8, "top_p": 0.9, "top_k": 7, "stop_ids": [], "seeds": np.array([4, 5], dtype=np.int32), "policy": "current", "max_new_tokens": 6}
    ga, gb = plain.generate(copy.deepcopy(s) | {"prompts": ids}), hf.generate(copy.deepcopy(s) | {"prompts": ids})
    assert np.array_equal(ga["ids"].values, gb["ids"].values)
    assert np.max(np.abs(ga["logprobs"].values - gb["logprobs"].values)) < ATOL

    batch = make_batch(plain.state.conf.weights.handle.vocab_size, seed=3, n=4)
    batch["kl"] = {"coef": 0.0, "estimator": "k3", "placement": "loss"}
    ra, rb = plain.compute_gradients(batch), hf.compute_gradients(batch)
    assert abs(ra["loss"] - rb["loss"]) < ATOL
    ga_, gb_ = grads(plain.state.conf.weights.policy), grads(hf.state.conf.weights.policy)
    assert ga_.keys() == gb_.keys()  # the same transformers parameter names
    assert max(float(np.max(np.abs(ga_[k] - gb_[k]))) for k in ga_) < ATOL
