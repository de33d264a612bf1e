"""Request validation against the protocol schema (arl_trainer/protocol.schema.json): every method
has a schema, requests are checked in their wire form, and a refusal names the field."""
import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("jsonschema")

from helpers import configure_params, make_batch, new_trainer  # noqa: E402

from arl_trainer import requests  # noqa: E402
from arl_trainer.errors import RequestError  # noqa: E402
from arl_trainer.framing import Ragged  # noqa: E402
from arl_trainer.trainer import METHODS  # noqa: E402


def test_every_method_has_a_schema():
    assert set(METHODS) <= set(requests.protocol_schema()["$defs"])


def test_wire_form_is_what_the_framing_writes():
    ids = Ragged.from_sequences([[1, 2], [3]], "int32")
    wire = requests.wire_form({"ids": ids, "groups": np.zeros(2, np.int32), "lr": float("nan"), "n": np.int64(3), "stop": (1, 2)})
    assert wire == {"ids": {"values": {"$array": 0}, "offsets": {"$array": 0}}, "groups": {"$array": 0}, "lr": None, "n": 3, "stop": [1, 2]}


@pytest.fixture(scope="module")
def trained():
    t = new_trainer()
    t.configure(configure_params())
    return t, make_batch(t.state.conf.weights.handle.vocab_size, n=3)


@pytest.mark.parametrize(
    "change, says",
    [
        ({"lr": -1.0}, "lr must be a number > 0, got -1.0"),
        ({"lr": "fast"}, "lr must be a number > 0 or null, got 'fast'"),
        ({"reduction": {"mode": "median"}}, "reduction must be {mode: 'token_mean'} or"),
        ({"reduction": {"mode": "constant"}}, "reduction.constant is missing"),
        ({"kl": {"coef": 0.1, "estimator": "k9", "placement": "loss"}}, "kl.estimator must be one of k1, k2, k3, got 'k9'"),
        ({"microbatches": 0}, "microbatches must be an integer > 0, got 0"),
        ({"groups": [0, 1, 2]}, 'groups must be a bulk int32 array ({"$array": k}), got [0, 1, 2]'),
        ({"critic": {"returns": None, "value_clip": None}}, "critic.old_values is missing"),
    ],
)
def test_a_refused_train_step_names_the_field(trained, change, says):
    t, batch = trained
    with pytest.raises(RequestError) as refused:
        t.train_step({**batch, **change})
    assert refused.value.code == "invalid_request"
    assert says in str(refused.value)


def test_missing_and_misshapen_fields_of_other_methods(trained):
    t, _ = trained
    with pytest.raises(RequestError, match="'runtime' is missing"):
        t.handshake({"protocol": "arl-trainer", "version": 1})
    with pytest.raises(RequestError, match=r"messages\[0\].role must be one of system, user, tool, assistant"):
        t.encode({"messages": [{"role": "bot", "content": "hi"}], "add_generation_prompt": False})
    params = configure_params()
    params["algorithm"]["kl"] = {"coef": 0.1, "estimator": "k3", "placement": "loss", "reference": {"kind": "refresh"}}
    with pytest.raises(RequestError, match="algorithm.kl.reference.every is missing"):
        t.configure(params)
    with pytest.raises(RequestError, match="params must be an object"):
        t.save([])
