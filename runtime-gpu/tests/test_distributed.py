"""The same batch through 1 and 2 ranks (torch.multiprocessing.spawn, gloo, CPU): the same loss,
statistics and gradients within 1e-6 for every reduction; a protocol session under torchrun."""
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import torch.distributed as tdist  # noqa: E402
from helpers import ProtocolClient, configure_params, make_batch, max_grad_diff, new_trainer, run_ranks, tiny_model, trainer_env  # noqa: E402

pytestmark = pytest.mark.skipif(not (tdist.is_available() and tdist.is_gloo_available()), reason="torch.distributed with gloo is not available")


@pytest.fixture(scope="module")
def two_ranks():
    import dist_worker

    ranks = run_ranks(dist_worker.worker, 2, "arl-dist-")
    single = dist_worker.new_trainer()
    ref = dist_worker.compute(single, single.state.conf.weights.handle.vocab_size)
    vocab_size = single.state.conf.weights.handle.vocab_size
    step = single.train_step({**dist_worker.batches(vocab_size)["seven"], "reduction": {"mode": "group_token_mean"}, "microbatches": 2})
    params = {k: v.detach().numpy().copy() for k, v in single.state.conf.weights.handle.module.state_dict().items()}
    return ranks, {"results": ref, "step": step, "params": params}


KEYS = ("loss", "policy_loss", "kl", "value_loss", "entropy", "clip_fraction", "ratio_mean", "ratio_min", "ratio_max", "tokens")


def test_two_ranks_match_one_rank_for_every_reduction(two_ranks):
    import dist_worker

    ranks, single = two_ranks
    for name, red, micro in dist_worker.cases():
        key = dist_worker.case_key(name, red, micro)
        r1, g1 = single["results"][key]
        for rank in ranks:
            rr, gr = rank["results"][key]
            for k in KEYS:
                assert abs(rr[k] - r1[k]) <= 1e-6, (key, k, rr[k], r1[k])
            assert max_grad_diff(g1, gr) <= 1e-6, key  # all-reduced (summed) gradients


def test_ranks_stay_in_sync_after_an_optimizer_step(two_ranks):
    ranks, single = two_ranks
    p0, p1 = ranks[0]["params"], ranks[1]["params"]
    for k in p0:
        assert np.array_equal(p0[k], p1[k]), k
        assert np.max(np.abs(p0[k] - single["params"][k])) <= 1e-6, k
    assert abs(ranks[0]["step"]["loss"] - single["step"]["loss"]) <= 1e-6
    assert abs(ranks[0]["step"]["grad_norm"] - single["step"]["grad_norm"]) <= 1e-6


def _torchrun_broken() -> str | None:
    """torch 1.13's torchrun fails on Python 3.11 (Std.from_str("0") is None: Flag iteration skips
    zero members), which is what Debian 12 ships."""
    try:
        from torch.distributed.elastic.multiprocessing.api import Std

        if Std.from_str("0") is None:
            return "this torch's torchrun is broken on this Python (Std.from_str('0') is None)"
    except Exception as e:  # noqa: BLE001
        return f"torchrun is not usable: {e}"
    return None


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _session(c):
    """handshake, configure, train_step, logprobs, an error, shutdown; returns (train, logprobs)."""
    hello = c.call("handshake", {"protocol": "arl-trainer", "version": 1, "runtime": {"name": "arl", "version": "test"}})
    assert hello["capabilities"]["world_size"] == 2 and hello["capabilities"]["parallel"] == "ddp"
    conf = c.call("configure", PARAMS)
    batch = BATCH(conf["tokenizer"]["vocab_size"])
    multi = c.call("train_step", batch)
    lp = c.call("logprobs", {"ids": batch["ids"], "policy": "current", "sampling": None})
    err = c.request("train_step", {**batch, "reduction": {"mode": "nope"}})
    assert err["error"]["code"] == "invalid_request"
    assert c.call("shutdown", {}) == {}
    code, stderr = c.close()
    assert code == 0, stderr
    return multi, lp


PARAMS = configure_params(tiny_model("float64"), kl={"coef": 0.05, "estimator": "k3", "placement": "loss", "reference": {"kind": "initial"}})


def BATCH(vocab_size):
    b = make_batch(vocab_size, seed=5, n=5)
    b["reduction"] = {"mode": "seq_mean_token_mean"}
    b["microbatches"] = 2
    return b


def _check_against_single_process(multi, lp):
    t = new_trainer()
    t.configure(PARAMS)
    batch = BATCH(t.state.conf.weights.handle.vocab_size)
    one = t.train_step(batch)
    for k in ("loss", "policy_loss", "kl", "tokens", "grad_norm", "entropy", "ratio_mean"):
        assert abs(multi[k] - one[k]) <= 1e-6, k
    lp1 = t.logprobs({"ids": batch["ids"], "policy": "current", "sampling": None})["logprobs"]
    assert np.max(np.abs(lp["logprobs"]["values"] - lp1.values)) <= 1e-6


def test_protocol_session_with_two_ranks():
    """The torchrun environment contract (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR/PORT), started
    by hand: rank 0 speaks the protocol and broadcasts requests to rank 1."""
    import subprocess

    env = trainer_env()
    env.update({"WORLD_SIZE": "2", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(_free_port()), "ARL_TRAINER_PARALLEL": "ddp"})
    cmd = [sys.executable, "-m", "arl_trainer", "--device", "cpu", "--threads", "1"]
    other = subprocess.Popen(cmd, env={**env, "RANK": "1", "LOCAL_RANK": "1"}, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    c = ProtocolClient(command=cmd, env={**env, "RANK": "0", "LOCAL_RANK": "0"})
    try:
        multi, lp = _session(c)
        out, err = other.communicate(timeout=60)
        assert other.returncode == 0, err.decode()
        assert out == b"", "a non-zero rank wrote to stdout"
    finally:
        for p in (c.proc, other):
            if p.poll() is None:
                p.kill()
    _check_against_single_process(multi, lp)


@pytest.mark.skipif(_torchrun_broken() is not None, reason=str(_torchrun_broken()))
def test_protocol_session_under_torchrun():
    env = trainer_env()
    env["ARL_TRAINER_PARALLEL"] = "ddp"
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2", "-m", "arl_trainer", "--device", "cpu", "--threads", "1"]
    c = ProtocolClient(command=cmd, env=env)
    try:
        multi, lp = _session(c)
    finally:
        if c.proc.poll() is None:
            c.proc.kill()
    _check_against_single_process(multi, lp)


def test_rank_zero_must_be_local_rank_zero_of_node_zero():
    """Several machines: the runtime's pipes are on node 0, so rank 0 must be there (arl run uses
    torchrun's static rendezvous); a rendezvous that put it elsewhere is refused with the fix."""
    from arl_trainer.distributed import check_serving_rank

    check_serving_rank(0, 0, "0")
    check_serving_rank(2, 0, "1")
    check_serving_rank(3, 1, "0")  # other local ranks take any global rank
    check_serving_rank(5, 0, None)  # started by hand, not by arl run: not checked
    for rank, node in ((2, "0"), (0, "1")):
        with pytest.raises(RuntimeError, match="--rdzv_backend static"):
            check_serving_rank(rank, 0, node)
