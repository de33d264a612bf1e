"""The multi-turn peer benchmark's env (src/bench/peer-tools.ts), one file for every side: a task is
"look up K keys of the row, then answer their sum"; the one tool is `lookup(key)`, which answers the
entry's text exactly as ARL's built-in dataset tool does (src/envs/adapters/dataset/tools.ts).

ARL serves the tool itself (`dataset.lookup_task`) and scores the final answer with this file's
`compute_score` as its veRL verifier; TRL gets `LookupEnv` as its `environment_factory` and the
same `compute_score` as its reward function; the floor calls both directly.

The score is the single-turn peer reward (bench/peer_reward.py: correct + 0.1 closeness of the
last number + 0.1 brevity, so every group's rewards differ) of the answer's text after any
`<think>...</think>` block: Qwen3's template writes an empty one before the final answer, which
TRL's parser removes from the content and ARL's harness keeps in the turn's text, so both score
the same text. Kept free of heavy imports: ARL's env host loads it as a plain file.
"""

import re

NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")
THINK = re.compile(r"^\s*<think>.*?</think>\s*", re.S)


def answer_text(text: str) -> str:
    """The answer without the empty think block the template puts before it."""
    return THINK.sub("", text, count=1)


def compute_score(data_source, solution_str, ground_truth, extra_info=None):
    text = answer_text(solution_str)
    found = NUMBER.findall(text)
    want = float(ground_truth)
    got = float(found[-1].replace(",", "")) if found else None
    correct = got is not None and abs(got - want) <= 1e-9 * max(1.0, abs(want))
    closeness = 0.0 if got is None else max(0.0, 1.0 - abs(got - want) / max(1.0, abs(want)))
    brevity = 1.0 / (1.0 + len(text) / 100.0)
    return {"score": float(correct) + 0.1 * closeness + 0.1 * brevity, "acc": correct}


def lookup_result(facts: dict, key) -> str:
    """What ARL's dataset `lookup` answers: the entry's text, or the keys there are."""
    if not isinstance(key, str):
        return "Error: 'lookup' takes a string 'key'."
    if key not in facts:
        keys = list(facts)
        return f"No entry '{key}'. Keys: {', '.join(keys[:50])}{', ...' if len(keys) > 50 else ''}."
    value = facts[key]
    return value if isinstance(value, str) else str(value)


# The tool as ARL shows it to a template that renders tools (its definition in the plan,
# src/episode/tool-descriptions.ts): the floor renders this one; TRL derives its own from
# `LookupEnv.lookup` (the cold start's records teach the model both).
TOOL_DEFINITION = {
    "type": "function",
    "function": {
        "name": "lookup",
        "description": "Look up an entry by its key; an unknown key lists the keys there are.",
        "parameters": {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "additionalProperties": False,
            "properties": {"key": {"description": "The entry's key.", "type": "string"}},
            "required": ["key"],
            "type": "object",
        },
    },
}


class LookupEnv:
    """TRL's environment: reset with the row, one tool method; counts the calls it served."""

    def __init__(self):
        self.facts: dict = {}
        self.calls = 0

    def reset(self, **row) -> None:
        self.facts = dict(row.get("facts") or {})
        self.calls = 0

    def lookup(self, key: str) -> str:
        """
        Look up an entry by its key; an unknown key lists the keys there are.

        Args:
            key: The entry's key.
        """
        self.calls += 1
        return lookup_result(self.facts, key)
