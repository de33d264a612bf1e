"""The benchmark script runs end to end on CPU with a tiny config; without CUDA it says so."""
import json
import os
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

from helpers import ROOT, trainer_env  # noqa: E402

SCRIPT = os.path.join(ROOT, "bench", "train_step_bench.py")


def test_bench_cpu_smoke(tmp_path):
    env = trainer_env()
    env["OUT"] = str(tmp_path)
    res = subprocess.run(
        [sys.executable, SCRIPT, "--device", "cpu", "--config", "tiny", "--seq-len", "48", "--batch", "4"]
        + ["--microbatches", "2", "--steps", "2", "--warmup", "1"],
        capture_output=True, env=env, timeout=120,
    )
    assert res.returncode == 0, res.stderr.decode()
    out = json.loads((tmp_path / "bench-result.json").read_text())
    assert out["status"] == "ok" and out["tokens_per_step"] == 4 * 48
    assert out["trainer_tokens_per_s"] > 0 and out["bare_tokens_per_s"] > 0 and out["ratio_trainer_over_bare"] > 0
    assert out["parameters"] > out["parameters_matmul"] > 0
    assert "6*N_matmul" in out["flop_count"]
    assert out["last_train_step"]["tokens"] == 4 * (48 - 12)
    assert (tmp_path / "bench-result.txt").exists()


@pytest.mark.skipif(torch.cuda.is_available(), reason="CUDA is available here")
def test_bench_without_cuda_says_so(tmp_path):
    res = subprocess.run([sys.executable, SCRIPT, "--out", str(tmp_path)], capture_output=True, env=trainer_env(), timeout=60)
    assert res.returncode == 2
    assert "CUDA is not available" in res.stderr.decode()
    assert json.loads((tmp_path / "bench-result.json").read_text())["status"] == "no_cuda"


def test_param_count_of_the_default_config():
    """The default benchmark model is ~0.5B parameters (computed without building it)."""
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    import train_step_bench as b

    c = b.CONFIGS["0.5b"]
    h, L, i, V = c["hidden"], c["layers"], c["intermediate"], c["vocab"]
    kv = h // c["heads"] * c["kv_heads"]
    per_layer = h * h + h + 2 * (h * kv + kv) + h * h + 3 * h * i + 2 * h
    total = L * per_layer + V * h + h  # tied embeddings, final norm
    assert 0.45e9 < total < 0.55e9
