"""End to end on a real model stack: `arl run` of a spec whose policy is a local random Qwen3
(built by transformers from its config, with the real Qwen3 tokenizer and chat template), on the
PyTorch trainer: a supervised cold start on walkthroughs, then GRPO iterations, multi-turn with
tool calls. Every trajectory in the run's token buffer is then checked against the template and
tokenizer themselves (transformers), not against ARL's own code:

- prefix continuity: the text of the trajectory is exactly the template's rendering of its
  conversation (tools in the system turn, each tool result after the end-of-turn token the model
  generated, the generation prompt after it), so each turn's context began with the previous one;
- observations and prompts are tokenized once: every span the model did not generate holds the
  tokenizer's own ids for its text;
- generated spans are what was sampled (a policy version and a log-probability on every token).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from arl_trainer.framing import read_frame

from hf_models import REPO, make_model_dir

pytest.importorskip("transformers")

ROLE = {"system": 0, "prompt": 1, "generated": 2, "observation": 3, "padding": 4, "pool": 5}

SPEC = """
import "std/algorithms" as algo
import "std/envs/rooms" as rooms

experiment qwen3_local {
  seed: 0
  policy {
    model: "MODEL_DIR"
    sampling { temperature: 1.0, max_new_tokens: 40 }
  }
  env quest extends rooms.world {
    rooms: 2
    objects: 3
    quest_length: 2
    optimal_steps: 2
  }
  harness {
    tools: quest.tools
    format: function_call
    context { history: exact }
    max_turns: 4
    max_response_tokens: 40
    on_budget: truncate
  }
  reward { success: outcome.success }
  algorithm extends algo.grpo { group_size: 2 }
  rollout {
    tasks_per_batch: 2
    iterations: 2
    sft { demos: 16, epochs: 4, batch: 8, lr: 0.01 }
  }
  eval { split: test, every: 2, tasks: 2, before_training: false }
  resources { backend: torch }
}
"""


def _arl() -> list[str]:
    cli = REPO / "dist" / "cli" / "main.js"
    if not cli.exists():
        if os.environ.get("CI"):
            pytest.fail(f"{cli} is missing: npm test builds it before the Python tests")
        pytest.skip(f"{cli} is missing (run npm run build)")
    return [shutil.which("node") or "node", str(REPO / "bin" / "arl.js")]


def _records(buffer: Path) -> list[dict]:
    out = []
    with open(buffer, "rb") as f:
        while (r := read_frame(f)) is not None:
            out.append(r)
    return out


def _spans(roles: list[int]) -> list[tuple[int, int, int]]:
    spans, start = [], 0
    for k in range(1, len(roles) + 1):
        if k == len(roles) or roles[k] != roles[start]:
            spans.append((roles[start], start, k))
            start = k
    return spans


@pytest.fixture(scope="module")
def qwen3_run(tmp_path_factory):
    base = tmp_path_factory.mktemp("qwen3-run")
    model = make_model_dir(base / "model", arch="qwen3", tokenizer="qwen3", layers=2, hidden=32, seed=0)
    spec = base / "qwen3.arl"
    spec.write_text(SPEC.replace("MODEL_DIR", str(model)))
    env = {**os.environ, "ARL_PYTHON": sys.executable, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "2")}
    done = subprocess.run([*_arl(), "run", str(spec), "--out", str(base / "runs")], cwd=REPO, env=env, capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, f"arl run failed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    (run_dir,) = [p.parent for p in (base / "runs").rglob("plan.json")]
    return model, run_dir


def test_the_run_trains_multi_turn_episodes_with_tool_calls(qwen3_run):
    _, run_dir = qwen3_run
    metrics = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    assert [m["iteration"] for m in metrics] == [1, 2]
    assert all(m["policy_version"] > 0 for m in metrics)
    records = _records(run_dir / "buffer.arlbuf")
    assert len(records) == 2 * 2 * 2  # iterations x tasks x group
    assert max(r["turns"] for r in records) > 1, "no episode had a second turn"
    assert sum(len(r["toolCalls"]) for r in records) > 0


def test_every_trajectory_is_the_templates_own_rendering(qwen3_run):
    from transformers import AutoTokenizer

    model, run_dir = qwen3_run
    tok = AutoTokenizer.from_pretrained(str(model))
    eot = tok.convert_tokens_to_ids("<|im_end|>")
    for r in _records(run_dir / "buffer.arlbuf"):
        ids = [int(i) for i in r["ids"]]
        roles = [int(x) for x in r["roles"]]
        messages, tools = r["messages"], r.get("tools") or None
        last_generated_cut = roles[-1] == ROLE["generated"] and ids[-1] != eot
        conversation = messages[:-1] if last_generated_cut else messages
        prompt = not last_generated_cut and messages[-1]["role"] != "assistant"
        rendered = tok.apply_chat_template(conversation, tools=tools, tokenize=False, add_generation_prompt=prompt)
        text = tok.decode(ids)
        if last_generated_cut:
            # a turn cut by the token budget: the template's prompt, then what was sampled
            assert text.startswith(rendered)
        else:
            assert text == rendered


def test_spans_the_model_did_not_generate_are_tokenized_once(qwen3_run):
    from transformers import AutoTokenizer

    model, run_dir = qwen3_run
    tok = AutoTokenizer.from_pretrained(str(model))
    for r in _records(run_dir / "buffer.arlbuf"):
        ids = [int(i) for i in r["ids"]]
        roles = [int(x) for x in r["roles"]]
        versions = [int(v) for v in r["versions"]]
        logprobs = [float(x) for x in r["logprobs"]]
        for role, a, b in _spans(roles):
            if role == ROLE["generated"]:
                assert all(v >= 0 for v in versions[a:b])
                assert all(lp <= 0 for lp in logprobs[a:b]) and any(lp < 0 for lp in logprobs[a:b])
            else:
                assert all(v == -1 for v in versions[a:b])
                assert tok(tok.decode(ids[a:b]), add_special_tokens=False)["input_ids"] == ids[a:b]
