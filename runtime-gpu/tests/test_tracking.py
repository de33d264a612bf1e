"""The trackers' sidecar (arl_tracking) against the real libraries, read back with their readers.

One run logged in two sessions (a fresh start, then a resume after iteration 2), as the runtime
drives the sidecar; then broken trackers, each reported while the others go on.
"""

from __future__ import annotations

import io
import json
import os

import pytest
from tracking_readers import tensorboard_hparams, tensorboard_scalars, tensorboard_texts, wandb_offline_run

from arl_tracking.sidecar import serve

PLAN = {"experiment": "exp", "variant": "default", "algorithm": {"optimizer": {"lr": 0.001}}, "eval": {"k": [1, 2]}, "policy": {"lora": None}}


def run_session(requests: list[dict]) -> list[dict]:
    events = io.StringIO()
    serve(io.StringIO("".join(json.dumps(r) + "\n" for r in requests)), events)
    return [json.loads(line) for line in events.getvalue().splitlines()]


def config(tracking: str, resume_after: int, **trackers) -> dict:
    return {"op": "config", "dir": tracking, "name": "exp/default", "resume_after": resume_after, "plan": PLAN, **trackers}


@pytest.fixture
def file_store_env(monkeypatch):
    # The MLflow tracker sets MLFLOW_ALLOW_FILE_STORE for file: URIs; restored after the test.
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "false")
    monkeypatch.setenv("WANDB_SILENT", "true")


def test_a_run_and_its_resume_read_back_with_each_library(tmp_path, file_store_env):
    tracking = str(tmp_path / "tracking")
    uri = f"file:{tmp_path / 'tracking' / 'mlruns'}"
    trackers = {"tensorboard": True, "wandb": {"project": "arl", "entity": None, "mode": "offline"}, "mlflow": {"tracking_uri": uri, "experiment": "exp"}}
    first = run_session(
        [
            config(tracking, 0, **trackers),
            {"op": "metrics", "step": 1, "values": {"loss": 0.5, "eval/pass@1": 0.25, "reward_terms/solved": 1.0}},
            {"op": "metrics", "step": 2, "values": {"loss": 0.25}},
        ]
    )
    assert first == [{"event": "ready", "trackers": ["tensorboard", "wandb", "mlflow"]}, {"event": "closed"}]
    ids = json.load(open(os.path.join(tracking, "ids.json")))
    assert set(ids) == {"wandb", "mlflow"}

    table = {"op": "table", "name": "eval/iteration-00003", "columns": ["env", "task", "pass@1"], "rows": [["m", 1, 0.5], ["m", 2, None]], "step": 3}
    second = run_session([config(tracking, 2, **trackers), {"op": "metrics", "step": 3, "values": {"loss": 0.125}}, table, {"op": "close"}])
    assert second == [{"event": "ready", "trackers": ["tensorboard", "wandb", "mlflow"]}, {"event": "closed"}]
    assert json.load(open(os.path.join(tracking, "ids.json"))) == ids, "a resume continues the same tracker runs"

    # TensorBoard: both sessions' event files, scalars by tag and step; the plan and the table as text.
    logdir = os.path.join(tracking, "tensorboard")
    scalars = tensorboard_scalars(logdir)
    assert scalars["loss"] == {1: 0.5, 2: 0.25, 3: 0.125}
    assert scalars["eval/pass@1"] == {1: 0.25} and scalars["reward_terms/solved"] == {1: 1.0}
    texts = tensorboard_texts(logdir)
    assert json.loads(texts["plan"][0].removeprefix("```json\n").removesuffix("\n```")) == PLAN
    assert "| env | task | pass@1 |" in texts["eval/iteration-00003"][0]
    hparams = tensorboard_hparams(logdir)
    assert hparams["algorithm.optimizer.lr"] == 0.001 and hparams["eval.k.1"] == 2 and hparams["policy.lora"] == "null"

    # W&B: one offline run folder per session, both of the same run id; history rows and the plan as config.
    wb = wandb_offline_run(tracking, ids["wandb"])
    assert len(wb["folders"]) == 2 and set(wb["run_ids"]) == {ids["wandb"]}
    losses = {row["_step"]: row["loss"] for row in wb["history"] if "loss" in row}
    assert losses == {1: 0.5, 2: 0.25, 3: 0.125}
    assert any(row.get("eval/pass@1") == 0.25 for row in wb["history"])
    assert wb["config"]["experiment"] == "exp" and wb["config"]["algorithm"] == {"optimizer": {"lr": 0.001}}
    [logged] = [row for row in wb["history"] if row.get("eval/iteration-00003/_type") == "table-file"]
    table_file = json.load(open(os.path.join(wb["folders"][1], "files", logged["eval/iteration-00003/path"])))
    assert table_file == {"columns": ["env", "task", "pass@1"], "data": [["m", 1, 0.5], ["m", 2, None]]} and logged["_step"] == 3

    # MLflow: the file store through MlflowClient; one run, its metric history, params and artifacts.
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=uri)
    run = client.get_run(ids["mlflow"])
    assert run.info.status == "FINISHED" and run.info.run_name == "exp/default"
    assert [(m.step, m.value) for m in client.get_metric_history(ids["mlflow"], "loss")] == [(1, 0.5), (2, 0.25), (3, 0.125)]
    assert [m.value for m in client.get_metric_history(ids["mlflow"], "eval/pass_at_1")] == [0.25]
    assert run.data.params["algorithm.optimizer.lr"] == "0.001" and run.data.params["eval.k.1"] == "2" and run.data.params["policy.lora"] == "null"
    saved = client.download_artifacts(ids["mlflow"], "eval/iteration-00003.json", str(tmp_path))
    assert json.load(open(saved)) == {"columns": ["env", "task", "pass@1"], "data": [["m", 1, 0.5], ["m", 2, None]]}
    assert json.load(open(client.download_artifacts(ids["mlflow"], "plan.json", str(tmp_path)))) == PLAN


