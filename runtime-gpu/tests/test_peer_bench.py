"""The peer benchmark's Python sides (bench/grpo_side_by_side.py, src/bench/peer.ts): the shared reward
differs within every group of a random model's samples, so each side's advantages and gradient are
not zero; TRL runs in float32 without gradient checkpointing unless asked for its defaults; every
step reports its wall and CPU time."""

import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from helpers import ROOT, trainer_env  # noqa: E402
from hf_models import make_model_dir  # noqa: E402

SCRIPT = os.path.join(ROOT, "bench", "grpo_side_by_side.py")
REWARD = os.path.join(ROOT, "bench", "peer_reward.py")
STEPS = 2


def test_the_reward_grades_what_correctness_alone_scores_zero():
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    from peer_reward import compute_score

    right = compute_score(None, "It is 42.", 42)
    assert right["acc"] is True and right["score"] > 1
    near, far, none = (compute_score(None, text, 42)["score"] for text in ("It is 41.", "It is 7.", "It is"))
    assert 0 < none < far < near < 1
    # Of two wrong answers without a number, the shorter scores higher.
    assert compute_score(None, "no", 42)["score"] > compute_score(None, "no " * 50, 42)["score"]


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    folder = tmp_path_factory.mktemp("peer")
    model = folder / "qwen3"
    make_model_dir(model, arch="qwen3", tokenizer="qwen3")
    rows = [{"prompt": f"What is {a} + {a + 3}? Reply with the number only.", "answer": 2 * a + 3, "split": "train"} for a in range(1, 9)]
    (folder / "sums.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return folder, model


def run(work, mode, *extra):
    folder, model = work
    out = folder / f"{mode}{''.join(extra)}.json"
    args = [sys.executable, SCRIPT, mode, "--model", str(model), "--data", str(folder / "sums.jsonl"), "--reward", REWARD, "--out", str(out)]
    args += ["--steps", str(STEPS), "--max-new-tokens", "8", *extra]
    done = subprocess.run(args, capture_output=True, text=True, env=trainer_env(), timeout=900, cwd=folder)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(out.read_text())


def assert_real_work(result):
    assert len(result["seconds"]) == len(result["cpu_seconds"]) == STEPS
    assert all(s > 0 for s in result["seconds"]) and all(c > 0 for c in result["cpu_seconds"])
    # Every group's rewards differed in every step: the advantages, and so the gradient, are not zero.
    assert result["varied_group_ratio"] == [1.0] * STEPS
    assert len(result["grad_norm"]) == STEPS and all(g > 0 for g in result["grad_norm"])


def test_the_floor_does_real_work_in_float32(work):
    result = run(work, "floor")
    assert_real_work(result)
    assert result["settings"] == {"dtype": "float32", "bf16": False, "gradient_checkpointing": False}


def test_trl_runs_in_float32_without_checkpointing_and_with_its_defaults_on_request(work):
    pytest.importorskip("trl")
    same = run(work, "trl")
    assert_real_work(same)
    assert same["settings"] == {"dtype": "float32", "bf16": False, "gradient_checkpointing": False}
    defaults = run(work, "trl", "--trl-defaults")
    assert_real_work(defaults)
    assert defaults["settings"]["bf16"] is True and defaults["settings"]["gradient_checkpointing"] is True
