"""Without the jsonschema package (the requests' schema check) the trainer names the package and
how to install it, and exits with status 2, no traceback."""
import os
import subprocess
import sys

import pytest
from helpers import ROOT, trainer_env

pytest.importorskip("torch")

BLOCKER = """
import sys
class _NoJsonschema:
    def find_spec(self, name, path=None, target=None):
        if name == "jsonschema" or name.startswith("jsonschema."):
            raise ImportError("No module named 'jsonschema' (blocked for a test)")
        return None
sys.meta_path.insert(0, _NoJsonschema())
"""


def test_missing_jsonschema(tmp_path):
    (tmp_path / "sitecustomize.py").write_text(BLOCKER)
    env = trainer_env()
    env["PYTHONPATH"] = str(tmp_path) + os.pathsep + env["PYTHONPATH"]
    res = subprocess.run([sys.executable, "-m", "arl_trainer", "--device", "cpu"], input=b"", capture_output=True, env=env, cwd=ROOT, timeout=120)
    err = res.stderr.decode()
    assert res.returncode == 2, err
    assert "'jsonschema' package" in err and "pip install jsonschema" in err
    assert "Traceback" not in err
    assert res.stdout == b""
