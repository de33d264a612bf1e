"""Real agent frameworks as agent programs, unmodified: `arl run` of each arm of
experiments/agents/frameworks.arl (the OpenAI Agents SDK on the Responses API, LangGraph's
prebuilt ReAct agent and smolagents' ToolCallingAgent on chat completions, a plain Anthropic SDK
loop on the Messages API) for two iterations on builtin:tiny. Every episode must reach the
gateway without an env error, and every record must hold what the session served: generated
tokens with their policy version and log-prob, and no call that rewrote the served history.
smolagents asks for every step's call with tool_choice "required": its records must hold the
forced call opening as rendered context (no version, log-prob 0) right before the sampled ids,
and the served reply must begin with it (docs/gateway.md#forced-tool-calls).
"""

from __future__ import annotations

import json
import math
import shutil
import sys
from pathlib import Path

import pytest
from run_records import ROLE, arl_run, buffer_records

EXAMPLES = Path(__file__).resolve().parents[2] / "experiments" / "agents"
ARMS = {"openai_agents": "agents", "langgraph": "langgraph.prebuilt", "smolagents": "smolagents", "anthropic": "anthropic"}


@pytest.mark.parametrize("arm", list(ARMS))
def test_the_framework_runs_two_iterations_without_env_errors(arm, tmp_path):
    pytest.importorskip(ARMS[arm])
    pytest.importorskip("langchain_openai" if arm == "langgraph" else ARMS[arm])
    base = tmp_path / "agents"
    shutil.copytree(EXAMPLES, base, ignore=shutil.ignore_patterns("*.lock"))
    # The spec names the repository's .venv Python relative to its folder; copied elsewhere, the
    # programs run on this Python (the one with the frameworks), as a user names their own.
    spec = base / "frameworks.arl"
    spec.write_text(spec.read_text().replace('"../../.venv/bin/python"', json.dumps(sys.executable)))
    run_dir = arl_run(Path(f"{base / 'frameworks.arl'}#frameworks/{arm}"), tmp_path / "runs")
    metrics = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    assert [m["iteration"] for m in metrics] == [1, 2]
    assert all(m["env_errors"] == 0 and m["agent_errors"] == 0 for m in metrics), metrics
    assert all(m["gateway_rewrites"] == 0 for m in metrics)
    records = buffer_records(run_dir / "buffer.arlbuf")
    assert len(records) == 2 * 2 * 2  # iterations x tasks x group
    assert all(r.get("error") is None for r in records), [r.get("error") for r in records]
    assert sum(m["gateway_calls"] for m in metrics) >= len(records)
    for r in records:
        generated = [k for k, role in enumerate(r["roles"]) if int(role) == ROLE["generated"]]
        assert generated, "a record without a generated token"
        assert all(int(r["versions"][k]) >= 0 and math.isfinite(float(r["logprobs"][k])) for k in generated)
        if arm == "smolagents":
            first = generated[0]
            forced = [k for k in range(first) if int(r["roles"][k]) == ROLE["rendered"]]
            assert forced and forced == list(range(forced[0], first)), "the forced opening is not right before the first sampled token"
            assert all(int(r["versions"][k]) == -1 and float(r["logprobs"][k]) == 0.0 for k in forced)
            replies = [m for m in r["messages"] if m["role"] == "assistant"]
            assert replies and replies[0]["content"].startswith("<tool_call>\n"), replies[:1]
