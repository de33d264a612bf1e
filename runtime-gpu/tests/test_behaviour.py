"""The behaviour-policy slot of asynchronous rollout (docs/protocol.md, behaviour policy): `snapshot`
freezes the current weights, later train steps leave it alone, `generate`/`logprobs` with policy
"behaviour" read it and report its version, and checkpoints carry it."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

from helpers import configure_params, make_batch, new_trainer, tiny_model  # noqa: E402

from arl_trainer.errors import RequestError  # noqa: E402
from arl_trainer.framing import Ragged  # noqa: E402

IDS = [6, 9, 12, 7, 20, 8, 11]


def make(seed=7, behaviour=False):
    t = new_trainer()
    params = configure_params(tiny_model("float64"), seed=seed, lr=5e-2)
    if behaviour:
        params["behaviour_policy"] = True
    t.configure(params)
    return t


def generate(t, policy):
    prompts = Ragged.from_sequences([IDS, IDS[:4]], "int32")
    seeds = np.array([3, 4], dtype=np.int32)
    params = {"prompts": prompts, "max_new_tokens": 6, "temperature": 1.0, "top_p": 1.0, "top_k": 0, "stop_ids": [], "seeds": seeds, "policy": policy}
    return t.generate(params)


def logprobs(t, policy):
    return t.logprobs({"ids": Ragged.from_sequences([IDS], "int32"), "policy": policy, "sampling": None})["logprobs"].values.copy()


def test_handshake_announces_the_capability():
    t = new_trainer()
    caps = t.handshake({"protocol": "arl-trainer", "version": 1, "runtime": {"name": "arl", "version": "test"}})["capabilities"]
    assert caps["behaviour_policy"] is True and "snapshot" in caps["methods"]


@pytest.mark.parametrize("allocated", [False, True], ids=["lazy", "at-configure"])
def test_snapshot_freezes_the_weights_that_sample(allocated):
    t = make(behaviour=allocated)
    with pytest.raises(RequestError, match="snapshot first"):
        generate(t, "behaviour")
    before_gen = generate(t, "current")
    before_lp = logprobs(t, "current")
    assert t.snapshot({}) == {"policy_version": 0}
    batch = make_batch(t.state.conf.weights.handle.vocab_size, seed=1, n=4, ref=False)
    batch["kl"] = {"coef": 0.0, "estimator": "k3", "placement": "loss"}
    t.train_step(batch)
    t.train_step(batch)
    assert t.state.policy_version == 2
    # the current policy moved, the behaviour slot did not
    assert not np.array_equal(logprobs(t, "current"), before_lp)
    assert np.array_equal(logprobs(t, "behaviour"), before_lp)
    frozen = generate(t, "behaviour")
    assert frozen["policy_version"] == 0 and generate(t, "current")["policy_version"] == 2
    assert np.array_equal(frozen["ids"].values, before_gen["ids"].values)
    assert np.array_equal(frozen["logprobs"].values, before_gen["logprobs"].values)
    # a new snapshot takes the new weights
    assert t.snapshot({}) == {"policy_version": 2}
    assert np.array_equal(logprobs(t, "behaviour"), logprobs(t, "current"))


def test_checkpoints_carry_the_behaviour_slot(tmp_path):
    a = make()
    batch = make_batch(a.state.conf.weights.handle.vocab_size, seed=2, n=4, ref=False)
    batch["kl"] = {"coef": 0.0, "estimator": "k3", "placement": "loss"}
    a.snapshot({})
    a.train_step(batch)
    a.save({"path": str(tmp_path / "with")})
    assert (tmp_path / "with" / "behaviour.safetensors").exists()
    b = make(seed=99)
    b.load({"path": str(tmp_path / "with")})
    assert np.array_equal(logprobs(b, "behaviour"), logprobs(a, "behaviour"))
    assert generate(b, "behaviour")["policy_version"] == 0
    # a checkpoint without a snapshot leaves the slot empty
    c = make()
    c.save({"path": str(tmp_path / "without")})
    assert not (tmp_path / "without" / "behaviour.safetensors").exists()
    b.load({"path": str(tmp_path / "without")})
    with pytest.raises(RequestError, match="snapshot first"):
        logprobs(b, "behaviour")
