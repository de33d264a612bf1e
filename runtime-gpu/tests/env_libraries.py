"""What the env library backend tests share (tests/test_env_backends_*.py).

The libraries come from runtime-gpu/requirements-envs.txt, which `npm run setup:python` installs
into .venv. Without one, its tests skip with the setup command, except under CI, where they fail.
"""
from __future__ import annotations

import importlib
import os
import subprocess
import sys
from types import ModuleType

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def library(module: str) -> ModuleType:
    """The installed library module; otherwise the test skips (CI: fails) naming the setup command."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        message = f"{module} is not installed ({e}): run npm run setup:python (runtime-gpu/requirements-envs.txt)"
        if os.environ.get("CI"):
            pytest.fail(f"{message}; CI must run the env library tests")
        pytest.skip(message)


def without_library(module: str, code: str) -> subprocess.CompletedProcess:
    """Runs ``code`` in the venv's base interpreter without user site-packages, where ``module`` is really absent."""
    base = getattr(sys, "_base_executable", sys.executable)
    probe = subprocess.run([base, "-s", "-c", f"import {module}"], capture_output=True, env={"PATH": os.environ.get("PATH", "")})
    if probe.returncode == 0:
        pytest.skip(f"{base} has {module} installed system-wide: no Python without it here")
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": ROOT}
    return subprocess.run([base, "-s", "-c", code], capture_output=True, text=True, env=env, timeout=60)


def missing_library_message(module: str, backend_module: str, backend_class: str, config: str) -> str:
    """What the backend's check raises in a Python without its library (the BackendMissing line)."""
    code = (
        f"from arl_envhost.backends.{backend_module} import {backend_class}\n"
        "from arl_envhost.backends.base import BackendMissing\n"
        "try:\n"
        f"    {backend_class}().check({config})\n"
        "except BackendMissing as e:\n"
        "    print('BackendMissing:', e)\n"
    )
    result = without_library(module, code)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()
