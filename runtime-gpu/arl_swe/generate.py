"""SWE tasks from a PyPI source distribution: fetch, check, unpack, inject bugs, keep the ones the tests catch.

A preset names a package, its version and its sdist's sha256. The sdist comes from the cache,
from a folder (``ARL_SWE_SDISTS``) holding it under its PyPI file name, or from
``pip download --no-binary NAME --no-deps NAME==VERSION`` (the machine's index settings apply;
pip prepares the sdist's metadata, which runs its build backend; its build requirements may be
wheels: with ``--no-binary :all:`` pip built those from source too, 525 s instead of 8 s for
mypy 2.4.1 here), and must hash to the preset's sha256. It is unpacked (regular files and
folders only, no path outside it) into ``snapshot/``.

A preset whose tests need more than pytest names a requirements file (every package pinned with
``==`` and hashed); its packages are installed (``pip install --require-hashes``) into a venv of
their own, made from the given Python once per file hash and Python (cached under
``<cache>/swe/venvs/``, made beside it and renamed whole), and that venv's Python runs every test.

The package's own tests (``test_files``) run twice on the gold code; the tests that pass both
times are the selectable ones. Bug candidates (mutate.py) in the ``source_paths`` are shuffled by
the seed, spread over functions (at most ``max_per_function`` tasks a function), and tried one by
one: a candidate is kept when some selectable test fails with it (FAIL_TO_PASS); the other
selectable tests must keep passing (PASS_TO_PASS). Generation stops at ``tasks`` kept.

The result is cached under ``<cache>/swe/gen-<GENERATOR_VERSION>/<package>-<version>/<key>/``
(the key: a hash of the config, the seed included), made in a folder beside it and renamed in
whole, so a half-made set is never read. ``tasks.jsonl`` has one task a line; ``meta.json`` says
what was tried and how long it took.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from typing import Any

from .mutate import MUTATION_KINDS, candidates, fix_snippet

GENERATOR_VERSION = "1"

# A PASSED line is the id alone; the others may add " - message", so a failing id with " - " in it is cut there (only passes are counted by id).
_RESULT = re.compile(r"^(PASSED) (.+)$|^(FAILED|ERROR|XFAIL|XPASS|SKIPPED) (.+?)(?: - .*)?$")
_DROPPED = re.compile(r"(^|/)(__pycache__|[^/]*\.egg-info|\.git|\.tox|\.eggs)(/|$)|\.py[co]$")


class GenerationError(Exception):
    """A preset that cannot make its tasks: the message says why and what to do."""


def config_key(config: dict[str, Any]) -> str:
    keys = ("package", "version", "sha256", "seed", "tasks", "test_files", "source_paths", "import_root", "mutations", "max_per_function")
    fields = {k: config.get(k) for k in keys}
    # Only when there is one, so that the keys of presets without requirements stay as they were.
    if config.get("requirements"):
        fields["requirements"] = config["requirements"]["sha256"]
    text = json.dumps(fields, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def task_dir(config: dict[str, Any], cache: str) -> str:
    return os.path.join(cache, "swe", f"gen-{GENERATOR_VERSION}", f"{config['package']}-{config['version']}", config_key(config))


# --- the sdist --------------------------------------------------------------------------------


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def fetch_sdist(package: str, version: str, sha256: str, cache: str) -> bytes:
    """The sdist's bytes, checked against `sha256`: from the cache, ARL_SWE_SDISTS, or PyPI (then cached)."""
    folder = os.path.join(cache, "swe", "sdists")
    os.makedirs(folder, exist_ok=True)
    for where in [folder, os.environ.get("ARL_SWE_SDISTS", "")]:
        if not where or not os.path.isdir(where):
            continue
        for name in sorted(os.listdir(where)):
            if name.lower().startswith(f"{package.lower().replace('-', '_')}-{version}".lower()) or name.lower().startswith(f"{package}-{version}".lower()):
                with open(os.path.join(where, name), "rb") as f:
                    data = f.read()
                if _sha256(data) == sha256:
                    return data
    # pip, so that the machine's index settings (a mirror, a proxy) apply; its file is checked, never trusted.
    got = tempfile.mkdtemp(prefix=".download-", dir=folder)
    try:
        cmd = [sys.executable, "-m", "pip", "download", "--no-binary", package, "--no-deps", "--disable-pip-version-check", "-q", "-d", got]
        cmd.append(f"{package}=={version}")
        run = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        files = sorted(os.listdir(got))
        if run.returncode != 0 or not files:
            why = (run.stderr.strip().splitlines() or [f"exit status {run.returncode}"])[-1]
            raise GenerationError(f"pip download of {package}=={version} failed ({why}); put its sdist in $ARL_SWE_SDISTS to work offline")
        with open(os.path.join(got, files[0]), "rb") as f:
            data = f.read()
        if _sha256(data) != sha256:
            raise GenerationError(f"the downloaded {files[0]} has sha256 {_sha256(data)}, not the preset's {sha256}")
        os.replace(os.path.join(got, files[0]), os.path.join(folder, files[0]))
    finally:
        shutil.rmtree(got, ignore_errors=True)
    return data


