"""save with background: the checkpoint written on a thread is the one a synchronous save writes at
that request, whatever the trainer does meanwhile; `saved` reports it, or its failure."""
import filecmp
import json
import os
import sys
import threading

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from helpers import configure_params, make_batch, new_trainer, tiny_model  # noqa: E402

from arl_trainer import checkpoint  # noqa: E402
from arl_trainer.errors import RequestError  # noqa: E402

IDS = [6, 9, 12, 7, 20, 8, 11]


def make(seed=7):
    t = new_trainer()
    kl = {"coef": 0.05, "estimator": "k3", "placement": "loss", "reference": {"kind": "initial"}}
    t.configure(configure_params(tiny_model("float32"), seed=seed, critic=True, kl=kl))
    return t


def batch_for(t, seed):
    return make_batch(t.state.conf.weights.handle.vocab_size, seed=seed, n=4, critic=True)


def logits_of(t):
    with torch.no_grad():
        module = t.state.conf.weights.handle.module
        return module(torch.as_tensor(IDS, dtype=torch.long)[None])[0][0].double().numpy()


def test_a_background_save_writes_the_synchronous_checkpoint(tmp_path):
    t = make()
    t.train_step(batch_for(t, 1))
    t.snapshot({})  # a behaviour slot too
    sync = t.save({"path": str(tmp_path / "sync")})
    answer = t.save({"path": str(tmp_path / "bg"), "background": True})
    assert answer == {"files": [], "policy_version": 1, "pending": True}
    done = t.saved({})
    assert done == {"path": str(tmp_path / "bg"), "files": sync["files"], "policy_version": 1}
    assert "behaviour.safetensors" in done["files"] and "optimizer.pt" in done["files"]
    for name in done["files"]:
        if name.endswith(".safetensors") or name in ("config.json", "tokenizer.json"):
            assert filecmp.cmp(tmp_path / "sync" / name, tmp_path / "bg" / name, shallow=False), name
    a, b = (json.loads((tmp_path / d / "trainer.json").read_text()) for d in ("sync", "bg"))
    assert {k: v for k, v in a.items() if k != "saved_at"} == {k: v for k, v in b.items() if k != "saved_at"}
    assert t.saved({}) == {"path": None, "files": [], "policy_version": 1}  # collected once


def test_steps_taken_while_it_is_written_do_not_reach_it(tmp_path, monkeypatch):
    # the thread writes only once the next step has changed the weights and AdamW's moments in place
    stepped = threading.Event()
    write = checkpoint._write_checkpoint

    def write_after_the_step(*args):
        assert stepped.wait(60)
        return write(*args)

    monkeypatch.setattr(checkpoint, "_write_checkpoint", write_after_the_step)
    t = make()
    t.train_step(batch_for(t, 1))
    at_save = logits_of(t)
    t.save({"path": str(tmp_path / "ck"), "background": True})
    t.train_step(batch_for(t, 2))
    stepped.set()
    after = {k: v.clone() for k, v in t.state.conf.weights.handle.module.state_dict().items()}
    assert t.saved({})["policy_version"] == 1

    r = make(seed=99)
    assert r.load({"path": str(tmp_path / "ck")})["policy_version"] == 1
    assert np.array_equal(logits_of(r), at_save)
    r.train_step(batch_for(r, 2))  # the optimizer state of the save: the same next step
    for k, v in r.state.conf.weights.handle.module.state_dict().items():
        assert torch.equal(v, after[k]), k


def test_its_failure_is_answered_by_saved(tmp_path):
    t = make()
    (tmp_path / "file").write_text("not a folder")
    target = str(tmp_path / "file" / "ck")
    assert t.save({"path": target, "background": True})["pending"] is True
    with pytest.raises(RequestError) as failed:
        t.saved({})
    assert failed.value.code == "invalid_request" and f"cannot save to {target}" in str(failed.value)
    assert t.saved({})["path"] is None  # the failure is reported once; nothing stays outstanding


def test_one_background_save_at_a_time_and_others_wait_for_it(tmp_path):
    t = make()
    t.save({"path": str(tmp_path / "a"), "background": True})
    with pytest.raises(RequestError, match="not collected yet: send saved"):
        t.save({"path": str(tmp_path / "b"), "background": True})
    # a policy-only save (a weight sync's) waits for the thread and leaves its outcome to `saved`
    t.save({"path": str(tmp_path / "policy"), "policy_only": True})
    assert t.state.background_save.thread is not None and not t.state.background_save.thread.is_alive()
    assert t.saved({})["path"] == str(tmp_path / "a")
    # shutdown waits for the checkpoint being written
    t.save({"path": str(tmp_path / "c"), "background": True})
    t.shutdown({})
    assert "trainer.json" in os.listdir(tmp_path / "c")


def test_a_checkpoint_too_large_for_host_memory_is_written_before_the_answer(tmp_path, monkeypatch):
    monkeypatch.setattr(checkpoint, "_fits_in_host_memory", lambda contents: False)
    t = make()
    answer = t.save({"path": str(tmp_path / "ck"), "background": True})
    assert "pending" not in answer and "model.safetensors" in answer["files"]
    assert sorted(os.listdir(tmp_path / "ck")) == answer["files"]
    assert t.saved({})["path"] is None


@pytest.mark.skipif(sys.platform != "linux", reason="per-thread priorities are Linux's")
def test_the_writing_thread_yields_the_cpu_to_the_requests(tmp_path, monkeypatch):
    seen = {}
    write = checkpoint._write_checkpoint

    def noting_its_priority(*args):
        seen["writer"] = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
        return write(*args)

    monkeypatch.setattr(checkpoint, "_write_checkpoint", noting_its_priority)
    t = make()
    t.save({"path": str(tmp_path / "ck"), "background": True})
    t.saved({})
    main = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    assert seen["writer"] == min(19, main + 10) and os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == main
