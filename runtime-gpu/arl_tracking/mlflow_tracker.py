"""An MLflow run through MlflowClient: by default a file store in the run directory.

mlflow 3 keeps its file store in maintenance mode and refuses it unless MLFLOW_ALLOW_FILE_STORE
is true: set here for `file:` URIs only; other URIs (http:, sqlite:, ...) are given to MLflow as
they are. Metric names lose what MLflow refuses (`pass@1` is `pass_at_1`).
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

from arl_tracking.values import flatten, mlflow_key

# MLflow refuses longer param values and batches of more params.
_PARAM_VALUE_MAX = 6000
_PARAMS_PER_BATCH = 100
_METRICS_PER_BATCH = 1000


class MlflowTracker:
    name = "mlflow"

    def __init__(self, tracking_uri: str, experiment: str, run_name: str, run_id: str | None):
        if tracking_uri.startswith("file:"):
            os.environ["MLFLOW_ALLOW_FILE_STORE"] = "true"
        from mlflow.entities import Metric, Param, RunStatus
        from mlflow.tracking import MlflowClient

        self._Metric, self._Param = Metric, Param
        self._client = MlflowClient(tracking_uri=tracking_uri)
        found = self._client.get_experiment_by_name(experiment)
        experiment_id = found.experiment_id if found else self._client.create_experiment(experiment)
        if run_id is not None:
            # A resumed arl run continues its MLflow run (the id stored in the run directory).
            self._client.update_run(run_id, status=RunStatus.to_string(RunStatus.RUNNING))
            self._run_id = run_id
        else:
            self._run_id = self._client.create_run(experiment_id, run_name=run_name).info.run_id

    @property
    def run_id(self) -> str:
        return self._run_id

    def config(self, plan: dict[str, Any], name: str) -> None:
        # Keys that sanitising makes equal keep the first value: MLflow refuses a batch with both.
        values: dict[str, str] = {}
        for k, v in flatten(plan).items():
            values.setdefault(mlflow_key(k)[:250], str(v)[:_PARAM_VALUE_MAX])
        params = [self._Param(k, v) for k, v in values.items()]
        for i in range(0, len(params), _PARAMS_PER_BATCH):
            self._client.log_batch(self._run_id, params=params[i : i + _PARAMS_PER_BATCH])
        self._client.log_dict(self._run_id, plan, "plan.json")

    def metrics(self, step: int, values: dict[str, float]) -> None:
        now = int(time.time() * 1000)
        metrics = [self._Metric(mlflow_key(k), float(v), now, step) for k, v in values.items()]
        for i in range(0, len(metrics), _METRICS_PER_BATCH):
            self._client.log_batch(self._run_id, metrics=metrics[i : i + _METRICS_PER_BATCH])

    def table(self, name: str, columns: list[str], rows: list[list[Any]], step: int) -> None:
        # log_table needs pandas, which mlflow-skinny lacks: the same {columns, data} as JSON.
        self._client.log_text(self._run_id, json.dumps({"columns": columns, "data": rows}), f"{name}.json")

    def close(self) -> None:
        self._client.set_terminated(self._run_id)
