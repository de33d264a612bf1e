"""The SWE task generator (arl_swe): mutations, the fix snippet, unpacking and a whole generation on a tiny sdist made here (no network)."""

from __future__ import annotations

import ast
import base64
import hashlib
import io
import json
import os
import subprocess
import sys
import tarfile
import zipfile

import pytest

from arl_swe.generate import GenerationError, config_key, generate, parse_results, python_for_tests, task_dir, unpack
from arl_swe.mutate import candidates, fix_snippet

SOURCE = '''def clamp(x, lo, hi):
    """x within [lo, hi]."""
    if x < lo:
        return lo
    if x > hi:
        return hi
    return x


def head(xs, n):
    return xs[0:n]


def diff(a, b):
    return a - b
'''

TESTS = """from mini import clamp, diff, head


def test_clamp_low():
    assert clamp(-1, 0, 5) == 0


def test_clamp_high():
    assert clamp(9, 0, 5) == 5


def test_clamp_edge():
    assert clamp(5, 0, 5) == 5


def test_head():
    assert head([1, 2, 3], 2) == [1, 2]


def test_diff():
    assert diff(5, 3) == 2
"""


def _sdist(files: dict[str, str]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as t:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(f"mini-1.0/{name}")
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
        link = tarfile.TarInfo("mini-1.0/escape")
        link.type = tarfile.SYMTYPE
        link.linkname = "/etc/passwd"
        t.addfile(link)
    return buf.getvalue()


def test_every_kind_of_candidate_parses_and_differs():
    cands = candidates(SOURCE)
    kinds = {c.kind for c in cands}
    assert kinds == {"flip_comparison", "off_by_one", "swap_operands", "drop_statement"}
    for c in cands:
        ast.parse(c.text)
        assert c.text != SOURCE
    assert any(c.kind == "swap_operands" and "return b - a" in c.text for c in cands)
    assert any(c.kind == "flip_comparison" and "if x <= lo:" in c.text for c in cands)


def test_fix_snippet_occurs_once_and_restores_the_gold_text():
    for c in candidates(SOURCE):
        old, new = fix_snippet(SOURCE, c.text)
        assert c.text.count(old) == 1
        assert c.text.replace(old, new) == SOURCE


def test_unpack_strips_the_top_folder_and_drops_links(tmp_path):
    unpack(_sdist({"mini.py": SOURCE, "mini.egg-info/PKG-INFO": "x"}), str(tmp_path))
    assert sorted(os.listdir(tmp_path)) == ["mini.py"]


def test_parse_results_reads_the_summary():
    # A passing id is read whole (only passes are counted by id); a failing one up to its message.
    out = "PASSED t.py::test_a[x - y]\nFAILED t.py::test_b - assert 1 == 2\nERROR t.py::test_c\n"
    assert parse_results(out) == {"t.py::test_a[x - y]": "PASSED", "t.py::test_b": "FAILED", "t.py::test_c": "ERROR"}


def _config(data: bytes, **over) -> dict:
    base = {
        "package": "mini",
        "version": "1.0",
        "sha256": hashlib.sha256(data).hexdigest(),
        "seed": 0,
        "tasks": 3,
        "test_files": ["test_mini.py"],
        "source_paths": ["mini.py"],
        "import_root": ".",
        "max_per_function": 1,
        "test_timeout_s": 60,
    }
    return {**base, **over}


@pytest.mark.slow
def test_generation_keeps_bugs_the_tests_catch_and_caches(tmp_path, monkeypatch):
    data = _sdist({"mini.py": SOURCE, "test_mini.py": TESTS})
    sdists = tmp_path / "sdists"
    sdists.mkdir()
    (sdists / "mini-1.0.tar.gz").write_bytes(data)
    monkeypatch.setenv("ARL_SWE_SDISTS", str(sdists))
    config = _config(data)
    folder, python = generate(config, str(tmp_path / "cache"), python=sys.executable, log=lambda _: None)
    assert python == sys.executable  # no requirements: the given Python runs the tests
    assert folder == task_dir(config, str(tmp_path / "cache"))
    tasks = [json.loads(line) for line in open(os.path.join(folder, "tasks.jsonl"))]
    assert len(tasks) == 3
    assert len({t["function"] for t in tasks}) == 3  # one a function
    for t in tasks:
        assert t["fail_to_pass"] and not set(t["fail_to_pass"]) & set(t["pass_to_pass"])
        names = ("test_clamp_low", "test_clamp_high", "test_clamp_edge", "test_head", "test_diff")
        assert set(t["fail_to_pass"]) | set(t["pass_to_pass"]) == {f"test_mini.py::{n}" for n in names}
        assert t["buggy_source"].replace(t["fix"]["old"], t["fix"]["new"]) == SOURCE
    # Cached: the same folder, not made again (the sdist is no longer needed).
    (sdists / "mini-1.0.tar.gz").unlink()
    assert generate(config, str(tmp_path / "cache"), python=sys.executable) == (folder, sys.executable)
    # Another seed is another key.
    assert task_dir({**config, "seed": 1}, "c") != task_dir(config, "c")


def test_a_wrong_sha256_is_refused(tmp_path, monkeypatch):
    data = _sdist({"mini.py": SOURCE, "test_mini.py": TESTS})
    (tmp_path / "mini-1.0.tar.gz").write_bytes(data)
    monkeypatch.setenv("ARL_SWE_SDISTS", str(tmp_path))
    monkeypatch.setenv("PIP_INDEX_URL", "http://127.0.0.1:9/simple")
    monkeypatch.setenv("PIP_RETRIES", "0")
    with pytest.raises(GenerationError, match="pip download of mini==1.0 failed"):
        generate(_config(data, sha256="0" * 64), str(tmp_path / "cache"))


def _wheel(folder) -> str:
    """A wheel of one pure module, minidep 1.0 (DEP = 42), written into `folder`; its path."""
    files = {
        "minidep/__init__.py": "DEP = 42\n",
        "minidep-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: minidep\nVersion: 1.0\n",
        "minidep-1.0.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    records = []
    for name, text in files.items():
        digest = hashlib.sha256(text.encode()).digest()
        records.append(f"{name},sha256={base64.urlsafe_b64encode(digest).rstrip(b'=').decode()},{len(text.encode())}")
    records.append("minidep-1.0.dist-info/RECORD,,")
    path = os.path.join(folder, "minidep-1.0-py3-none-any.whl")
    with zipfile.ZipFile(path, "w") as z:
        for name, text in files.items():
            z.writestr(name, text)
        z.writestr("minidep-1.0.dist-info/RECORD", "\n".join(records) + "\n")
    return path


def test_requirements_get_a_venv_of_their_own_made_once_and_checked(tmp_path, monkeypatch):
    monkeypatch.setenv("PIP_NO_INDEX", "1")  # offline: the one requirement is a local wheel
    wheel = _wheel(str(tmp_path))
    digest = hashlib.sha256(open(wheel, "rb").read()).hexdigest()
    req = tmp_path / "requirements.txt"
    req.write_text(f"minidep @ file://{wheel} --hash=sha256:{digest}\n")
    req_sha = hashlib.sha256(req.read_bytes()).hexdigest()
    config = {"requirements": {"path": str(req), "sha256": req_sha}}
    cache = str(tmp_path / "cache")
    python = python_for_tests(config, cache, sys.executable, log=lambda _: None)
    assert python.startswith(os.path.join(cache, "swe", "venvs", req_sha[:16]))
    run = subprocess.run([python, "-c", "import minidep, sys; print(minidep.DEP, sys.prefix != sys.base_prefix)"], capture_output=True, text=True)
    assert run.stdout.split() == ["42", "True"], run.stderr
    # Made once: the same Python, not made again (the wheel is no longer needed).
    os.unlink(wheel)
    assert python_for_tests(config, cache, sys.executable, log=lambda _: None) == python
    # No requirements: the given Python; a file that is not the plan's is refused.
    assert python_for_tests({}, cache, sys.executable) == sys.executable
    with pytest.raises(GenerationError, match="not the plan's"):
        python_for_tests({"requirements": {"path": str(req), "sha256": "0" * 64}}, cache, sys.executable)
    # The requirements are part of the tasks' key; a preset without any keeps its key.
    base = _config(b"x")
    assert config_key({**base, **config}) != config_key(base)
    assert config_key({**base, "requirements": None}) == config_key(base)


def test_a_requirement_without_a_hash_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    wheel = _wheel(str(tmp_path))
    req = tmp_path / "requirements.txt"
    req.write_text(f"minidep @ file://{wheel}\n")
    config = {"requirements": {"path": str(req), "sha256": hashlib.sha256(req.read_bytes()).hexdigest()}}
    with pytest.raises(GenerationError, match="installing the requirements"):
        python_for_tests(config, str(tmp_path / "cache"), sys.executable)
    assert not os.listdir(tmp_path / "cache" / "swe" / "venvs")  # nothing half-made is left
