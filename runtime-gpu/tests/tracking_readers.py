"""Reading trackers' output back with the libraries' own readers (tests only).

TensorBoard: tensorboard's EventAccumulator. MLflow: MlflowClient. W&B 0.31 ships no Python
reader of its offline transaction log (the Go wandb-core writes it, `wandb sync` replays it),
so `wandb_records` reads the log's documented frame (LevelDB log: 32 KiB blocks of chunks with
a 7-byte header, after the 7-byte `:W&B` file header) and parses each record with wandb's own
protobuf, wandb.proto.wandb_internal_pb2.Record.
"""

from __future__ import annotations

import glob
import json
import os
import struct
from typing import Any

_BLOCK = 32768
_CHUNK_HEADER = 7
_FULL, _FIRST, _MIDDLE, _LAST = 1, 2, 3, 4


def wandb_records(path: str) -> list[Any]:
    from wandb.proto import wandb_internal_pb2

    data = open(path, "rb").read()
    assert data[:4] == b":W&B" and struct.unpack("<H", data[4:6])[0] == 0xBEE1, f"{path} is not a W&B transaction log"
    records, pending, pos = [], b"", 7
    while pos + _CHUNK_HEADER <= len(data):
        room = _BLOCK - pos % _BLOCK
        if room < _CHUNK_HEADER:
            pos += room
            continue
        _crc, length, kind = struct.unpack("<IHB", data[pos : pos + _CHUNK_HEADER])
        if kind == 0 and length == 0:  # the rest of the block is padding
            pos += room
            continue
        chunk = data[pos + _CHUNK_HEADER : pos + _CHUNK_HEADER + length]
        pos += _CHUNK_HEADER + length
        pending = chunk if kind in (_FULL, _FIRST) else pending + chunk
        if kind in (_FULL, _LAST):
            record = wandb_internal_pb2.Record()
            record.ParseFromString(pending)
            records.append(record)
            pending = b""
    return records


def _item_value(item: Any) -> Any:
    if item.value_json:
        return json.loads(item.value_json)
    which = item.WhichOneof("value")
    return None if which in (None, "none") else getattr(item, which)


def wandb_offline_run(tracking_dir: str, run_id: str) -> dict[str, Any]:
    """Every offline run folder of `run_id` (a resume adds one), oldest first: history rows, config and run ids."""
    folders = sorted(glob.glob(os.path.join(tracking_dir, "wandb", f"offline-run-*-{run_id}")))
    history: list[dict[str, Any]] = []
    config: dict[str, Any] = {}
    run_ids: list[str] = []
    for folder in folders:
        for record in wandb_records(os.path.join(folder, f"run-{run_id}.wandb")):
            kind = record.WhichOneof("record_type")
            if kind == "history":
                history.append({"/".join([i.key, *i.nested_key]) if i.key else "/".join(i.nested_key): _item_value(i) for i in record.history.item})
            elif kind in ("run", "config"):
                # The run record carries the config given to wandb.init; config records, later updates.
                updates = record.run.config.update if kind == "run" else record.config.update
                config.update({item.key or "/".join(item.nested_key): json.loads(item.value_json) for item in updates})
                if kind == "run":
                    run_ids.append(record.run.run_id)
    return {"folders": folders, "history": history, "config": config, "run_ids": run_ids}


def tensorboard_scalars(logdir: str) -> dict[str, dict[int, float]]:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(logdir, purge_orphaned_data=True)
    acc.Reload()
    return {tag: {e.step: e.value for e in acc.Scalars(tag)} for tag in acc.Tags()["scalars"]}


def tensorboard_texts(logdir: str) -> dict[str, list[str]]:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(logdir)
    acc.Reload()
    texts = {tag: [e.tensor_proto.string_val[0].decode() for e in acc.Tensors(tag) if e.tensor_proto.string_val] for tag in acc.Tags()["tensors"]}
    return {tag: values for tag, values in texts.items() if values}


def tensorboard_hparams(logdir: str) -> dict[str, object]:
    """The hparams plugin's session start info: the plan's flattened values."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    from tensorboard.plugins.hparams import metadata

    acc = EventAccumulator(logdir)
    acc.Reload()
    content = acc.SummaryMetadata(metadata.SESSION_START_INFO_TAG).plugin_data.content
    info = metadata.parse_session_start_info_plugin_data(content)
    return {k: getattr(v, v.WhichOneof("kind")) for k, v in info.hparams.items()}


def tracking_summary(tracking_dir: str) -> dict[str, Any]:
    """What each tracker of a run directory's tracking/ holds, read back (for the runtime's end-to-end test)."""
    ids = json.load(open(os.path.join(tracking_dir, "ids.json")))
    out: dict[str, Any] = {"ids": ids}
    logdir = os.path.join(tracking_dir, "tensorboard")
    if os.path.isdir(logdir):
        out["tensorboard"] = {"scalars": tensorboard_scalars(logdir), "texts": sorted(tensorboard_texts(logdir)), "hparams": tensorboard_hparams(logdir)}
    if "wandb" in ids:
        wb = wandb_offline_run(tracking_dir, ids["wandb"])
        out["wandb"] = {"folders": len(wb["folders"]), "run_ids": wb["run_ids"], "history": wb["history"], "config": wb["config"]}
    if "mlflow" in ids:
        os.environ["MLFLOW_ALLOW_FILE_STORE"] = "true"
        from mlflow.tracking import MlflowClient

        client = MlflowClient(tracking_uri="file:" + os.path.join(tracking_dir, "mlruns"))
        run = client.get_run(ids["mlflow"])
        history = {k: [[m.step, m.value] for m in client.get_metric_history(ids["mlflow"], k)] for k in run.data.metrics}
        artifacts = [f.path for f in client.list_artifacts(ids["mlflow"])] + [f.path for f in client.list_artifacts(ids["mlflow"], "eval")]
        out["mlflow"] = {"status": run.info.status, "metrics": history, "params": run.data.params, "artifacts": sorted(artifacts)}
    return out


if __name__ == "__main__":
    import sys

    print(json.dumps(tracking_summary(sys.argv[1])))
