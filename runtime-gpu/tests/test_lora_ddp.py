"""policy.lora under data parallelism (two gloo ranks on CPU, torch.multiprocessing.spawn): the
adapters' gradients are averaged like any trainable parameter, so two ranks take the same steps
as one rank, and the frozen base weights stay bit-identical on both."""
import os
import pickle

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("peft")
import torch.distributed as tdist  # noqa: E402
from helpers import run_ranks  # noqa: E402

pytestmark = pytest.mark.skipif(not (tdist.is_available() and tdist.is_gloo_available()), reason="torch.distributed with gloo is not available")

LORA = {"rank": 4, "alpha": 8, "dropout": 0.0, "targets": ["q_proj", "v_proj", "o_proj", "down_proj"]}


def _trainer(dist=None):
    from helpers import configure_params, tiny_model

    from arl_trainer.trainer import Trainer

    t = Trainer(dist)
    kl = {"coef": 0.05, "estimator": "k3", "placement": "loss", "reference": {"kind": "initial"}}
    p = configure_params(tiny_model("float64"), kl=kl, lr=1e-2)
    p["policy"]["lora"] = LORA
    t.configure(p)
    return t


def _steps(t):
    from helpers import make_batch

    vocab = t.state.conf.weights.handle.vocab_size
    results = [t.train_step({**make_batch(vocab, seed=s, n=7, ref=False), "microbatches": 2}) for s in (31, 32)]
    params = {k: v.detach().numpy().copy() for k, v in t.state.conf.weights.handle.module.state_dict().items()}
    return {"results": results, "params": params}


def _worker(rank, world, init_file, out_dir):
    torch.set_num_threads(1)
    from arl_trainer.distributed import init_for_test

    t = _trainer(init_for_test(rank, world, f"file://{init_file}"))
    with open(os.path.join(out_dir, f"rank{rank}.pkl"), "wb") as f:
        pickle.dump(_steps(t), f)
    tdist.barrier()
    tdist.destroy_process_group()


def test_two_ranks_train_the_adapters_like_one_rank():
    ranks = run_ranks(_worker, 2, "arl-lora-dist-")
    single_trainer = _trainer()
    initial = {k: v.detach().numpy().copy() for k, v in single_trainer.state.conf.weights.handle.module.state_dict().items()}
    single = _steps(single_trainer)
    for rank in ranks:
        for a, b in zip(rank["results"], single["results"], strict=True):
            for key in ("loss", "policy_loss", "kl", "tokens"):
                assert abs(a[key] - b[key]) < 1e-9 * max(1.0, abs(b[key])), key
        for name, value in single["params"].items():
            assert np.max(np.abs(rank["params"][name] - value)) < 1e-9, name
            if "lora_" not in name:
                assert np.array_equal(rank["params"][name], initial[name]), name
    assert any("lora_B" in n and not np.array_equal(v, initial[n]) for n, v in single["params"].items())