def unpack(data: bytes, dest: str) -> None:
    """The sdist's files under `dest`, its top folder stripped; links, devices and escaping paths are refused, build leftovers dropped."""
    members: list[tuple[str, bytes | None]] = []
    if data[:2] == b"PK":
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            for info in z.infolist():
                members.append((info.filename, None if info.is_dir() else z.read(info)))
    else:
        with tarfile.open(fileobj=io.BytesIO(data)) as t:
            for m in t.getmembers():
                if m.isdir():
                    members.append((m.name, None))
                elif m.isfile():
                    f = t.extractfile(m)
                    members.append((m.name, f.read() if f else b""))
                # Links and devices are left out: a snapshot holds plain files.
    for name, content in members:
        parts = name.replace("\\", "/").split("/")[1:]
        rel = "/".join(p for p in parts if p not in ("", "."))
        if not rel or ".." in rel.split("/") or name.startswith("/"):
            continue
        if _DROPPED.search(rel):
            continue
        path = os.path.join(dest, rel)
        if content is None:
            os.makedirs(path, exist_ok=True)
        else:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as f:
                f.write(content)


# --- the tests' Python --------------------------------------------------------------------------


def _publish(work: str, final: str, marker: str) -> None:
    """Moves the finished folder ``work`` to ``final`` whole; when another process made ``final`` first
    (its ``marker`` file is there), keeps theirs and drops ``work``."""
    try:
        os.rename(work, final)
    except OSError:
        if not os.path.isfile(os.path.join(final, marker)):
            raise
        shutil.rmtree(work, ignore_errors=True)


def _python_tag(python: str) -> str:
    """The interpreter's cache tag and machine (cpython-311-x86_64): which wheels it takes."""
    code = "import platform, sys; print(sys.implementation.cache_tag + '-' + platform.machine())"
    run = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=60)
    if run.returncode != 0:
        raise GenerationError(f"cannot run {python}: {(run.stderr.strip().splitlines() or ['no output'])[-1]}")
    return run.stdout.strip()


def python_for_tests(config: dict[str, Any], cache: str, python: str, log=print) -> str:
    """The Python that runs the tests: `python` itself, or the venv of the preset's requirements (made from it when missing)."""
    req = config.get("requirements")
    if not req:
        return python
    with open(req["path"], "rb") as f:
        data = f.read()
    if _sha256(data) != req["sha256"]:
        raise GenerationError(f"the requirements file {req['path']} has sha256 {_sha256(data)}, not the plan's {req['sha256']}")
    folder = os.path.join(cache, "swe", "venvs")
    final = os.path.join(folder, f"{req['sha256'][:16]}-{_python_tag(python)}")
    made = os.path.join(final, "bin", "python")
    if os.path.isfile(os.path.join(final, "installed.txt")):
        return made
    os.makedirs(folder, exist_ok=True)
    work = tempfile.mkdtemp(prefix=".making-", dir=folder)
    try:
        t0 = time.monotonic()
        run = subprocess.run([python, "-m", "venv", work], capture_output=True, text=True, timeout=600)
        if run.returncode != 0:
            why = (run.stderr.strip().splitlines() or [f"exit status {run.returncode}"])[-1]
            raise GenerationError(f"cannot make a venv with {python} ({why}); Debian: apt-get install python3-venv")
        # Only `python -m` is run from it, so the venv may be renamed once filled.
        pip = [os.path.join(work, "bin", "python"), "-m", "pip", "install", "--disable-pip-version-check", "--no-input", "-q"]
        pip += ["--require-hashes", "-r", req["path"]]
        run = subprocess.run(pip, capture_output=True, text=True, timeout=1800)
        if run.returncode != 0:
            why = " | ".join(run.stderr.strip().splitlines()[-3:]) or f"exit status {run.returncode}"
            raise GenerationError(f"installing the requirements {req['path']} failed: {why}")
        freeze = subprocess.run([os.path.join(work, "bin", "python"), "-m", "pip", "freeze"], capture_output=True, text=True, timeout=120)
        with open(os.path.join(work, "installed.txt"), "w", encoding="utf-8") as f:
            f.write(freeze.stdout)
        log(f"requirements installed into {final} in {time.monotonic() - t0:.1f} s")
        _publish(work, final, "installed.txt")
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    return made


