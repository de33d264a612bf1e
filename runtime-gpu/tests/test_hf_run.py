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
from pathlib import Path

import pytest
from hf_models import make_model_dir
from run_records import ROLE, arl_run, assert_spans_tokenized_once, buffer_records, role_spans

pytest.importorskip("transformers")

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
    sft { demos: 16, epochs: 10, batch: 4, lr: 0.02 }
  }
  eval { split: test, every: 2, tasks: 2, before_training: false }
  resources { backend: torch }
}
"""


@pytest.fixture(scope="module")
def qwen3_model(tmp_path_factory):
    return make_model_dir(tmp_path_factory.mktemp("qwen3-model"), arch="qwen3", tokenizer="qwen3", layers=2, hidden=32, seed=0)


def _run(base: Path, model: Path, history: str) -> Path:
    spec = base / "qwen3.arl"
    spec.write_text(SPEC.replace("MODEL_DIR", str(model)).replace("history: exact", f"history: {history}"))
    return arl_run(spec, base / "runs")


@pytest.fixture(scope="module")
def qwen3_run(tmp_path_factory, qwen3_model):
    return qwen3_model, _run(tmp_path_factory.mktemp("qwen3-exact"), qwen3_model, "exact")


def test_the_run_trains_multi_turn_episodes_with_tool_calls(qwen3_run):
    _, run_dir = qwen3_run
    metrics = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    assert [m["iteration"] for m in metrics] == [1, 2]
    assert all(m["policy_version"] > 0 for m in metrics)
    records = buffer_records(run_dir / "buffer.arlbuf")
    assert len(records) == 2 * 2 * 2  # iterations x tasks x group
    assert max(r["turns"] for r in records) > 1, "no episode had a second turn"
    assert sum(len(r["toolCalls"]) for r in records) > 0


def test_every_trajectory_is_the_templates_own_continuation(qwen3_run):
    """history exact, checked with the template itself: the context before the first turn is the
    template's rendering of the system and user messages with the generation prompt; every turn
    is the model's own ids, ending on its end-of-turn token unless the budget cut it; and what
    follows a turn is exactly what the template writes after that turn's <|im_end|> when it
    renders the conversation with the tool result (its "\n", the tool turn, the next generation
    prompt). Qwen3 rewrites earlier assistant turns when it renders them again (it drops their
    empty think block), so the whole trajectory is NOT a re-rendering, and must not be."""
    from transformers import AutoTokenizer

    model, run_dir = qwen3_run
    tok = AutoTokenizer.from_pretrained(str(model))
    eot = tok.convert_tokens_to_ids("<|im_end|>")
    rewritten = 0
    for r in buffer_records(run_dir / "buffer.arlbuf"):
        ids = [int(i) for i in r["ids"]]
        spans = role_spans([int(x) for x in r["roles"]])
        messages, tools = r["messages"], r["tools"]
        first = next(k for k, m in enumerate(messages) if m["role"] == "assistant") if any(m["role"] == "assistant" for m in messages) else len(messages)
        generated = [(a, b) for role, a, b in spans if role == ROLE["generated"]]
        assert tok.decode(ids[: generated[0][0]]) == tok.apply_chat_template(messages[:first], tools=tools, tokenize=False, add_generation_prompt=True)
        # the conversation with each assistant turn as the model wrote it
        turns = iter(tok.decode(ids[a:b][:-1] if ids[b - 1] == eot else ids[a:b]) for a, b in generated)
        sampled = [{"role": "assistant", "content": next(turns)} if m["role"] == "assistant" else m for m in messages]
        for t, (_a, b) in enumerate(generated):
            last = t == len(generated) - 1
            assert ids[b - 1] == eot or (last and b == len(ids)), "a turn that is not the last ends without <|im_end|>"
            if b == len(ids):
                break
            nxt = next(a2 for a2, _ in generated[t + 1 :]) if not last else len(ids)
            tool_index = [k for k, m in enumerate(sampled) if m["role"] == "assistant"][t] + 1
            upto = sampled[: tool_index + 1]
            assert upto[-1]["role"] == "tool"
            full = tok.apply_chat_template(upto, tools=tools, tokenize=False, add_generation_prompt=True)
            after_turn = full.rindex("<|im_end|>", 0, full.rindex(upto[-1]["content"])) + len("<|im_end|>")
            assert tok.decode(ids[b:nxt]) == full[after_turn:]
        whole = tok.apply_chat_template(sampled, tools=tools, tokenize=False, add_generation_prompt=sampled[-1]["role"] != "assistant")
        rewritten += tok.decode(ids) != whole
    # the model learnt Qwen3's empty think block from the cold start: re-rendering drops it
    assert rewritten > 0


def test_spans_the_model_did_not_generate_are_tokenized_once(qwen3_run):
    from transformers import AutoTokenizer

    model, run_dir = qwen3_run
    assert_spans_tokenized_once(AutoTokenizer.from_pretrained(str(model)), buffer_records(run_dir / "buffer.arlbuf"))


def test_rerender_trains_each_call_on_the_templates_rendering(tmp_path, qwen3_model):
    """history rerender on the same model: one buffer record per model call, whose context is the
    template's own rendering of the conversation before that call (earlier turns re-rendered from
    their parsed text and calls, so Qwen3 drops their think blocks), then the call's sampled ids."""
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(qwen3_model))
    records = buffer_records(_run(tmp_path, qwen3_model, "rerender") / "buffer.arlbuf")
    assert all("step" in r for r in records)
    assert max(r["step"] for r in records) > 0, "no episode had a second call"
    for r in records:
        roles = [int(x) for x in r["roles"]]
        ids = [int(i) for i in r["ids"]]
        generated = [(a, b) for role, a, b in role_spans(roles) if role == ROLE["generated"]]
        assert len(generated) == 1, "a step-wise sample trains exactly one call"
        a, b = generated[0]
        assert b == len(ids) and all(int(v) >= 0 for v in r["versions"][a:b])
        before = [k for k, m in enumerate(r["messages"]) if m["role"] == "assistant"]
        upto = r["messages"][: before[r["step"]]] if r["step"] < len(before) else r["messages"]
        assert tok.decode(ids[:a]) == tok.apply_chat_template(upto, tools=r["tools"], tokenize=False, add_generation_prompt=True)
