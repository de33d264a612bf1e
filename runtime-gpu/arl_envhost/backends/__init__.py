"""Env library backends of the env host (docs/env-host.md): one module a library, each a ``Backend``.

``REGISTRY`` maps the library name a plan writes (its env kind) to the module that defines it and the
class to make; a module is imported on the first episode or check of its library, so a host that
never serves TextWorld never imports it, and a library that is not installed fails only its own
requests (``BackendMissing``). Adding a library is one line here.
"""

from __future__ import annotations

import importlib
import os

from arl_envhost.backends.base import Backend, BackendMissing

#: library name -> "module:Class" (modules of this package, or any importable module: tests register their own).
REGISTRY: dict[str, str] = {
    "textworld": "arl_envhost.backends.textworld:TextWorldBackend",
    "textworld_express": "arl_envhost.backends.textworld_express:TextWorldExpressBackend",
    "reasoning_gym": "arl_envhost.backends.reasoning_gym:ReasoningGymBackend",
    "textarena": "arl_envhost.backends.textarena:TextArenaBackend",
    "skyrl_gym": "arl_envhost.backends.skyrl_gym:SkyRLGymBackend",
    "gymnasium": "arl_envhost.backends.gymnasium:GymnasiumBackend",
}

# Your own backends, without editing this file: ARL_ENVHOST_BACKENDS="name=module:Class,..." (the
# module importable from the host's PYTHONPATH). The tests register their fault-injecting backend so.
for _entry in filter(None, os.environ.get("ARL_ENVHOST_BACKENDS", "").split(",")):
    _name, _, _target = _entry.partition("=")
    REGISTRY[_name.strip()] = _target.strip()

_made: dict[str, Backend] = {}


def backend(library: str) -> Backend:
    """The one ``Backend`` of ``library`` in this host, made (and its library imported) on first use."""
    made = _made.get(library)
    if made is not None:
        return made
    target = REGISTRY.get(library)
    if target is None:
        raise KeyError(f"unknown env library {library!r} (known: {', '.join(sorted(REGISTRY))})")
    module_name, _, class_name = target.partition(":")
    module = importlib.import_module(module_name)
    made = getattr(module, class_name)()
    if not isinstance(made, Backend):
        raise TypeError(f"{target} is not a Backend")
    _made[library] = made
    return made


def close_all() -> list[str]:
    """Closes every backend made in this host (``Backend.close``); the last lines of those that raised."""
    failed = []
    for library, made in list(_made.items()):
        try:
            made.close()
        except Exception as e:  # noqa: BLE001 - one backend failing to close must not keep the others open
            failed.append(f"{library}: {type(e).__name__}: {e}")
    _made.clear()
    return failed


__all__ = ["REGISTRY", "Backend", "BackendMissing", "backend", "close_all"]
