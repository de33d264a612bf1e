"""Hugging Face models through the trainer: random Qwen2, Qwen3 and Llama models with their real
tokenizers (tests/hf_models.py) served by transformers, driven over the protocol like the
runtime drives `python -m arl_trainer`; the dtype they load in; and the errors of model specs
that do not name a loadable model."""
import json
import os

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from helpers import ProtocolClient, configure_params, make_batch, new_trainer, trainer_env  # noqa: E402
from hf_models import make_model_dir  # noqa: E402

from arl_trainer.errors import RequestError  # noqa: E402
from arl_trainer.framing import Ragged  # noqa: E402

HELLO = {"protocol": "arl-trainer", "version": 1, "runtime": {"name": "arl", "version": "test"}}
# architecture -> the tokenizer family its test model carries
MODELS = {"qwen2": "qwen3", "qwen3": "qwen3", "llama": "llama3_1"}


@pytest.fixture(scope="module")
def model_dirs(tmp_path_factory):
    root = tmp_path_factory.mktemp("hf-models")
    return {arch: str(make_model_dir(root / arch, arch=arch, tokenizer=tok, seed=1)) for arch, tok in MODELS.items()}


def offline_env(tmp_path) -> dict[str, str]:
    """The trainer's environment with the Hub unreachable and an empty cache."""
    return {**trainer_env(), "HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf-home")}


def model_params(model: str, dtype: str | None = None) -> dict:
    params = configure_params(model)
    params["vocabulary"] = None  # the model directory carries its tokenizer
    if dtype is not None:
        params["policy"]["dtype"] = dtype
    return params


def direct_logprobs(directory: str, seqs: list[np.ndarray]) -> list[np.ndarray]:
    """log p(ids[k] | ids[:k]) from a plain transformers forward, one sequence at a time."""
    model = transformers.AutoModelForCausalLM.from_pretrained(directory, dtype=torch.float32).eval()
    out = []
    with torch.no_grad():
        for seq in seqs:
            ids = torch.as_tensor(seq, dtype=torch.long)[None]
            lp = torch.log_softmax(model(input_ids=ids).logits[0].double(), -1)
            out.append(np.r_[0.0, lp[:-1].gather(-1, ids[0, 1:, None])[:, 0].numpy()])
    return out


@pytest.mark.parametrize("arch", sorted(MODELS))
def test_configure_generate_score_and_train_over_the_protocol(arch, model_dirs, tmp_path):
    directory = model_dirs[arch]
    c = ProtocolClient(env=offline_env(tmp_path))
    try:
        c.call("handshake", HELLO)
        conf = c.call("configure", model_params(directory))
        tok = conf["tokenizer"]
        hf_tok = transformers.AutoTokenizer.from_pretrained(directory)
        assert tok["vocab_size"] == len(hf_tok) and tok["eos_id"] == hf_tok.eos_token_id
        assert conf["model"]["parameters"] == sum(p.numel() for p in transformers.AutoModelForCausalLM.from_pretrained(directory).parameters())

        enc = c.call("encode", {"messages": [{"role": "user", "content": "Name a colour."}], "add_generation_prompt": True})
        prompt = Ragged.from_message(enc["ids"]).values
        prompts = Ragged.from_sequences([prompt, prompt[-5:]], "int32")
        gen = {"prompts": prompts, "max_new_tokens": 6, "temperature": 1.0, "top_p": 1.0, "top_k": 0, "stop_ids": [], "policy": "current"}
        seeds = np.array([11, 12], dtype=np.int32)
        first = c.call("generate", {**gen, "seeds": seeds})
        again = c.call("generate", {**gen, "seeds": seeds})
        other = c.call("generate", {**gen, "seeds": seeds + 100})
        ids = Ragged.from_message(first["ids"])
        assert np.array_equal(ids.values, Ragged.from_message(again["ids"]).values)  # reproducible for a seed
        assert np.array_equal(Ragged.from_message(first["logprobs"]).values, Ragged.from_message(again["logprobs"]).values)
        assert not np.array_equal(ids.values, Ragged.from_message(other["ids"]).values)
        assert first["finish"] == ["length", "length"] and len(ids.values) == 12

        full = [np.r_[prompts.row(i), ids.row(i)] for i in range(2)]
        lp = Ragged.from_message(c.call("logprobs", {"ids": Ragged.from_sequences(full, "int32"), "policy": "current", "sampling": None})["logprobs"])
        for i, want in enumerate(direct_logprobs(directory, full)):
            assert np.max(np.abs(lp.row(i) - want)) < 1e-5
            # what generate reported for its samples is what scoring gives them
            assert np.max(np.abs(lp.row(i)[-6:] - Ragged.from_message(first["logprobs"]).row(i))) < 1e-4

        batch = make_batch(tok["vocab_size"], seed=5, n=4)
        batch["kl"] = {"coef": 0.0, "estimator": "k3", "placement": "loss"}
        step = c.call("train_step", batch)
        assert np.isfinite(step["loss"]) and step["policy_version"] == 1
        after = Ragged.from_message(c.call("logprobs", {"ids": Ragged.from_sequences(full, "int32"), "policy": "current", "sampling": None})["logprobs"])
        assert np.max(np.abs(after.values - lp.values)) > 1e-6  # the weights moved
        c.call("shutdown", {})
    finally:
        c.close()


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
def test_the_weights_load_in_policy_dtype_exactly(dtype, model_dirs):
    from safetensors.torch import load_file

    directory = model_dirs["qwen3"]
    t = new_trainer()
    t.configure(model_params(directory, dtype))
    module = t.state.conf.weights.handle.module
    assert t.state.conf.dtype == getattr(torch, dtype)
    own = module.state_dict()
    for name, tensor in load_file(os.path.join(directory, "model.safetensors")).items():
        assert own[name].dtype == getattr(torch, dtype) and torch.equal(own[name], tensor.to(own[name].dtype)), name


