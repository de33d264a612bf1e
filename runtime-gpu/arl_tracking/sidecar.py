"""The request loop: one JSON request a line on stdin, one JSON event a line on stdout.

Requests: {"op": "config", "dir", "name", "resume_after", "plan", "tensorboard", "wandb",
"mlflow"} first, then {"op": "metrics", "step", "values"} and {"op": "table", "name",
"columns", "rows", "step"}, and {"op": "close"} (end of input closes too). Events: {"event":
"ready", "trackers"} once the trackers are open, {"event": "error", "tracker", "message"} when
one fails (it is dropped, the others go on), {"event": "closed"} at the end. A failing tracker
never ends the sidecar: the run it serves must not notice beyond the warning.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from collections.abc import Callable
from typing import Any, TextIO

IDS_FILE = "ids.json"


def _message(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0] if text else ''}"[:500]


class Session:
    """The trackers of one run, opened from its config request."""

    def __init__(self, request: dict[str, Any], emit: Callable[[dict[str, Any]], None]):
        self._emit = emit
        self._dir = request["dir"]
        os.makedirs(self._dir, exist_ok=True)
        self._ids = self._read_ids()
        name, plan, resume_after = request["name"], request["plan"], int(request.get("resume_after", 0))
        self.trackers: list[Any] = []
        openers: list[tuple[str, Callable[[], Any]]] = []
        if request.get("tensorboard"):
            openers.append(("tensorboard", lambda: _tensorboard(os.path.join(self._dir, "tensorboard"), resume_after)))
        if request.get("wandb"):
            openers.append(("wandb", lambda: _wandb(self._dir, request["wandb"], name, self._ids.get("wandb"), plan)))
        if request.get("mlflow"):
            m = request["mlflow"]
            openers.append(("mlflow", lambda: _mlflow(m["tracking_uri"], m["experiment"], name, self._ids.get("mlflow"))))
        for tracker_name, opener in openers:
            try:
                tracker = opener()
            except Exception as error:  # noqa: BLE001 - any failure of a library is reported, never raised
                self._fail(tracker_name, error)
                continue
            self.trackers.append(tracker)
            if hasattr(tracker, "run_id"):
                self._ids[tracker_name] = tracker.run_id
        self._write_ids()
        self._each(lambda t: t.config(plan, name))
        emit({"event": "ready", "trackers": [t.name for t in self.trackers]})

    def _read_ids(self) -> dict[str, str]:
        try:
            with open(os.path.join(self._dir, IDS_FILE), encoding="utf-8") as f:
                ids = json.load(f)
            return {k: v for k, v in ids.items() if isinstance(v, str)} if isinstance(ids, dict) else {}
        except (OSError, ValueError):
            return {}

    def _write_ids(self) -> None:
        """The tracker runs' ids, so that a resumed arl run continues the same runs."""
        path = os.path.join(self._dir, IDS_FILE)
        with open(path + ".tmp", "w", encoding="utf-8") as f:
            json.dump(self._ids, f, indent=2, sort_keys=True)
        os.replace(path + ".tmp", path)

    def _fail(self, tracker: str, error: BaseException) -> None:
        self._emit({"event": "error", "tracker": tracker, "message": _message(error)})

    def _each(self, action: Callable[[Any], None]) -> None:
        for tracker in list(self.trackers):
            try:
                action(tracker)
            except Exception as error:  # noqa: BLE001
                self.trackers.remove(tracker)
                self._fail(tracker.name, error)
                try:
                    tracker.close()
                except Exception:  # noqa: BLE001 - already reported
                    pass

    def handle(self, request: dict[str, Any]) -> None:
        op = request.get("op")
        if op == "metrics":
            self._each(lambda t: t.metrics(int(request["step"]), request["values"]))
        elif op == "table":
            self._each(lambda t: t.table(request["name"], request["columns"], request["rows"], int(request["step"])))
        else:
            self._emit({"event": "error", "tracker": "sidecar", "message": f"unknown op {op!r}"})

    def close(self) -> None:
        self._each(lambda t: t.close())
        self.trackers = []


def _tensorboard(logdir: str, resume_after: int) -> Any:
    from arl_tracking.tensorboard_events import TensorBoardTracker

    return TensorBoardTracker(logdir, resume_after)


def _wandb(directory: str, settings: dict[str, Any], name: str, run_id: str | None, plan: dict[str, Any]) -> Any:
    from arl_tracking.wandb_tracker import WandbTracker

    return WandbTracker(directory, settings, name, run_id, plan)


def _mlflow(tracking_uri: str, experiment: str, name: str, run_id: str | None) -> Any:
    from arl_tracking.mlflow_tracker import MlflowTracker

    return MlflowTracker(tracking_uri, experiment, name, run_id)


def serve(requests: TextIO, events: TextIO) -> None:
    def emit(event: dict[str, Any]) -> None:
        events.write(json.dumps(event) + "\n")
        events.flush()

    session: Session | None = None
    for line in requests:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
            if request.get("op") == "close":
                break
            if request.get("op") == "config":
                session = Session(request, emit)
            elif session is not None:
                session.handle(request)
        except Exception as error:  # noqa: BLE001 - a bad request is reported and skipped
            emit({"event": "error", "tracker": "sidecar", "message": _message(error)})
    if session is not None:
        session.close()
    emit({"event": "closed"})


def main() -> int:
    # The events keep the real stdout; what the libraries print goes to stderr.
    events = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    # Ctrl-C is the runtime's to handle: it closes this process when the run stops.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    serve(sys.stdin, events)
    return 0
