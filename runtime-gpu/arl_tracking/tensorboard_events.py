"""TensorBoard event files written with tensorboard's own writer (no TensorFlow, no torch).

Scalars are `simple_value` summaries (what every reader takes, EventAccumulator's Scalars
included); the plan is a text summary (JSON) and an hparams session; tables are markdown text.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

from tensorboard.compat.proto import event_pb2, summary_pb2
from tensorboard.plugins.hparams import summary_v2 as hparams_summary
from tensorboard.plugins.text import summary_v2 as text_summary
from tensorboard.summary.writer.event_file_writer import EventFileWriter

from arl_tracking.values import flatten, markdown_table


class TensorBoardTracker:
    name = "tensorboard"

    def __init__(self, logdir: str, resume_after: int):
        os.makedirs(logdir, exist_ok=True)
        self._writer = EventFileWriter(logdir)
        if resume_after > 0:
            # A resumed run starts at resume_after + 1: readers purge any event at that step or
            # later written before (only committed iterations are sent, so normally none).
            self._add(event_pb2.Event(step=resume_after + 1, session_log=event_pb2.SessionLog(status=event_pb2.SessionLog.START)))

    def _add(self, event: Any) -> None:
        event.wall_time = event.wall_time or time.time()
        self._writer.add_event(event)

    def _summary(self, summary: Any, step: int) -> None:
        self._add(event_pb2.Event(step=step, summary=summary))

    def config(self, plan: dict[str, Any], name: str) -> None:
        self._summary(text_summary.text_pb("plan", "```json\n" + json.dumps(plan, indent=2) + "\n```"), 0)
        self._summary(hparams_summary.hparams_pb(flatten(plan), trial_id=name), 0)
        self._writer.flush()

    def metrics(self, step: int, values: dict[str, float]) -> None:
        summary = summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag=k, simple_value=float(v)) for k, v in values.items()])
        self._summary(summary, step)
        self._writer.flush()

    def table(self, name: str, columns: list[str], rows: list[list[Any]], step: int) -> None:
        self._summary(text_summary.text_pb(name, markdown_table(columns, rows)), step)
        self._writer.flush()

    def close(self) -> None:
        self._writer.close()
