"""The env host's backend contract (arl_envhost/backends/base.py, sessions.py, server.py): ``check`` and
``task_count`` are given the data root (a backend written before that argument still works), and a
host that shuts down closes every backend it made (TextWorldExpress's JVM pool)."""
from __future__ import annotations

import io
import json
from typing import Any

from arl_envhost import backends, server
from arl_envhost.backends.base import Backend, ConfigError, call_with_root


class RootedBackend(Backend):
    closed = 0

    def check(self, config: dict[str, Any], data_root: str = ".") -> list[ConfigError]:
        return [ConfigError("rows", f"read under {data_root}")]

    def task_count(self, config: dict[str, Any], data_root: str = ".") -> int | None:
        return len(data_root)

    def close(self) -> None:
        RootedBackend.closed += 1


class OlderBackend(Backend):
    """A user's backend written against the contract before check and task_count took the data root."""

    def check(self, config):
        return []

    def task_count(self, config):
        return 3


def _serve(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = io.StringIO()
    server.serve(io.StringIO("".join(json.dumps(line) + "\n" for line in lines)), out)
    return [json.loads(line) for line in out.getvalue().splitlines()][1:]


def test_check_and_prepare_are_given_the_data_root_and_an_older_backend_still_works(monkeypatch):
    monkeypatch.setitem(backends.REGISTRY, "rooted", f"{__name__}:RootedBackend")
    monkeypatch.setitem(backends.REGISTRY, "older", f"{__name__}:OlderBackend")
    answers = _serve([
        {"id": 1, "method": "backend.check", "params": {"library": "rooted", "config": {}, "data_root": "/srv/spec", "timeout_s": 5}},
        {"id": 2, "method": "backend.prepare", "params": {"library": "older", "config": {}, "context": {"data_root": "/srv/spec"}, "timeout_s": 5}},
    ])
    assert answers[0]["result"]["problems"][0]["message"] == "rows: read under /srv/spec"
    assert answers[1]["result"] == {"task_count": 3}
    assert call_with_root(RootedBackend().task_count, {}, "/abc") == 4


def test_a_host_closes_its_backends_at_shutdown_and_when_its_input_ends(monkeypatch):
    monkeypatch.setitem(backends.REGISTRY, "rooted", f"{__name__}:RootedBackend")
    RootedBackend.closed = 0
    check = {"id": 1, "method": "backend.check", "params": {"library": "rooted", "config": {}, "data_root": ".", "timeout_s": 5}}
    _serve([check, {"id": 2, "method": "shutdown", "params": {}}])
    assert RootedBackend.closed == 1
    _serve([check])  # stdin closed without a shutdown request
    assert RootedBackend.closed == 2


class TwoProblemsBackend(Backend):
    def check(self, config: dict[str, Any], data_root: str = ".") -> list[ConfigError]:
        problems = [ConfigError("quest_length", "cannot be made", "shorten the quest")]
        return problems + [ConfigError("objects", "too few", "add objects")] if config.get("both") else problems


def test_a_refused_config_says_each_knob_and_hint_once(monkeypatch):
    monkeypatch.setitem(backends.REGISTRY, "two", f"{__name__}:TwoProblemsBackend")
    answers = _serve([
        {"id": 1, "method": "backend.prepare", "params": {"library": "two", "config": {}, "context": {"data_root": "."}, "timeout_s": 5}},
        {"id": 2, "method": "backend.prepare", "params": {"library": "two", "config": {"both": True}, "context": {"data_root": "."}, "timeout_s": 5}},
    ])
    assert answers[0]["error"]["message"].endswith("quest_length: cannot be made (shorten the quest)")
    assert answers[0]["error"]["message"].count("quest_length") == 1
    assert answers[1]["error"]["message"].endswith("quest_length: cannot be made (shorten the quest); objects: too few (add objects)")
    assert answers[1]["error"]["message"].count("shorten the quest") == 1
