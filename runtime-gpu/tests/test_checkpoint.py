"""save/load: atomic directories, safetensors files readable by an independent reader (and by the
safetensors / transformers libraries when installed), exact resume."""
import json
import os
import struct

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from helpers import configure_params, make_batch, new_trainer, tiny_model  # noqa: E402

from arl_trainer.framing import Ragged  # noqa: E402


def read_safetensors(path):
    """A minimal reader written from the format description, independent of the trainer's."""
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + n].decode("utf-8"))
    data = raw[8 + n :]
    dtypes = {"F32": "<f4", "F64": "<f8", "F16": "<f2", "I32": "<i4", "I64": "<i8", "U8": "u1"}
    tensors, spans = {}, []
    for name, info in header.items():
        if name == "__metadata__":
            assert all(isinstance(k, str) and isinstance(v, str) for k, v in info.items())
            continue
        assert set(info) == {"dtype", "shape", "data_offsets"}
        begin, end = info["data_offsets"]
        dt = np.dtype(dtypes[info["dtype"]])
        assert end - begin == int(np.prod(info["shape"])) * dt.itemsize
        spans.append((begin, end))
        tensors[name] = np.frombuffer(data[begin:end], dtype=dt).reshape(info["shape"])
    spans.sort()
    assert spans[0][0] == 0 and spans[-1][1] == len(data)  # no gaps, nothing trailing
    assert all(a[1] == b[0] for a, b in zip(spans, spans[1:], strict=False))
    return header, tensors


def make(seed=7, tie=True, critic=True, dtype="float32"):
    t = new_trainer()
    kl = {"coef": 0.05, "estimator": "k3", "placement": "loss", "reference": {"kind": "initial"}}
    t.configure(configure_params(tiny_model(dtype, tie=tie), seed=seed, critic=critic, kl=kl))
    return t


def logits_of(t, ids):
    with torch.no_grad():
        dev = next(t.state.conf.weights.handle.module.parameters()).device
        return t.state.conf.weights.handle.module(torch.as_tensor(ids, dtype=torch.long, device=dev)[None])[0][0].double().cpu().numpy()


IDS = [6, 9, 12, 7, 20, 8, 11]
# the tensors of one decoder layer, under transformers' Qwen2 names
LAYER_TENSORS = (
    "self_attn.q_proj.weight",
    "self_attn.q_proj.bias",
    "self_attn.k_proj.weight",
    "self_attn.k_proj.bias",
    "self_attn.v_proj.weight",
    "self_attn.v_proj.bias",
    "self_attn.o_proj.weight",
    "mlp.gate_proj.weight",
    "mlp.up_proj.weight",
    "mlp.down_proj.weight",
    "input_layernorm.weight",
    "post_attention_layernorm.weight",
)


@pytest.mark.parametrize("tie", [True, False], ids=["tied", "untied"])
def test_save_writes_standard_safetensors(tmp_path, tie):
    t = make(tie=tie)
    t.train_step(make_batch(t.state.conf.weights.handle.vocab_size, seed=1, n=3, critic=True, ref=False))  # KL from the trainer's reference: taken, so saved
    res = t.save({"path": str(tmp_path / "ck")})
    files = set(res["files"])
    assert {"model.safetensors", "config.json", "trainer.json", "optimizer.pt", "vocab.json", "critic.safetensors", "reference.safetensors"} <= files
    assert sorted(os.listdir(tmp_path)) == ["ck"]  # no temporary directories left
    header, tensors = read_safetensors(str(tmp_path / "ck" / "model.safetensors"))
    L = t.state.conf.weights.handle.module.config.num_hidden_layers
    expected = {"model.embed_tokens.weight", "model.norm.weight"}
    for i in range(L):
        p = f"model.layers.{i}."
        expected |= {p + n for n in LAYER_TENSORS}
    if not tie:
        expected.add("lm_head.weight")
    assert set(tensors) == expected
    assert header["__metadata__"]["format"] == "pt"
    own = t.state.conf.weights.handle.module.state_dict()
    for k, v in tensors.items():
        assert v.dtype == np.float32 and np.array_equal(v, own[k].cpu().numpy()), k
    cfg = json.loads((tmp_path / "ck" / "config.json").read_text())
    assert cfg["model_type"] == "qwen2" and cfg["architectures"] == ["Qwen2ForCausalLM"] and cfg["tie_word_embeddings"] == tie
    meta = json.loads((tmp_path / "ck" / "trainer.json").read_text())
    assert meta["policy_version"] == 1 and meta["format"] == "arl-trainer-checkpoint"


def test_load_round_trip_and_exact_resume(tmp_path):
    batch = make_batch(36, seed=2, n=4, critic=True)
    a = make(seed=7)
    a.train_step(batch)
    a.save({"path": str(tmp_path / "ck")})
    before = logits_of(a, IDS)
    a.train_step(batch)
    after_a = {k: v.clone() for k, v in a.state.conf.weights.handle.module.state_dict().items()}
    critic_a = {k: v.clone() for k, v in a.state.conf.weights.critic.state_dict().items()}

    b = make(seed=99)  # different initial weights
    assert not np.array_equal(logits_of(b, IDS), before)
    res = b.load({"path": str(tmp_path / "ck")})
    assert res["policy_version"] == 1
    assert np.array_equal(logits_of(b, IDS), before)  # identical logits after load
    b.train_step(batch)  # optimizer state restored: the same next step
    for k, v in b.state.conf.weights.handle.module.state_dict().items():
        assert torch.equal(v, after_a[k]), k
    for k, v in b.state.conf.weights.critic.state_dict().items():
        assert torch.equal(v, critic_a[k]), k
    # the reference came back too
    ra = a.logprobs({"ids": Ragged.from_sequences([IDS], "int32"), "policy": "reference", "sampling": None})["logprobs"].values
    rb = b.logprobs({"ids": Ragged.from_sequences([IDS], "int32"), "policy": "reference", "sampling": None})["logprobs"].values
    assert np.array_equal(ra, rb)