# --- running the tests ------------------------------------------------------------------------


def pytest_command(python: str, tests: list[str]) -> list[str]:
    return [python, "-m", "pytest", "-q", "-rA", "--tb=no", "-p", "no:cacheprovider", "-o", "addopts=", "-W", "ignore", *tests]


def parse_results(output: str) -> dict[str, str]:
    """pytest -rA's summary lines: test id -> PASSED, FAILED, ERROR, ..."""
    results: dict[str, str] = {}
    for line in output.splitlines():
        m = _RESULT.match(line)
        if m:
            results[m.group(2) or m.group(4)] = m.group(1) or m.group(3)
    return results


def run_tests(repo: str, config: dict[str, Any], python: str, timeout_s: float) -> dict[str, str]:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONPATH": os.path.join(repo, config.get("import_root", ".")),
        "HOME": repo,
        "LANG": "C.UTF-8",
    }
    try:
        run = subprocess.run(pytest_command(python, list(config["test_files"])), cwd=repo, env=env, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return {}
    return parse_results(run.stdout)


# --- generation -------------------------------------------------------------------------------


def _sources(snapshot: str, config: dict[str, Any]) -> list[str]:
    tests = {os.path.normpath(t) for t in config["test_files"]}
    out: list[str] = []
    for given in config["source_paths"]:
        root = os.path.join(snapshot, given)
        if os.path.isfile(root):
            out.append(os.path.normpath(given))
            continue
        if not os.path.isdir(root):
            raise GenerationError(f"source path '{given}' is not in the sdist")
        for folder, dirs, files in os.walk(root):
            dirs.sort()
            for f in sorted(files):
                rel = os.path.normpath(os.path.relpath(os.path.join(folder, f), snapshot))
                if f.endswith(".py") and rel not in tests and not f.startswith("test_") and "/tests/" not in f"/{rel}":
                    out.append(rel)
    return out


def _spread(cands: list[tuple[str, Any]], rng: random.Random) -> list[tuple[str, Any]]:
    """Candidates shuffled by `rng`, then taken one function at a time in turn, so tasks spread over functions."""
    by_fn: dict[tuple[str, str], list[tuple[str, Any]]] = {}
    for c in cands:
        by_fn.setdefault((c[0], c[1].function), []).append(c)
    groups = list(by_fn.values())
    for g in groups:
        rng.shuffle(g)
    rng.shuffle(groups)
    out: list[tuple[str, Any]] = []
    while any(groups):
        for g in groups:
            if g:
                out.append(g.pop())
    return out


def generate(config: dict[str, Any], cache: str, python: str = sys.executable, log=print) -> tuple[str, str]:
    """The task folder of `config` in `cache`, generated there when missing, and the Python that runs its tests."""
    python = python_for_tests(config, cache, python, log)
    final = task_dir(config, cache)
    if os.path.isfile(os.path.join(final, "tasks.jsonl")):
        return final, python
    t0 = time.monotonic()
    kinds = [k for k in config.get("mutations") or MUTATION_KINDS if k in MUTATION_KINDS]
    data = fetch_sdist(config["package"], config["version"], config["sha256"], cache)
    parent = os.path.dirname(final)
    os.makedirs(parent, exist_ok=True)
    work = tempfile.mkdtemp(prefix=".making-", dir=parent)
    try:
        snapshot = os.path.join(work, "snapshot")
        unpack(data, snapshot)
        for t in config["test_files"]:
            if not os.path.isfile(os.path.join(snapshot, t)):
                where = f"{config['package']} {config['version']}"
                raise GenerationError(f"test file '{t}' is not in the sdist of {where}: pick a package whose sdist ships its tests")
        timeout = float(config.get("test_timeout_s", 120))
        t_gold = time.monotonic()
        first = run_tests(snapshot, config, python, timeout)
        second = run_tests(snapshot, config, python, timeout)
        gold_s = (time.monotonic() - t_gold) / 2
        selectable = sorted(t for t, r in first.items() if r == "PASSED" and second.get(t) == "PASSED")
        if not selectable:
            raise GenerationError(f"no test of {config['test_files']} passes on the gold code of {config['package']} {config['version']} with {python}")
        files = _sources(snapshot, config)
        pool: list[tuple[str, Any]] = []
        for rel in files:
            with open(os.path.join(snapshot, rel), encoding="utf-8") as f:
                source = f.read()
            pool.extend((rel, c) for c in candidates(source, kinds))
        rng = random.Random(int(config.get("seed", 0)))
        order = _spread(pool, rng)
        wanted = int(config["tasks"])
        per_fn = int(config.get("max_per_function", 3))
        taken: dict[tuple[str, str], int] = {}
        tasks: list[dict[str, Any]] = []
        tried = 0
        scratch = os.path.join(work, "scratch")
        shutil.copytree(snapshot, scratch)
        pass_set = set(selectable)
        for rel, cand in order:
            if len(tasks) >= wanted:
                break
            fn_key = (rel, cand.function)
            if taken.get(fn_key, 0) >= per_fn:
                continue
            tried += 1
            target = os.path.join(scratch, rel)
            with open(os.path.join(snapshot, rel), encoding="utf-8") as f:
                gold = f.read()
            with open(target, "w", encoding="utf-8") as f:
                f.write(cand.text)
            results = run_tests(scratch, config, python, timeout)
            with open(target, "w", encoding="utf-8") as f:
                f.write(gold)
            if not results:
                continue  # timed out or did not run: not a clean bug
            failing = sorted(t for t in selectable if results.get(t) != "PASSED")
            if not failing:
                continue
            old, new = fix_snippet(gold, cand.text)
            taken[fn_key] = taken.get(fn_key, 0) + 1
            tasks.append(
                {
                    "id": len(tasks),
                    "file": rel,
                    "function": cand.function,
                    "kind": cand.kind,
                    "line": cand.line,
                    "what": cand.what,
                    "buggy_source": cand.text,
                    "fix": {"path": rel, "old": old, "new": new},
                    "fail_to_pass": failing,
                    "pass_to_pass": sorted(pass_set - set(failing)),
                }
            )
            log(f"task {len(tasks)}/{wanted}: {rel} {cand.function} {cand.kind} ({cand.what}), {len(failing)} failing")
        shutil.rmtree(scratch)
        if len(tasks) < wanted:
            found = f"only {len(tasks)} of {wanted} tasks found ({tried} candidates tried of {len(order)})"
            raise GenerationError(f"{config['package']} {config['version']}: {found}; ask for fewer tasks or more mutation kinds")
        with open(os.path.join(work, "tasks.jsonl"), "w", encoding="utf-8") as f:
            for t in tasks:
                f.write(json.dumps(t, sort_keys=True) + "\n")
        meta = {
            "generator_version": GENERATOR_VERSION,
            "config": config,
            "python": sys.version.split()[0] if python == sys.executable else python,
            "requirements_sha256": (config.get("requirements") or {}).get("sha256"),
            "selectable_tests": len(selectable),
            "candidates": len(order),
            "tried": tried,
            "kept": len(tasks),
            "gold_test_run_s": round(gold_s, 3),
            "seconds": round(time.monotonic() - t0, 3),
        }
        with open(os.path.join(work, "meta.json"), "w", encoding="utf-8") as f:
            json.dump(meta, f, indent=1, sort_keys=True)
        _publish(work, final, "tasks.jsonl")
        return final, python
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
