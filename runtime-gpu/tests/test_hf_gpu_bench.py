"""bench/hf_gpu_bench.py (run by bench/gpu_check.sh on a GPU): its FLOP and MFU arithmetic, its
argument checks, and a CPU smoke run of both paths (one process, and FSDP2 on a world of one
under torchrun) that must take the same first step."""
import json
import os
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from helpers import ROOT, trainer_env  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "bench"))
import hf_gpu_bench as bench  # noqa: E402

SCRIPT = os.path.join(ROOT, "bench", "hf_gpu_bench.py")


def test_flops_and_mfu_of_the_qwen2_0_5b_shape():
    s = bench.SHAPES["qwen2-0.5b"]
    h, kv = s["hidden"], s["hidden"] // s["heads"] * s["kv_heads"]
    assert kv == 128
    per_layer = 2 * h * h + 2 * h * kv + 3 * h * s["intermediate"]  # q, o; k, v; gate, up, down
    n_matmul = s["layers"] * per_layer + s["vocab"] * h  # the tied output head is a matmul too
    assert n_matmul == 493_961_216
    flops = bench.train_flops_per_token(n_matmul, s["layers"], 2048, h)
    assert flops == 6 * 493_961_216 + 6 * 24 * 2048 * 896 == 3_228_008_448
    # 100k tokens/s of this model on a 790 TFLOP/s device
    assert bench.mfu(100_000, flops, 790.0) == pytest.approx(3_228_008_448e5 / 790e12)
    assert round(bench.mfu(100_000, flops, 790.0), 4) == 0.4086


def test_arguments():
    a = bench.parse_args([])
    assert (a.peak_tflops, a.shape, a.device) == (790.0, "qwen2-0.5b", "cuda")
    for bad in (["--microbatches", "9", "--batch", "4"], ["--peak-tflops", "0"], ["--seq-len", "0"], ["--shape", "7b"]):
        with pytest.raises(SystemExit) as e:
            bench.parse_args(bad)
        assert e.value.code == 2, bad


def test_cpu_smoke_of_both_paths(tmp_path):
    env = trainer_env()
    small = ["--device", "cpu", "--shape", "tiny", "--seq-len", "24", "--batch", "2", "--microbatches", "2", "--steps", "1", "--gen-batch", "2"]
    small += ["--prompt-len", "4", "--gen-tokens", "3", "--out", str(tmp_path), "--work", str(tmp_path / "work")]
    one = subprocess.run([sys.executable, SCRIPT, *small], env=env, capture_output=True, timeout=300)
    assert one.returncode == 0, one.stderr.decode()[-3000:]
    fsdp_cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "1", SCRIPT, *small, "--label", "fsdp"]
    sharded = subprocess.run(fsdp_cmd, env={**env, "ARL_TRAINER_PARALLEL": "fsdp"}, capture_output=True, timeout=300)
    assert sharded.returncode == 0, sharded.stderr.decode()[-3000:]
    a = json.loads((tmp_path / "hf-bench-single.json").read_text())
    b = json.loads((tmp_path / "hf-bench-fsdp.json").read_text())
    assert (a["parallel"], b["parallel"]) == ("none", "fsdp")
    assert a["parameters_matmul"] == b["parameters_matmul"] > 0
    assert a["flops_per_token"] == bench.train_flops_per_token(a["parameters_matmul"], 2, 24, 64)
    assert a["train_tokens_per_s"] > 0 and a["gen_tokens_per_s"] > 0 and a["peak_tflops"] == 790.0
    assert 0 < a["gen_sampler_share"] < 1
    assert a["mfu"] == pytest.approx(round(bench.mfu(a["train_tokens_per_s"], a["flops_per_token"], 790.0), 4), abs=1e-4)
    assert a["first_step"]["tokens"] == 2 * (24 - 6)
    for k in ("loss", "grad_norm"):
        assert b["first_step"][k] == pytest.approx(a["first_step"][k], rel=1e-5, abs=1e-7), k


@pytest.mark.skipif(torch.cuda.is_available(), reason="a GPU is here: gpu_check.sh would run it")
def test_gpu_check_without_a_gpu_runs_nothing_and_says_so(tmp_path):
    env = {**trainer_env(), "OUT": str(tmp_path), "PYTHON": sys.executable}
    res = subprocess.run(["bash", os.path.join(ROOT, "bench", "gpu_check.sh")], env=env, capture_output=True, timeout=120)
    assert res.returncode == 2
    summary = (tmp_path / "summary.txt").read_text()
    assert "nothing run" in summary or "CUDA is not available" in summary
    assert not list(tmp_path.glob("hf-bench-*.json"))


def test_sampler_bench_cpu_smoke(tmp_path):
    # both parts at toy sizes: the rows are written, each with both samplers' figures
    script = os.path.join(ROOT, "bench", "sampler_bench.py")
    args = ["--device", "cpu", "--vocab", "4099", "--batches", "2,3", "--rounds", "2", "--calls", "1", "--gen-batch", "2"]
    args += ["--gen-tokens", "3", "--prompt-len", "4", "--out", str(tmp_path), "--work", str(tmp_path / "work")]
    res = subprocess.run([sys.executable, script, *args], env=trainer_env(), capture_output=True, timeout=300)
    assert res.returncode == 0, res.stderr.decode()[-3000:]
    rows = json.loads((tmp_path / "sampler-bench.json").read_text())["rows"]
    assert len(rows) == 5 * 2 + 1 and rows[-1]["name"].startswith("generate")
    for row in rows:
        assert row["rounds"] == 2 and row["old_ms"] > 0 and row["new_ms"] > 0 and row["ratio"] > 0 and row["ratio_cpu"] > 0
    assert all(row["same_tokens"] for row in rows[:-1])
    assert 0 < rows[-1]["sampler_share_old"] < 1 and 0 < rows[-1]["sampler_share_new"] < 1
