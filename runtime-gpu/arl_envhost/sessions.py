"""Episode sessions of the env host: many isolated episodes of the env library backends at once (docs/env-host.md).

An episode is opened with its library, the plan's env config, its task and its seed; the host
answers with an episode id and the first observation. Each episode owns its own ``Episode`` object
(its game, its seed). A backend that raises ends that episode only: it is closed and forgotten,
the error answer carries the exception's last line and its traceback, and every other episode
goes on. A library that is not installed is one line (``BackendMissing``) naming the setup
command, never a traceback.
"""

from __future__ import annotations

import sys
import traceback
from typing import Any

from arl_envhost import backends
from arl_envhost.backends.base import Backend, BackendMissing, ConfigError, Episode, Step, call_with_root


class SessionError(Exception):
    """A request about an episode that is not open (never opened, closed, or ended by an error)."""


class LibraryMissing(Exception):
    """The library of a request cannot be imported here: one line naming the setup command."""


def _backend(library: str) -> Backend:
    try:
        return backends.backend(library)
    except KeyError as e:
        raise SessionError(str(e.args[0])) from None
    except BackendMissing as e:
        raise LibraryMissing(str(e)) from None
    except ImportError as e:
        setup = "npm run setup:envs"
        raise LibraryMissing(f"the env library '{library}' is not installed in this Python ({e.msg}); install it with '{setup}'") from None


class Sessions:
    """The open episodes of one host, by id."""

    def __init__(self) -> None:
        self._episodes: dict[str, tuple[str, Episode]] = {}
        self._next = 1

    def __len__(self) -> int:
        return len(self._episodes)

    def check(self, library: str, config: dict[str, Any], data_root: str = ".") -> dict[str, Any]:
        backend = _backend(library)
        problems = call_with_root(backend.check, config, data_root)
        return {"problems": [{"field": p.field, "message": str(p), "hint": p.hint} for p in problems], "version": getattr(backend, "version", None)}

    def prepare(self, library: str, config: dict[str, Any], context: dict[str, Any]) -> dict[str, Any]:
        backend = _backend(library)
        self._refuse_bad_config(backend, config, str(context.get("data_root", ".")))
        return backend.prepare(config, context)

    def open(self, library: str, config: dict[str, Any], task: int, seed: int, data_root: str) -> dict[str, Any]:
        backend = _backend(library)
        episode = backend.open(config, task, seed, data_root)
        eid = f"e{self._next}"
        self._next += 1
        self._episodes[eid] = (library, episode)
        try:
            first = episode.reset()
        except BaseException:
            self._drop(eid)
            raise
        return {"episode": eid, **_step_json(first)}

    def step(self, eid: str, action: str) -> dict[str, Any]:
        return self._call(eid, lambda e: _step_json(e.step(action)))

    def answer(self, eid: str, text: str) -> dict[str, Any]:
        return self._call(eid, lambda e: {"signals": e.answer(text)})

    def outcome(self, eid: str) -> dict[str, Any]:
        return self._call(eid, lambda e: {"signals": e.outcome()})

    def close(self, eid: str) -> dict[str, Any]:
        if eid not in self._episodes:
            return {"closed": False}
        _, episode = self._episodes.pop(eid)
        episode.close()
        return {"closed": True}

    def walkthrough(self, library: str, config: dict[str, Any], task: int, data_root: str) -> dict[str, Any]:
        return {"actions": _backend(library).walkthrough(config, task, data_root)}

    def vocabulary(self, library: str, config: dict[str, Any], tasks: list[int], data_root: str) -> dict[str, Any]:
        return {"words": sorted(set(_backend(library).vocabulary(config, tasks, data_root)))}

    def _call(self, eid: str, fn):
        entry = self._episodes.get(eid)
        if entry is None:
            raise SessionError(f"no open episode {eid!r} in this env host (closed, ended by an error, or opened on a host that has since restarted)")
        try:
            return fn(entry[1])
        except BaseException:
            # The backend raised (or ran out of time): this episode ends; the others go on.
            self._drop(eid)
            raise

    def _drop(self, eid: str) -> None:
        entry = self._episodes.pop(eid, None)
        if entry is None:
            return
        try:
            entry[1].close()
        except Exception:  # noqa: BLE001 - closing a broken episode may fail too; the episode is gone either way
            traceback.print_exc()

    def shutdown(self) -> None:
        """Closes every open episode, then every backend (TextWorldExpress's JVMs): the host is about to exit."""
        for eid in list(self._episodes):
            self._drop(eid)
        for line in backends.close_all():
            print(f"env host: closing a backend failed: {line}", file=sys.stderr)

    @staticmethod
    def _refuse_bad_config(backend: Backend, config: dict[str, Any], data_root: str) -> None:
        problems = call_with_root(backend.check, config, data_root)
        if problems:
            raise ConfigError.of_all(problems)


def _step_json(step: Step) -> dict[str, Any]:
    if not isinstance(step, Step):
        raise TypeError(f"the backend returned a {type(step).__name__}, not a Step")
    return step.to_json()
