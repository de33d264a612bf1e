"""The RLVR workload on the PyTorch trainer: `arl run` of a `dataset` env (the shipped
experiments/rlvr rows and its veRL-style reward.py, unchanged) on a random Qwen3 with the real
Qwen3 tokenizer and chat template, scored in the env host. The embedded trainer's runs are
test/runtime/dataset-run.test.ts; this is the same workload on the other trainer.

Every episode must be one answer scored by compute_score (no env error), each record's prompt
must be the chat template's rendering of the row's question, and the scores must be the ones
reward.py gives for the answer the model wrote."""
from __future__ import annotations

import importlib.util
import json
import shutil

import pytest

transformers = pytest.importorskip("transformers")

from hf_models import REPO, make_model_dir  # noqa: E402
from run_records import ROLE, arl_run, buffer_records  # noqa: E402

RLVR = REPO / "experiments" / "rlvr"

SPEC = """
import "std/algorithms" as algo
import "std/envs/dataset" as dataset

experiment sums_torch {
  seed: 0
  policy { model: "MODEL_DIR", dtype: float32, sampling { temperature: 1.0, max_new_tokens: 8 } }
  env sums extends dataset.task {
    data: "./data/arithmetic.jsonl"
    split_column: "split"
    scorer: verl
    verifier: "./reward.py"
  }
  harness { max_turns: 1, max_response_tokens: 8 }
  reward { correct: outcome.correct }
  algorithm extends algo.grpo { group_size: 2 }
  rollout { tasks_per_batch: 2, iterations: 2, concurrency: 4 }
  eval { split: test, every: 2, tasks: 2, k: [1], before_training: false }
  resources { backend: torch }
  allow {
    self-inclusive-baseline: "a test of the workload on the PyTorch trainer, not of the estimator"
  }
}
"""


def test_a_dataset_task_scored_by_an_unchanged_compute_score_trains_on_the_pytorch_trainer(tmp_path):
    model = make_model_dir(tmp_path / "qwen3", arch="qwen3", tokenizer="qwen3", seed=0)
    work = tmp_path / "rlvr"
    shutil.copytree(RLVR / "data", work / "data")
    shutil.copyfile(RLVR / "reward.py", work / "reward.py")
    (work / "spec.arl").write_text(SPEC.replace("MODEL_DIR", str(model)))
    run_dir = arl_run(work / "spec.arl", tmp_path / "runs")

    metrics = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    assert [m["iteration"] for m in metrics] == [1, 2]
    assert all(m["env_errors"] == 0 for m in metrics), metrics

    # The user's function, as reward.py defines it, scores what the model wrote.
    spec = importlib.util.spec_from_file_location("user_reward", work / "reward.py")
    reward = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(reward)
    rows = {i: json.loads(line) for i, line in enumerate((work / "data" / "arithmetic.jsonl").read_text().splitlines())}
    tokenizer = transformers.AutoTokenizer.from_pretrained(str(model))
    records = buffer_records(run_dir / "buffer.arlbuf")
    assert len(records) == 2 * 2 * 2  # iterations x tasks x group: the training episodes
    for r in records:
        assert r.get("error") is None and r["turns"] == 1
        ids, roles = [int(t) for t in r["ids"]], [int(x) for x in r["roles"]]
        first = roles.index(ROLE["generated"])
        generated = [t for t, role in zip(ids, roles, strict=True) if role == ROLE["generated"]]
        row = rows[int(r["task"])]
        assert row["split"] == "train"
        rendered = tokenizer.apply_chat_template([{"role": "user", "content": row["prompt"]}], tokenize=False, add_generation_prompt=True)
        assert tokenizer.decode(ids[:first]) == rendered
        answer = tokenizer.decode(generated, skip_special_tokens=True)
        expected = reward.compute_score(row["data_source"], answer, str(row["answer"]), None)
        assert r["rewards"]["correct"] == (1 if expected["acc"] else 0), (answer, row)
