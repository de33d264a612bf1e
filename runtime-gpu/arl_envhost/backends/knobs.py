"""What the library backends share: reading typed knobs, importing the library, words, confined paths.

Knobs arrive as the JSON object the spec's env declaration compiled to (docs/env-libraries.md). A knob
of the wrong type is a ``ConfigError`` naming it, never a Python ``TypeError`` deep in a library.
"""

from __future__ import annotations

import importlib
import os
import re
from types import ModuleType
from typing import Any

from arl_envhost.backends.base import BackendMissing, ConfigError

_TYPE_NAMES = {bool: "a boolean", int: "an integer", float: "a number", str: "a string", dict: "an object", list: "a list"}


def _is(value: Any, kind: type) -> bool:
    # JSON has no int/bool split that Python respects: True is an int to isinstance, never a knob's number.
    if kind in (int, float) and isinstance(value, bool):
        return False
    if kind is float:
        return isinstance(value, int | float)
    return isinstance(value, kind)


def knob(config: dict[str, Any], name: str, kind: type, default: Any = None, *, required: bool = False, hint: str = "") -> Any:
    """``config[name]`` checked against ``kind`` (raises ConfigError); ``default`` when absent and not required."""
    if name not in config or config[name] is None:
        if required:
            raise ConfigError(name, "is required", hint)
        return default
    value = config[name]
    if not _is(value, kind):
        raise ConfigError(name, f"must be {_TYPE_NAMES[kind]}, not {type(value).__name__} {value!r}"[:200], hint)
    return value


def choice(config: dict[str, Any], name: str, options: tuple[str, ...], default: str) -> str:
    value = knob(config, name, str, default)
    if value not in options:
        raise ConfigError(name, f"{value!r} is not one of {', '.join(options)}", f"write one of {', '.join(options)}")
    return value


def unknown_knobs(config: dict[str, Any], known: tuple[str, ...]) -> list[ConfigError]:
    return [ConfigError(k, "is not a knob of this library", f"its knobs: {', '.join(known)}") for k in config if k not in known]


def collect(*checks: Any) -> list[ConfigError]:
    """Runs each zero-argument check, gathering the ConfigErrors they raise (each knob is reported once)."""
    errors: list[ConfigError] = []
    for check in checks:
        try:
            check()
        except ConfigError as e:
            errors.append(e)
    return errors


def import_library(module: str, pip_name: str, setup_hint: str) -> ModuleType:
    """The library's module, or BackendMissing naming the setup command (never an ImportError's stack trace)."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise BackendMissing(f"the Python library {pip_name} is not installed in the env host's Python ({e}); run: {setup_hint}") from None


_WORD = re.compile(r"[A-Za-z0-9_]+")


def words(texts: list[str]) -> list[str]:
    """The word units of ``texts`` in first-seen order: what the embedded model's word tokenizer takes as one token (\\w+)."""
    seen: dict[str, None] = {}
    for text in texts:
        for w in _WORD.findall(text):
            seen.setdefault(w, None)
    return list(seen)


def confined(data_root: str, relative: str, field_name: str) -> str:
    """``relative`` resolved under ``data_root``; a path that leaves it (.., absolute, a symlink out) is a ConfigError."""
    if os.path.isabs(relative):
        raise ConfigError(field_name, f"{relative!r} is absolute", "write a path relative to the run's data root")
    root = os.path.realpath(data_root)
    path = os.path.realpath(os.path.join(root, relative))
    if path != root and not path.startswith(root + os.sep):
        raise ConfigError(field_name, f"{relative!r} leaves the data root {root}", "keep data files inside the data root")
    return path
