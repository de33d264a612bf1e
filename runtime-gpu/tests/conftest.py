import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import require_built

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for p in (ROOT, os.path.dirname(os.path.abspath(__file__))):
    if p not in sys.path:
        sys.path.insert(0, p)

try:
    import torch

    torch.set_num_threads(min(2, torch.get_num_threads() or 1))
except ImportError:  # the suite reports the missing torch per test (importorskip)
    pass


class ScriptedGateway:
    """The line protocol of test/gateway/fixtures/scripted-gateway.mjs: one command in, one JSON line out."""

    def __init__(self, process):
        self.process = process

    def ask(self, command):
        self.process.stdin.write(command + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise AssertionError(f"the scripted gateway exited: {self.process.stderr.read()}")
        return json.loads(line)

    def open(self):
        """A new session: {"id", "baseUrl", "anthropicBaseUrl", "apiKey"}."""
        return self.ask("open")

    def client(self):
        import openai

        session = self.open()
        return session["id"], openai.OpenAI(base_url=session["baseUrl"], api_key=session["apiKey"], max_retries=0)


@pytest.fixture(scope="module")
def gateway():
    """One Node process serving the agent gateway over a scripted model for the whole module (needs dist/: npm run build)."""
    repo = Path(__file__).resolve().parents[2]
    server = repo / "dist" / "inference" / "gateway" / "server.js"
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not on PATH")
    require_built(server)
    script = repo / "test" / "gateway" / "fixtures" / "scripted-gateway.mjs"
    process = subprocess.Popen([node, str(script)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        yield ScriptedGateway(process)
    finally:
        process.stdin.close()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
