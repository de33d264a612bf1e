"""A whole protocol session through `python3 -m arl_trainer` in a subprocess, as the runtime drives it."""
import os

import numpy as np
import pytest

pytest.importorskip("torch")

from helpers import ProtocolClient, configure_params, tiny_model  # noqa: E402

from arl_trainer.framing import Ragged  # noqa: E402

HELLO = {"protocol": "arl-trainer", "version": 1, "runtime": {"name": "arl", "version": "test"}}


def test_full_session(tmp_path):
    c = ProtocolClient()
    try:
        first = c.request("encode", {"messages": [], "add_generation_prompt": False})
        assert first["error"]["code"] == "invalid_request"  # handshake first
        wrong = c.request("handshake", {**HELLO, "version": 2})
        assert wrong["error"]["code"] == "unsupported" and "version 1" in wrong["error"]["message"]
        hello = c.call("handshake", HELLO)
        assert hello["protocol"] == "arl-trainer" and hello["version"] == 1
        caps = hello["capabilities"]
        methods = {"handshake", "configure", "encode", "decode", "tokenize", "generate", "logprobs", "values"}
        methods |= {"train_step", "save", "load", "eval_op", "shutdown"}
        assert set(caps["methods"]) >= methods
        assert caps["reductions"] == ["token_mean", "seq_mean_token_mean", "seq_mean_token_sum", "constant", "group_token_mean"]
        assert caps["kl_estimators"] == ["k1", "k2", "k3"] and caps["value_head"] and caps["keep_sampling_mask"]
        assert caps["world_size"] == 1 and caps["device"] == "cpu" and "torch" in hello["versions"]

        assert c.request("generate", {})["error"]["code"] == "invalid_request"  # configure first
        kl = {"coef": 0.1, "estimator": "k3", "placement": "loss", "reference": {"kind": "initial"}}
        conf = c.call("configure", configure_params(tiny_model("float32"), critic=True, kl=kl))
        tok = conf["tokenizer"]
        assert conf["model"]["parameters"] > 0 and conf["policy_version"] == 0
        assert conf["model"]["max_context"] == 32768  # the builtin Qwen2 config's max_position_embeddings
        assert tok["vocab_size"] > 30 and tok["eos_id"] != tok["pad_id"]

        messages = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "the cat sat on a mat"}]
        enc = c.call("encode", {"messages": messages, "add_generation_prompt": True})
        ids = Ragged.from_message(enc["ids"])
        assert len(ids) == 2 and ids.values.dtype == np.int32
        texts = c.call("decode", {"ids": enc["ids"]})["texts"]
        assert "the cat sat on a mat" in texts[1] and texts[1].endswith("assistant")
        plain = Ragged.from_message(c.call("tokenize", {"texts": ["the cat sat", ""]})["ids"])
        assert [c.call("decode", {"ids": Ragged.from_sequences([row], "int32")})["texts"][0] for row in plain.rows()] == ["the cat sat", ""]

        prompt = Ragged.from_sequences([ids.values, ids.values[-6:]], "int32")
        limits = {"max_new_tokens": 6, "temperature": 0.8, "top_p": 0.9, "top_k": 10, "stop_ids": [tok["eos_id"]]}
        gen = c.call("generate", {"prompts": prompt, **limits, "seeds": np.array([1, 2], dtype=np.int32), "policy": "current"})
        gids, glp = Ragged.from_message(gen["ids"]), Ragged.from_message(gen["logprobs"])
        assert len(gids) == 2 and np.array_equal(gids.offsets, glp.offsets) and glp.values.dtype == np.float32
        assert all(f in ("stop", "length") for f in gen["finish"]) and gen["policy_version"] == 0
        assert np.all(glp.values <= 0)

        full = Ragged.from_sequences([np.r_[prompt.row(i), gids.row(i)] for i in range(2)], "int32")
        sampling = {"temperature": 0.8, "top_p": 0.9, "top_k": 10}
        lp = Ragged.from_message(c.call("logprobs", {"ids": full, "policy": "current", "sampling": sampling})["logprobs"])
        for i in range(2):
            n = len(gids.row(i))
            assert np.allclose(lp.row(i)[-n:], glp.row(i), atol=2e-5)
            assert lp.row(i)[0] == 0
        ref = Ragged.from_message(c.call("logprobs", {"ids": full, "policy": "reference", "sampling": sampling})["logprobs"])
        vals = Ragged.from_message(c.call("values", {"ids": full})["values"])
        assert np.array_equal(vals.offsets, full.offsets)

        masks = [np.r_[np.zeros(len(prompt.row(i))), np.ones(len(gids.row(i)))].astype(np.uint8) for i in range(2)]
        L = np.array([m.sum() for m in masks], dtype=np.float64)
        step = {
            "ids": full,
            "loss_mask": Ragged.from_sequences(masks, "uint8"),
            "advantages": Ragged.from_sequences([np.full(len(m), a) for m, a in zip(masks, (1.0, -1.0), strict=True)], "float32"),
            "old_logprobs": lp,
            "ref_logprobs": ref,
            "groups": np.zeros(2, dtype=np.int32),
            "reduction": {"mode": "token_mean"},
            "denominators": {"tokens": float(L.sum()), "sequences": 2.0, "groups": 1.0, "group_tokens": np.array([L.sum()]), "sequence_tokens": L},
            "microbatches": 2,
            "clip": {"low": 0.2, "high": 0.28, "dual": None},
            "kl": {"coef": 0.1, "estimator": "k3", "placement": "loss"},
            "sampling": sampling,
            "critic": {"returns": Ragged.from_sequences([np.ones(len(m)) for m in masks], "float32"), "old_values": vals, "value_clip": 0.2},
        }
        res = c.call("train_step", step)
        assert res["policy_version"] == 1 and res["tokens"] == int(L.sum())
        assert abs(res["ratio_mean"] - 1) < 1e-5 and abs(res["kl"]) < 1e-6  # same policy, same reference
        stats = {"loss", "policy_loss", "kl", "entropy", "clip_fraction", "ratio_mean", "ratio_min", "ratio_max", "grad_norm", "value_loss"}
        assert set(res) >= stats | {"tokens", "policy_version"}

        ck = str(tmp_path / "ckpt")
        saved = c.call("save", {"path": ck})
        assert {"model.safetensors", "trainer.json", "config.json"} <= set(saved["files"]) and saved["policy_version"] == 1
        after = Ragged.from_message(c.call("logprobs", {"ids": full, "policy": "current", "sampling": None})["logprobs"])
        c.call("train_step", step)
        loaded = c.call("load", {"path": ck})
        assert loaded["policy_version"] == 1
        again = Ragged.from_message(c.call("logprobs", {"ids": full, "policy": "current", "sampling": None})["logprobs"])
        assert np.array_equal(after.values, again.values)

        out = c.call("eval_op", {"op": "pass_at_k", "input": {"n": 10, "c": 2, "k": 3}})
        assert abs(out["output"] - (1 - 56 / 120)) < 1e-12
        pl = c.call("eval_op", {"op": "advantages", "input": {"rewards": [[1, 0, 0, 0]], "baseline": "mean", "normalize": "std"}})
        assert isinstance(pl["output"], list) and abs(pl["output"][0][0] - 3**0.5) < 1e-5
        assert c.request("eval_op", {"op": "nope", "input": {}})["error"]["code"] == "unsupported"
        assert c.request("eval_op", {"op": "kl", "input": {"logp": [1], "logp_ref": [], "estimator": "k1"}})["error"]["code"] == "invalid_request"
        assert c.request("no_such_method", {})["error"]["code"] == "unsupported"
        assert c.request("load", {"path": str(tmp_path / "missing")})["error"]["code"] == "invalid_request"

        assert c.call("shutdown", {}) == {}
        code, stderr = c.close()
        assert code == 0, stderr
    finally:
        if c.proc.poll() is None:
            c.proc.kill()


