"""FSDP2 (`fully_shard`) and DDP under a real `torchrun --nproc_per_node 2` (gloo, CPU) against one
process on the same batches: for every reduction the loss, statistics, gradient norm and the
updated weights agree, on the builtin plain model and on a random transformers Qwen3.

The runtime sends whole-batch denominators, so each rank's loss is its exact share; these runs
check that the strategies turn the ranks' gradients into the whole-batch SUM (docs in
arl_trainer/distributed.py), including a batch where one rank holds no target token."""
import os
import pickle
import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import torch.distributed as tdist  # noqa: E402
from helpers import ROOT, tiny_model, trainer_env  # noqa: E402
from test_distributed import _torchrun_broken  # noqa: E402

pytestmark = [
    pytest.mark.skipif(not (tdist.is_available() and tdist.is_gloo_available()), reason="torch.distributed with gloo is not available"),
    pytest.mark.skipif(_torchrun_broken() is not None, reason=str(_torchrun_broken())),
]

WORKER = os.path.join(ROOT, "tests", "sharded_worker.py")
# float64 weights and arithmetic on both sides: only the order of the sums differs
REL = 1e-9
# transformers' RMSNorm computes in float32 whatever the weights' dtype, so a transformers model
# in float64 agrees to float32 rounding (seen: 2e-8 relative with another thread count)
REL_TRANSFORMERS = 1e-6
# ... and Adam's step m / (sqrt(v) + eps) turns that rounding of near-zero gradient entries into
# weight differences of a few 1e-6 over ten steps at lr 1e-3 (seen: 5.6e-6): 2% of one step's size
WEIGHTS_TRANSFORMERS = 2e-5


def _run(out_dir, model: str, parallel: str | None, nproc: int = 2) -> dict:
    os.makedirs(out_dir, exist_ok=True)
    env = trainer_env()
    if parallel is None:
        cmd = [sys.executable, WORKER, str(out_dir), model]
        env.pop("WORLD_SIZE", None)
    else:
        env["ARL_TRAINER_PARALLEL"] = parallel
        cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", str(nproc), WORKER, str(out_dir), model]
    res = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, timeout=300)
    assert res.returncode == 0, res.stderr.decode(errors="replace")[-4000:]
    with open(os.path.join(out_dir, "result.pkl"), "rb") as f:
        return pickle.load(f)


def _close(a: float, b: float, rel: float = REL) -> bool:
    return abs(a - b) <= rel * max(1.0, abs(a), abs(b))


def _assert_same(single: dict, sharded: dict, parallel: str, world: int = 2, rel: float = REL, weights: float | None = None) -> None:
    assert sharded["world_size"] == world and sharded["parallel"] == parallel
    assert [s["case"] for s in sharded["steps"]] == [s["case"] for s in single["steps"]]
    assert len(single["steps"]) == 10  # 5 reductions x 2 batches
    for one, two in zip(single["steps"], sharded["steps"], strict=True):
        for kind in ("gradients", "step"):
            for key, value in one[kind].items():
                if isinstance(value, float):
                    assert _close(value, two[kind][key], rel), (one["case"], kind, key, value, two[kind][key])
                else:
                    assert value == two[kind][key], (one["case"], kind, key)
        assert one["step"]["grad_norm"] > 0 or one["step"]["tokens"] == 0, one["case"]
    for i, (w1, w2) in enumerate(zip(single["weights"], sharded["weights"], strict=True)):
        assert w1.keys() == w2.keys()
        for k in w1:
            assert w1[k].shape == w2[k].shape, k
            assert np.max(np.abs(w1[k] - w2[k])) <= (weights or rel) * max(1.0, float(np.max(np.abs(w1[k])))), (single["steps"][i]["case"], k)
    # the weights did move: a comparison of untouched weights would prove nothing
    assert any(np.max(np.abs(single["weights"][0][k] - single["weights"][-1][k])) > 1e-6 for k in single["weights"][0])


@pytest.fixture(scope="module")
def qwen3_dir(tmp_path_factory):
    from hf_models import make_model_dir

    pytest.importorskip("transformers")
    return str(make_model_dir(tmp_path_factory.mktemp("qwen3"), arch="qwen3", tokenizer="qwen3", layers=2, hidden=32, seed=3))


BUILTIN = tiny_model("float64")


@pytest.fixture(scope="module")
def builtin_single(tmp_path_factory):
    return _run(tmp_path_factory.mktemp("one"), BUILTIN, None)


@pytest.mark.parametrize("parallel", ["fsdp", "ddp"])
def test_builtin_model_under_torchrun_matches_one_process(tmp_path, builtin_single, parallel):
    _assert_same(builtin_single, _run(tmp_path / parallel, BUILTIN, parallel), parallel)


def test_fsdp_on_a_world_of_one_matches_one_process(tmp_path, builtin_single):
    """ARL_TRAINER_PARALLEL=fsdp under torchrun shards a world of one too: the FSDP2 path that
    bench/gpu_check.sh runs on one GPU."""
    _assert_same(builtin_single, _run(tmp_path / "fsdp1", BUILTIN, "fsdp", nproc=1), "fsdp", world=1)


def test_qwen3_under_torchrun_fsdp_matches_one_process(tmp_path, qwen3_dir):
    single = _run(tmp_path / "one", qwen3_dir, None)
    sharded = _run(tmp_path / "fsdp", qwen3_dir, "fsdp")
    _assert_same(single, sharded, "fsdp", rel=REL_TRANSFORMERS, weights=WEIGHTS_TRANSFORMERS)
    assert any("layers.1.self_attn.q_norm" in k for k in sharded["weights"][0])  # Qwen3's own modules
