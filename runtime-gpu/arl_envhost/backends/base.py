"""The contract every env library backend of the env host meets (docs/env-host.md).

A backend wraps one Python env library (TextWorld, reasoning-gym, ...). The host makes one
``Backend`` per library on first use, so the library is imported once per run, and asks it for an
``Episode`` per episode: each episode owns its own game or env object and its own seed, and
nothing of one episode is visible to another. Actions are free text; what comes back is text
for the model plus numeric or boolean signals, named as the backend's stdlib declaration
(``stdlib/std/envs/<library>.arl``) declares them.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any

SignalValue = float | int | bool


class BackendMissing(Exception):
    """The library is not importable here: the message names the setup command that installs it."""


class ConfigError(Exception):
    """A knob the library cannot take: ``field`` is the knob's name, ``hint`` what would work."""

    def __init__(self, field_name: str, message: str, hint: str = "") -> None:
        super().__init__(f"{field_name}: {message}" + (f" ({hint})" if hint else ""))
        self.field = field_name
        self.hint = hint

    @classmethod
    def of_all(cls, problems: list[ConfigError]) -> ConfigError:
        """One error saying every problem, each with its own knob and hint once; the first's knob and hint as its own."""
        if len(problems) == 1:
            return problems[0]
        error = cls.__new__(cls)
        Exception.__init__(error, "; ".join(str(p) for p in problems))
        error.field, error.hint = problems[0].field, problems[0].hint
        return error


@dataclass
class Step:
    """What the model sees after a reset or a step, and the env's signals at that point."""

    observation: str
    signals: dict[str, SignalValue] = field(default_factory=dict)
    # The task itself ended (won, lost, answered, the library's own terminated or truncated).
    done: bool = False
    # On reset only: the task as chat messages (role, content) instead of one user message.
    messages: list[dict[str, str]] | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"observation": self.observation, "signals": self.signals, "done": self.done}
        if self.messages is not None:
            out["messages"] = self.messages
        return out


class Episode:
    """One episode of one task: its own env object, its own seed."""

    def reset(self) -> Step:
        raise NotImplementedError

    def step(self, action: str) -> Step:
        """Apply one free-text action (a command, a move, an answer)."""
        raise NotImplementedError

    def answer(self, text: str) -> dict[str, SignalValue] | None:
        """A turn without a tool call, for single-turn tasks: score ``text`` and end. None: not a single-turn task."""
        return None

    def outcome(self) -> dict[str, SignalValue]:
        """The outcome signals, read once when the episode ends."""
        return {}

    def close(self) -> None:
        """Release the env object (files, subprocesses, the JVM's games)."""


class Backend:
    """One env library: checks knobs, opens episodes, and knows its tasks' words and walkthroughs."""

    #: The library's name as specs write it (``library: "textworld"``).
    name: str = ""
    #: The command that installs the library, named when it is missing.
    setup_hint: str = "npm run setup:envs"

    def check(self, config: dict[str, Any], data_root: str = ".") -> list[ConfigError]:
        """What is wrong with ``config`` for this library (an unknown game, a size it cannot generate).

        ``data_root`` is the spec's folder, where the config's data files are (a backend written
        before it was passed may leave it out of its signature: ``call_with_root``)."""
        return []

    def prepare(self, config: dict[str, Any], context: dict[str, Any]) -> dict[str, Any]:
        """Before the run's first episode (and again on a restarted host): make or find what the tasks need.

        ``context`` holds ``data_root`` (the spec's folder), ``cache_dir`` (where generated tasks are
        kept across runs) and ``recorded`` (what an earlier prepare of this run returned as ``files``,
        to be checked, or null). The answer is JSON: ``task_count``, and optionally ``files``
        (``[{"task", "path", "sha256"}]``, recorded in the run directory) and ``notes`` (lines for
        the run log). The default has nothing to prepare.
        """
        return {"task_count": call_with_root(self.task_count, config, str(context.get("data_root", ".")))}

    def open(self, config: dict[str, Any], task: int, seed: int, data_root: str) -> Episode:
        """A fresh, isolated episode of task ``task`` (an index into the backend's task list) with ``seed``."""
        raise NotImplementedError

    def task_count(self, config: dict[str, Any], data_root: str = ".") -> int | None:
        """How many distinct tasks ``config`` has (games, dataset rows); None: unbounded (seeded)."""
        return None

    def walkthrough(self, config: dict[str, Any], task: int, data_root: str) -> list[str] | None:
        """An expert action sequence for task ``task`` (SFT demonstrations); None when the library has none."""
        return None

    def vocabulary(self, config: dict[str, Any], tasks: list[int], data_root: str) -> list[str]:
        """The words of these tasks (observations, commands), for the embedded model's word tokenizer."""
        return []

    def close(self) -> None:
        """Release what the backend holds across episodes (a pool of JVMs); called once when the host shuts down."""


def call_with_root(method: Any, config: dict[str, Any], data_root: str) -> Any:
    """``method(config, data_root)`` for ``check`` and ``task_count``; ``method(config)`` for a backend
    whose override predates the ``data_root`` argument (registered with ARL_ENVHOST_BACKENDS)."""
    parameters = inspect.signature(method).parameters
    if "data_root" in parameters or len(parameters) >= 2:
        return method(config, data_root)
    return method(config)
