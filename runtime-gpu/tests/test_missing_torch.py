"""Without a usable PyTorch the trainer says how to install it and exits with status 2, no traceback."""
import os
import subprocess
import sys

from helpers import ROOT, trainer_env

BLOCKER = """
import sys
class _NoTorch:
    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            raise ImportError("No module named 'torch' (blocked for a test)")
        return None
sys.meta_path.insert(0, _NoTorch())
"""


def run_trainer(extra_path: str) -> subprocess.CompletedProcess:
    env = trainer_env()
    env["PYTHONPATH"] = extra_path + os.pathsep + env["PYTHONPATH"]
    return subprocess.run([sys.executable, "-m", "arl_trainer"], input=b"", capture_output=True, env=env, cwd=ROOT, timeout=60)


def test_missing_torch(tmp_path):
    (tmp_path / "sitecustomize.py").write_text(BLOCKER)
    res = run_trainer(str(tmp_path))
    err = res.stderr.decode()
    assert res.returncode == 2, err
    assert "install PyTorch: pip install -r runtime-gpu/requirements.txt" in err
    assert "Traceback" not in err
    assert res.stdout == b""


def test_too_old_torch(tmp_path):
    (tmp_path / "torch").mkdir()
    (tmp_path / "torch" / "__init__.py").write_text('__version__ = "1.10.2+cpu"\n')
    res = run_trainer(str(tmp_path))
    err = res.stderr.decode()
    assert res.returncode == 2, err
    assert "too old" in err and "1.10.2" in err and "install PyTorch" in err
    assert "Traceback" not in err