def test_a_broken_tracker_is_reported_and_the_others_go_on(tmp_path, file_store_env, monkeypatch):
    monkeypatch.delenv("WANDB_API_KEY", raising=False)
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    tracking = str(tmp_path / "tracking")
    events = run_session(
        [
            config(
                tracking,
                0,
                tensorboard=True,
                wandb={"project": "arl", "entity": None, "mode": "online"},
                mlflow={"tracking_uri": f"file:{blocker / 'mlruns'}", "experiment": "exp"},
            ),
            {"op": "metrics", "step": 1, "values": {"loss": 0.5}},
            "not a request",
            {"op": "metrics", "step": 2, "values": {"loss": 0.25}},
        ]
    )
    errors = {e["tracker"]: e["message"] for e in events if e["event"] == "error"}
    assert set(errors) == {"wandb", "mlflow", "sidecar"}
    assert "WANDB_API_KEY" in errors["wandb"]
    assert {"event": "ready", "trackers": ["tensorboard"]} in events and events[-1] == {"event": "closed"}
    assert tensorboard_scalars(os.path.join(tracking, "tensorboard"))["loss"] == {1: 0.5, 2: 0.25}


def test_a_resumed_tensorboard_session_replaces_steps_after_the_commit(tmp_path):
    # What a resume after iteration 2 does to events a first session wrote at step 3 or later
    # (the runtime sends only committed lines, so this is the safety net, docs/tracking.md#resume).
    tracking = str(tmp_path / "tracking")
    run_session([config(tracking, 0, tensorboard=True), *({"op": "metrics", "step": s, "values": {"loss": 1.0 / s}} for s in (1, 2, 3, 4))])
    run_session([config(tracking, 2, tensorboard=True), {"op": "metrics", "step": 3, "values": {"loss": 7.0}}])
    assert tensorboard_scalars(os.path.join(tracking, "tensorboard"))["loss"] == {1: 1.0, 2: 0.5, 3: 7.0}