def test_stdout_carries_frames_only(tmp_path):
    """Stray output inside the trainer process (a Python print and a raw write on fd 1, made by an
    audit hook when the trainer's modules are imported, i.e. after start-up) goes to stderr; stdout
    stays a clean frame stream."""
    from helpers import trainer_env

    (tmp_path / "sitecustomize.py").write_text(
        "import os, sys\n"
        "def hook(event, args):\n"
        "    if event == 'import' and args[0] == 'arl_trainer.server':\n"
        "        print('stray print')\n"
        "        os.write(1, b'stray fd write\\n')\n"
        "sys.addaudithook(hook)\n"
    )
    env = trainer_env()
    env["PYTHONPATH"] = str(tmp_path) + os.pathsep + env["PYTHONPATH"]
    c = ProtocolClient(env=env)
    try:
        assert c.call("handshake", HELLO)["version"] == 1
        c.call("configure", configure_params(tiny_model("float32")))
        c.call("shutdown", {})
        code, err = c.close()
        assert code == 0
        assert c.proc.stdout.read() == b""
        assert "stray print" in err and "stray fd write" in err
    finally:
        if c.proc.poll() is None:
            c.proc.kill()


def test_corrupt_input_ends_the_trainer():
    c = ProtocolClient()
    c.proc.stdin.write(b"this is not a frame at all")
    code, err = c.close()
    assert code == 2 and "framing" in err


def test_end_of_input_exits_cleanly():
    c = ProtocolClient()
    c.call("handshake", HELLO)
    code, _ = c.close()
    assert code == 0