def test_absent_dtype_is_float32_and_a_builtin_spec_s_own_dtype_wins():
    t = new_trainer()
    params = configure_params("builtin:tiny?hidden=16&layers=1&heads=2&kv_heads=1&intermediate=32")
    t.configure(params)
    assert t.state.conf.dtype == torch.float32
    params["policy"]["dtype"] = "bfloat16"
    t.configure(params)
    assert t.state.conf.dtype == torch.bfloat16
    params["policy"]["model"] += "&dtype=float64"
    t.configure(params)
    assert t.state.conf.dtype == torch.float64
    params["policy"]["dtype"] = "float64"
    with pytest.raises(RequestError) as e:
        t.configure(params)
    assert e.value.code == "invalid_request" and "policy.dtype must be one of float32, bfloat16, float16" in str(e.value)


def refused(params: dict) -> RequestError:
    with pytest.raises(RequestError) as e:
        new_trainer().configure(params)
    return e.value


def test_a_directory_that_is_not_a_model_is_an_invalid_request(tmp_path, model_dirs):
    empty = tmp_path / "empty"
    empty.mkdir()
    e = refused(model_params(str(empty)))
    assert e.code == "invalid_request" and str(empty) in str(e) and "config.json" in str(e)
    e = refused(model_params(str(tmp_path / "missing" / "model")))
    assert e.code == "invalid_request" and "no such directory" in str(e)
    no_weights = tmp_path / "no-weights"
    no_weights.mkdir()
    (no_weights / "config.json").write_text(open(os.path.join(model_dirs["qwen3"], "config.json")).read())
    e = refused(model_params(str(no_weights)))
    assert e.code == "invalid_request" and "no weights" in str(e)
    no_tokenizer = tmp_path / "no-tokenizer"
    no_tokenizer.mkdir()
    for name in ("config.json", "model.safetensors"):
        os.symlink(os.path.join(model_dirs["qwen3"], name), no_tokenizer / name)
    e = refused(model_params(str(no_tokenizer)))
    assert e.code == "invalid_request" and "tokenizer" in str(e) and "\n" not in str(e)


@pytest.mark.parametrize("model_type", ["no-such-architecture", "t5"])
def test_an_architecture_transformers_cannot_load_as_a_causal_lm_is_unsupported(tmp_path, model_type):
    d = tmp_path / "model"
    d.mkdir()
    (d / "config.json").write_text(json.dumps({"model_type": model_type, "architectures": ["Whatever"]}))
    (d / "model.safetensors").write_bytes(b"")
    e = refused(model_params(str(d)))
    assert e.code == "unsupported" and "policy.model" in str(e) and "\n" not in str(e)


def test_an_hf_name_outside_the_offline_cache_is_a_one_line_error(tmp_path):
    c = ProtocolClient(env=offline_env(tmp_path))
    try:
        c.call("handshake", HELLO)
        msg = c.request("configure", model_params("hf:arl-test/not-downloaded"))
        err = msg["error"]
        assert err["code"] == "invalid_request" and "\n" not in err["message"]
        assert "hf:arl-test/not-downloaded" in err["message"] and "hf download arl-test/not-downloaded" in err["message"]
        assert "local model directory" in err["message"]
        assert c.request("configure", model_params("hf:not a repo id"))["error"]["code"] == "invalid_request"
        c.call("shutdown", {})
    finally:
        c.close()


def test_an_hf_name_in_the_local_cache_configures_offline(tmp_path, model_dirs):
    # the Hub cache's layout: models--ORG--NAME/{refs/main, snapshots/REVISION/FILES}
    repo = tmp_path / "hf-home" / "hub" / "models--arl-test--tiny-llama"
    snapshot = repo / "snapshots" / ("0" * 40)
    snapshot.mkdir(parents=True)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("0" * 40)
    for name in os.listdir(model_dirs["llama"]):
        os.symlink(os.path.join(model_dirs["llama"], name), snapshot / name)
    c = ProtocolClient(env=offline_env(tmp_path))
    try:
        c.call("handshake", HELLO)
        conf = c.call("configure", model_params("hf:arl-test/tiny-llama"))
        assert conf["model"]["name"] == "hf:arl-test/tiny-llama"
        assert conf["tokenizer"]["vocab_size"] == len(transformers.AutoTokenizer.from_pretrained(model_dirs["llama"]))
        c.call("shutdown", {})
    finally:
        c.close()
