"""`arl run` from a test, and the token buffer it writes: what the end-to-end tests on a real
model stack (test_hf_run.py, test_hf_gateway_run.py) share."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from helpers import require_built
from hf_models import REPO

from arl_trainer.framing import read_frame

# src/episode/buffer.ts, Role
ROLE = {"system": 0, "prompt": 1, "generated": 2, "observation": 3, "padding": 4, "pool": 5, "rendered": 6}


def arl_command() -> list[str]:
    cli = REPO / "dist" / "cli" / "main.js"
    require_built(cli)
    return [shutil.which("node") or "node", str(REPO / "bin" / "arl.js")]


def arl_run(spec: Path, out: Path) -> Path:
    """Runs `arl run spec --out out` on this Python (its torch, transformers and openai: first on
    PATH too, for agent programs) and returns the run directory."""
    return arl_run_printing(spec, out)[0]


def arl_run_printing(spec: Path, out: Path) -> tuple[Path, str]:
    """arl_run, and what the run printed on its standard output."""
    env = {
        **os.environ,
        "ARL_PYTHON": sys.executable,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "2"),
    }
    done = subprocess.run([*arl_command(), "run", str(spec), "--out", str(out)], cwd=REPO, env=env, capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, f"arl run failed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    (run_dir,) = [p.parent for p in out.rglob("plan.json")]
    return run_dir, done.stdout


def buffer_records(buffer: Path) -> list[dict]:
    out = []
    with open(buffer, "rb") as f:
        while (r := read_frame(f)) is not None:
            out.append(r)
    return out


def role_spans(roles: list[int]) -> list[tuple[int, int, int]]:
    """Runs of one role: (role, start, end)."""
    spans, start = [], 0
    for k in range(1, len(roles) + 1):
        if k == len(roles) or roles[k] != roles[start]:
            spans.append((roles[start], start, k))
            start = k
    return spans


def assert_spans_tokenized_once(tok, records: list[dict]) -> None:
    """Generated spans are sampled ids (a policy version and a log-prob on each); every other
    span holds the tokenizer's own ids for its text, so it was tokenized once, never re-tokenized
    from text joined with a generated turn."""
    for r in records:
        ids = [int(i) for i in r["ids"]]
        versions = [int(v) for v in r["versions"]]
        logprobs = [float(x) for x in r["logprobs"]]
        for role, a, b in role_spans([int(x) for x in r["roles"]]):
            if role == ROLE["generated"]:
                assert all(v >= 0 for v in versions[a:b])
                assert all(lp <= 0 for lp in logprobs[a:b]) and any(lp < 0 for lp in logprobs[a:b])
            else:
                assert all(v == -1 for v in versions[a:b])
                assert tok(tok.decode(ids[a:b]), add_special_tokens=False)["input_ids"] == ids[a:b]
