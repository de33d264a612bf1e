"""Every case of test/conformance/*.json through conformance.eval_op (the trainer's eval_op)."""
import glob
import json
import math
import os

import pytest

pytest.importorskip("torch")

from helpers import CONFORMANCE_DIR  # noqa: E402

from arl_trainer.conformance import eval_op  # noqa: E402

DEFAULT_TOL = 1e-6  # src/conformance/vectors.ts: absolute tolerance, default 1e-6


def load_cases():
    cases = []
    for path in sorted(glob.glob(os.path.join(CONFORMANCE_DIR, "*.json"))):
        with open(path) as f:
            data = json.load(f)
        for c in data.get("cases", []):
            cases.append(pytest.param(c, id=f"{os.path.basename(path)}::{c['name']}"))
    return cases


CASES = load_cases()


def max_abs_error(expected, actual, where="") -> float:
    if isinstance(expected, (int, float)) and not isinstance(expected, bool):
        assert isinstance(actual, (int, float)) and not isinstance(actual, bool), f"{where}: expected a number, got {actual!r}"
        err = abs(actual - expected)
        return math.inf if math.isnan(err) else err
    if isinstance(expected, list):
        assert isinstance(actual, list), f"{where}: expected a list, got {type(actual).__name__}"
        assert len(actual) == len(expected), f"{where}: expected {len(expected)} entries, got {len(actual)}"
        return max([max_abs_error(e, a, f"{where}[{i}]") for i, (e, a) in enumerate(zip(expected, actual, strict=True))], default=0.0)
    if isinstance(expected, dict):
        assert isinstance(actual, dict) and sorted(actual) == sorted(expected), f"{where}: keys {sorted(expected)} vs {actual!r}"
        return max([max_abs_error(expected[k], actual[k], f"{where}.{k}") for k in expected], default=0.0)
    assert actual == expected, where
    return 0.0


@pytest.mark.skipif(not CASES, reason=f"no conformance vectors in {CONFORMANCE_DIR}")
@pytest.mark.parametrize("case", CASES)
def test_vector(case):
    out = eval_op(case["op"], case["input"])
    json.dumps(out, allow_nan=False)  # plain JSON, as the protocol carries it
    tol = case.get("tol", DEFAULT_TOL)
    err = max_abs_error(case["expected"], out)
    assert err <= tol, f"{case['name']}: max abs error {err} > tol {tol}: got {out}, expected {case['expected']}"


def test_unknown_op_is_unsupported():
    from arl_trainer.conformance import UnsupportedOp

    with pytest.raises(UnsupportedOp):
        eval_op("no_such_op", {})


@pytest.mark.skipif(not CASES, reason=f"no conformance vectors in {CONFORMANCE_DIR}")
def test_every_vector_through_the_protocol():
    """What `arl conformance --trainer torch` does: eval_op over the framed protocol."""
    from helpers import ProtocolClient

    c = ProtocolClient()
    try:
        c.call("handshake", {"protocol": "arl-trainer", "version": 1, "runtime": {"name": "arl", "version": "test"}})
        failures = []
        for p in CASES:
            case = p.values[0]
            out = c.call("eval_op", {"op": case["op"], "input": case["input"]})["output"]
            err = max_abs_error(case["expected"], out)
            if not err <= case.get("tol", DEFAULT_TOL):
                failures.append((case["name"], err))
        assert not failures, failures
        c.call("shutdown", {})
        assert c.close()[0] == 0
    finally:
        if c.proc.poll() is None:
            c.proc.kill()
