"""The multi-turn peer benchmark's Python side (bench/tool_peer_env.py, bench/tool_side_by_side.py,
src/bench/peer-tools.ts): every side scores the same answer text, the tool answers as ARL's
built-in `lookup` does, and the floor counts a call only when it is one well-formed hermes call."""

import os
import sys

import pytest
from helpers import ROOT

sys.path.insert(0, os.path.join(ROOT, "bench"))

from tool_peer_env import LookupEnv, compute_score, lookup_result  # noqa: E402


def test_the_answer_scores_alike_with_or_without_the_templates_empty_think_block():
    # ARL's harness keeps the block in the turn's text; TRL's parser drops it from the content.
    for answer in ("42", "It is 41.", "no"):
        assert compute_score(None, f"<think>\n\n</think>\n\n{answer}", 42) == compute_score(None, answer, 42)
    right, near = compute_score(None, "42", 42), compute_score(None, "41", 42)
    assert right["acc"] is True and right["score"] > 1 and 0 < near["score"] < 1


def test_the_tool_answers_as_arls_dataset_lookup():
    facts = {"a": "17", "b": "25"}
    assert lookup_result(facts, "a") == "17"
    # src/envs/adapters/dataset/tools.ts: the unknown key, then the keys there are.
    assert lookup_result(facts, "c") == "No entry 'c'. Keys: a, b."
    assert lookup_result(facts, 3) == "Error: 'lookup' takes a string 'key'."
    env = LookupEnv()
    env.reset(prompt="Look up a and b, then reply with their sum.", answer=42, facts=facts)
    assert [env.lookup("a"), env.lookup("b")] == ["17", "25"] and env.calls == 2
    env.reset(facts=facts)
    assert env.calls == 0


def test_the_floor_counts_only_well_formed_calls():
    pytest.importorskip("torch")
    from tool_side_by_side import parsed_call

    good = '<tool_call>\n{"name": "lookup", "arguments": {"key": "a"}}\n</tool_call>'
    assert parsed_call(good) == {"name": "lookup", "arguments": {"key": "a"}}
    for bad in (
        '<tool_call>\n{"name": "lookup", "arguments": {"key": "a"\n</tool_call>',
        '<tool_call>\n{"namearguments": "lookup"}\n</tool_call>',
        '<tool_call>\n{"name": "lookup", "arguments": "a"}\n</tool_call>',
        '{"name": "lookup", "arguments": {"key": "a"}}',
        "42",
    ):
        assert parsed_call(bad) is None, bad
