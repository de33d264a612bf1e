"""The transformers code path (HFHandle) against a stand-in with the transformers calling
convention (base_model(input_ids=..., past_key_values=..., use_cache=...) -> outputs with
[0] and .past_key_values; get_output_embeddings()), wrapping the plain model: the trainer must
give the same log-probs, samples and gradients through either handle. The real library is tested
in test_checkpoint.py::test_transformers_loads_the_checkpoint (skipped without transformers)."""
import copy

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import torch.nn as nn  # noqa: E402
from helpers import configure_params, grads, make_batch, new_trainer, tiny_model  # noqa: E402

from arl_trainer.framing import Ragged  # noqa: E402
from arl_trainer.model import HFHandle, PolicyForward  # noqa: E402


class _Out(tuple):
    past_key_values = None


class _Base(nn.Module):
    def __init__(self, model):
        super().__init__()
        self.inner = model

    def forward(self, input_ids=None, attention_mask=None, position_ids=None, past_key_values=None, use_cache=False):
        h, past = self.inner(input_ids, attention_mask, position_ids, past_key_values, use_cache)
        out = _Out((h,))
        out.past_key_values = past
        return out


class _Config:
    def __init__(self, cfg):
        self.__dict__.update(vars(cfg))

    def to_dict(self):
        return dict(self.__dict__)


class FakeHFLM(nn.Module):
    def __init__(self, plain):
        super().__init__()
        self.model = _Base(plain.model)
        self.lm_head = plain.lm_head
        self.config = _Config(plain.config)

    @property
    def base_model(self):
        return self.model

    def get_output_embeddings(self):
        return self.lm_head


def test_hf_handle_matches_the_plain_handle():
    t = new_trainer()
    t.configure(configure_params(tiny_model("float64")))
    hf_t = new_trainer()
    hf_t.configure(configure_params(tiny_model("float64")))
    fake = FakeHFLM(copy.deepcopy(t.state.conf.weights.handle.module))
    handle = HFHandle(fake, "hf:fake/model")
    hf_t.state.conf.weights.handle = handle
    hf_t.state.conf.weights.policy = PolicyForward(handle)
    hf_t.state.conf.weights.policy_train = hf_t.state.conf.weights.policy
    hf_t.state.conf.optimizers.policy = torch.optim.AdamW(hf_t.state.conf.weights.policy.parameters(), lr=1e-3)

    ids = Ragged.from_sequences([[6, 7, 8, 9, 10], [11, 12, 13]], "int32")
    a = t.logprobs({"ids": ids, "policy": "current", "sampling": None})["logprobs"].values
    b = hf_t.logprobs({"ids": ids, "policy": "current", "sampling": None})["logprobs"].values
    assert np.max(np.abs(a - b)) < 1e-12

    s = {"temperature": 0.8, "top_p": 0.9, "top_k": 7, "stop_ids": [], "seeds": np.array([4, 5], dtype=np.int32), "policy": "current", "max_new_tokens": 6}
    ga = t.generate({"prompts": ids, **s})
    gb = hf_t.generate({"prompts": ids, **s})
    assert np.array_equal(ga["ids"].values, gb["ids"].values)
    assert np.max(np.abs(ga["logprobs"].values - gb["logprobs"].values)) < 1e-9

    batch = make_batch(t.state.conf.weights.handle.vocab_size, seed=3, n=4)
    batch["kl"] = {"coef": 0.0, "estimator": "k3", "placement": "loss"}
    ra = t.compute_gradients(batch)
    rb = hf_t.compute_gradients(batch)
    assert abs(ra["loss"] - rb["loss"]) < 1e-12
    ga_, gb_ = grads(t.state.conf.weights.policy), grads(hf_t.state.conf.weights.policy)
    # parameter names differ by the wrapper (lm.model.X vs lm.model.inner.X): compare in order
    assert max(float(np.max(np.abs(x - y))) for x, y in zip(ga_.values(), gb_.values(), strict=True)) < 1e-12