def test_save_replaces_an_existing_checkpoint_atomically(tmp_path):
    t = make()
    path = str(tmp_path / "ck")
    t.save({"path": path})
    t.train_step(make_batch(t.state.conf.weights.handle.vocab_size, seed=3, n=3, critic=True))
    t.save({"path": path})
    assert sorted(os.listdir(tmp_path)) == ["ck"]
    assert json.loads(open(os.path.join(path, "trainer.json")).read())["policy_version"] == 1


def test_a_checkpoint_directory_is_a_model(tmp_path):
    t = make()
    t.train_step(make_batch(t.state.conf.weights.handle.vocab_size, seed=4, n=3, critic=True))
    t.save({"path": str(tmp_path / "ck")})
    u = new_trainer()
    params = configure_params(str(tmp_path / "ck"))
    params["vocabulary"] = None  # the directory carries its vocabulary
    params["options"] = {"prefer_plain": True}
    conf = u.configure(params)
    assert conf["tokenizer"]["vocab_size"] == t.state.conf.tokenizer.vocab_size
    assert np.array_equal(logits_of(u, IDS), logits_of(t, IDS))


def test_load_refuses_a_mismatched_model(tmp_path):
    from arl_trainer.errors import RequestError

    t = make()
    t.save({"path": str(tmp_path / "ck")})
    other = new_trainer()
    other.configure(configure_params(tiny_model("float32", hidden=16)))
    with pytest.raises(RequestError):
        other.load({"path": str(tmp_path / "ck")})


def _lengths(n):
    return struct.pack("<Q", n)


# 2^80 elements: a product in 64-bit integers wraps to 0 and matches the empty data_offsets
OVERFLOWING_SHAPE = {"x": {"dtype": "F32", "shape": [2**40, 2**40], "data_offsets": [0, 0]}}


def _header(header):
    raw = json.dumps(header).encode()
    return _lengths(len(raw)) + raw


@pytest.mark.parametrize(
    ("name", "damage", "message"),
    [
        ("model.safetensors", lambda p: os.symlink("/dev/zero", p), "model.safetensors is not a regular file"),
        ("model.safetensors", lambda p: os.mkfifo(p), "model.safetensors is not a regular file"),
        ("trainer.json", lambda p: os.symlink("/dev/zero", p), "trainer.json is not a regular file"),
        ("optimizer.pt", lambda p: os.symlink("/dev/zero", p), "optimizer.pt is not a regular file"),
        ("model.safetensors", lambda p: open(p, "wb").write(b"garbage"), "too short for a safetensors file"),
        ("model.safetensors", lambda p: open(p, "wb").write(_lengths(2**62) + b"{}"), "header length 4611686018427387904 is impossible"),
        ("model.safetensors", lambda p: open(p, "wb").write(_header(OVERFLOWING_SHAPE)), "inconsistent data_offsets"),
        ("optimizer.pt", lambda p: open(p, "wb").write(b"garbage"), "is not the optimizer state this trainer saves"),
    ],
)
def test_load_refuses_damaged_files_naming_them(tmp_path, name, damage, message):
    """A device, a FIFO, garbage or sizes that lie: invalid_request naming the file, read no
    further than the file's real size, and the weights held stay."""
    from arl_trainer.errors import RequestError

    t = make()
    path = str(tmp_path / "ck")
    t.save({"path": path})
    os.remove(os.path.join(path, name))
    damage(os.path.join(path, name))
    before = logits_of(t, IDS)
    with pytest.raises(RequestError) as refused:
        t.load({"path": path})
    assert refused.value.code == "invalid_request"
    assert message in str(refused.value) and os.path.join(path, name) in str(refused.value)
    assert np.array_equal(logits_of(t, IDS), before)


def test_the_safetensors_library_reads_it(tmp_path):
    st = pytest.importorskip("safetensors.torch", reason="the safetensors package is not installed")
    t = make()
    t.save({"path": str(tmp_path / "ck")})
    loaded = st.load_file(str(tmp_path / "ck" / "model.safetensors"))
    own = t.state.conf.weights.handle.module.state_dict()
    for k, v in loaded.items():
        assert torch.equal(v, own[k].cpu())


def test_transformers_loads_the_checkpoint(tmp_path):
    transformers = pytest.importorskip("transformers", reason="transformers is not installed (the GPU machine has it)")
    t = make(critic=False)
    t.save({"path": str(tmp_path / "ck")})
    hf = transformers.Qwen2ForCausalLM.from_pretrained(str(tmp_path / "ck"), dtype=torch.float32, attn_implementation="eager").eval()
    with torch.no_grad():
        ours = logits_of(t, IDS)
        theirs = hf(torch.tensor([IDS])).logits[0].double().numpy()  # transformers on CPU
    assert np.max(np.abs(ours - theirs)) < 1e-4
    # and the trainer's transformers path (AutoModelForCausalLM) on the same directory
    u = new_trainer()
    params = configure_params(str(tmp_path / "ck"))
    params["options"] = {"attn_implementation": "eager"}
    u.configure(params)
    lp_hf = u.logprobs({"ids": Ragged.from_sequences([IDS], "int32"), "policy": "current", "sampling": None})["logprobs"].values
    lp = t.logprobs({"ids": Ragged.from_sequences([IDS], "int32"), "policy": "current", "sampling": None})["logprobs"].values
    assert np.max(np.abs(lp_hf - lp)) < 1e-4
