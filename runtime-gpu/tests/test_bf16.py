"""bf16 autocast paths: on CUDA (the default precision there) and, where torch supports it, CPU
autocast, which runs the same code (casts around RMSNorm, rotary, attention, the heads)."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

from helpers import configure_params, make_batch, tiny_model  # noqa: E402

from arl_trainer.distributed import Dist  # noqa: E402
from arl_trainer.framing import Ragged  # noqa: E402
from arl_trainer.trainer import Trainer  # noqa: E402

DEVICES = [pytest.param("cpu", id="cpu"), pytest.param("cuda", id="cuda", marks=pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA"))]


def bf16_trainer(device):
    t = Trainer(Dist(device=torch.device(device)))
    t.configure(configure_params(tiny_model("float32", hidden=64), precision="bf16", critic=True))
    return t


@pytest.mark.parametrize("device", DEVICES)
def test_bf16_generate_logprobs_match_recomputed(device):
    t = bf16_trainer(device)
    assert t.state.conf.autocast
    pr = Ragged.from_sequences([[6, 7, 8], [9, 10, 11, 12, 13]], "int32")
    s = {"temperature": 0.9, "top_p": 0.9, "top_k": 20}
    g = t.generate({"prompts": pr, "max_new_tokens": 10, **s, "stop_ids": [], "seeds": np.array([1, 2], dtype=np.int32), "policy": "current"})
    full = Ragged.from_sequences([np.r_[pr.row(i), g["ids"].row(i)] for i in range(2)], "int32")
    lp = t.logprobs({"ids": full, "policy": "current", "sampling": s})["logprobs"]
    fp32 = Trainer(Dist(device=torch.device(device)))
    fp32.configure(configure_params(tiny_model("float32", hidden=64), precision="fp32", critic=True))
    lp32 = fp32.logprobs({"ids": full, "policy": "current", "sampling": s})["logprobs"]
    for i in range(2):
        n = len(g["ids"].row(i))
        assert np.max(np.abs(lp.row(i)[-n:] - g["logprobs"].row(i))) < 0.05  # bf16: cache vs full forward
    assert np.max(np.abs(lp.values - lp32.values)) < 0.1  # bf16 vs fp32, same weights


@pytest.mark.parametrize("device", DEVICES)
def test_bf16_train_step_runs(device):
    t = bf16_trainer(device)
    b = make_batch(t.state.conf.weights.handle.vocab_size, seed=3, n=6, critic=True)
    r1 = t.train_step({**b, "microbatches": 2})
    assert r1["grad_norm"] is not None and np.isfinite(r1["loss"]) and r1["value_loss"] >= 0
    assert r1["policy_version"] == 1
    v = t.values({"ids": b["ids"]})["values"]
    assert v.values.dtype == np.float32 and np.all(np.isfinite(v.values))
