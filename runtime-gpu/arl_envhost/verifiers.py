"""Dataset verifiers: the user's own Python scoring function, unchanged, and math-verify.

- ``verl``: ``compute_score(data_source, solution_str, ground_truth, extra_info)`` returning a number
  or a dict with a ``score`` (veRL's reward functions);
- ``trl``: ``f(prompts=[...], completions=[...], **columns)`` returning a list of one number (TRL's
  reward functions, called here one completion at a time, each column as a list of one value);
- ``math_verify``: the ground truth and the answer parsed by math-verify and compared by its
  ``verify`` (mathematical equivalence).

Every score becomes outcome signals: ``score`` (the number), ``correct`` (a dict's ``acc`` where it
has one, else score > 0), ``answered`` and, for a dict, each other entry that is a number or a bool.
"""

import importlib.util
import math
import os
import sys
from collections.abc import Callable
from typing import Any


class VerifierError(Exception):
    """What the verifier did wrong (not a Python exception of its own): a bad result, a missing function."""


_loaded: dict[str, Callable[..., Any]] = {}


def load(path: str, function: str) -> str:
    """Imports the file (once per path) and returns a handle to its function; raises VerifierError when it lacks it."""
    key = f"{os.path.realpath(path)}::{function}"
    if key in _loaded:
        return key
    name = f"arl_verifier_{len(_loaded)}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise VerifierError(f"cannot import {path} (not a Python file?)")
    module = importlib.util.module_from_spec(spec)
    # The file's own folder first, so that it imports its siblings as it does under veRL or TRL.
    folder = os.path.dirname(os.path.realpath(path))
    if folder not in sys.path:
        sys.path.insert(0, folder)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    fn = getattr(module, function, None)
    if fn is None:
        raise VerifierError(f"{path} does not define '{function}'")
    if not callable(fn):
        raise VerifierError(f"'{function}' in {path} is a {type(fn).__name__}, not a function")
    _loaded[key] = fn
    return key


def _number(value: Any, what: str) -> float:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float):
        if math.isnan(value):
            raise VerifierError(f"{what} is NaN")
        # An infinite score cannot go out as JSON: said as the verifier's fault, not the host's error.
        if math.isinf(value):
            raise VerifierError(f"{what} is {value}, not a finite number")
        return float(value)
    # numpy and torch scalars
    item = getattr(value, "item", None)
    if callable(item):
        return _number(item(), what)
    raise VerifierError(f"{what} is a {type(value).__name__}, not a number")


def _signals(result: Any, what: str) -> dict[str, float | bool]:
    if isinstance(result, dict):
        if "score" not in result:
            raise VerifierError(f"{what} returned a dict without 'score' (keys: {', '.join(map(str, result))})")
        signals: dict[str, float | bool] = {}
        for key, value in result.items():
            if isinstance(value, bool):
                signals[str(key)] = value
            elif isinstance(value, int | float) or callable(getattr(value, "item", None)):
                try:
                    signals[str(key)] = _number(value, f"{what}'s '{key}'")
                except VerifierError:
                    if key == "score":
                        raise
        score = _number(result["score"], f"{what}'s score")
        correct = bool(result["acc"]) if "acc" in result else score > 0
        return {**signals, "score": score, "correct": correct, "answered": True}
    score = _number(result, f"{what}'s result")
    return {"score": score, "correct": score > 0, "answered": True}


def score_verl(handle: str, data_source: Any, solution_str: str, ground_truth: Any, extra_info: Any) -> dict[str, float | bool]:
    fn = _loaded[handle]
    result = fn(data_source, solution_str, ground_truth, extra_info)
    return _signals(result, handle.split("::")[-1])


def score_trl(handle: str, prompt: Any, completion: str, columns: dict[str, Any]) -> dict[str, float | bool]:
    fn = _loaded[handle]
    name = handle.split("::")[-1]
    # A conversational prompt (chat messages) gets a conversational completion, as TRL passes it.
    conversational = isinstance(prompt, list)
    completions = [[{"role": "assistant", "content": completion}]] if conversational else [completion]
    kwargs = {k: [v] for k, v in columns.items() if k not in ("prompts", "completions")}
    result = fn(prompts=[prompt], completions=completions, **kwargs)
    if not isinstance(result, list | tuple) or len(result) != 1:
        size = f" of {len(result)} values" if isinstance(result, list | tuple) else ""
        raise VerifierError(f"{name} returned a {type(result).__name__}{size}, not a list of one reward")
    if result[0] is None:
        raise VerifierError(f"{name} returned None for the completion (TRL's 'not applicable'): a dataset task needs a reward")
    return _signals(result[0], name)


def score_math_verify(answer: str, ground_truth: str) -> dict[str, float | bool]:
    # Imported on first use: hosts that never score with it do not pay for sympy.
    from math_verify import parse, verify

    # The host's own call limit stops a runaway parse; math-verify's signal.alarm would replace it.
    gold = parse(ground_truth, parsing_timeout=None)
    if not gold:
        gold = parse(f"${ground_truth}$", parsing_timeout=None)
    if not gold:
        raise VerifierError(f"math-verify cannot parse the ground truth {ground_truth!r}")
    parsed = parse(answer, parsing_timeout=None)
    correct = bool(parsed) and bool(verify(gold, parsed, timeout_seconds=None))
    return {"score": 1.0 if correct else 0.0, "correct": correct, "answered": bool(parsed)}
