"""The env host's verifier side (arl_envhost.verifiers and the request loop that serves it): loading
a user's file, scoring through veRL's, TRL's and math-verify's conventions, and the failures a
user's function brings (it raises, hangs, prints, exits, returns what is not a score), each an
error answer for its call with the host serving the next (docs/env-host.md, docs/datasets.md)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from arl_envhost import PROTOCOL_VERSION, verifiers

RUNTIME_GPU = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def write(folder, name: str, source: str) -> str:
    path = folder / name
    path.write_text(textwrap.dedent(source))
    return str(path)


# --- verifiers.py on its own -------------------------------------------------------------------


def test_load_returns_one_handle_per_file_and_function_and_imports_siblings(tmp_path):
    write(tmp_path, "helpers_arl_test.py", "TRUTH = 'ok'\n")
    path = write(
        tmp_path,
        "reward.py",
        """
        from helpers_arl_test import TRUTH

        def compute_score(data_source, solution_str, ground_truth, extra_info=None):
            return 1.0 if solution_str == TRUTH else 0.0

        NOT_A_FUNCTION = 3
        """,
    )
    handle = verifiers.load(path, "compute_score")
    assert handle == verifiers.load(path, "compute_score")
    assert verifiers.score_verl(handle, None, "ok", "x", None) == {"score": 1.0, "correct": True, "answered": True}
    with pytest.raises(verifiers.VerifierError, match="does not define 'missing'"):
        verifiers.load(path, "missing")
    with pytest.raises(verifiers.VerifierError, match="'NOT_A_FUNCTION' in .* is a int, not a function"):
        verifiers.load(path, "NOT_A_FUNCTION")


def test_load_raises_the_files_own_import_error(tmp_path):
    path = write(tmp_path, "broken.py", "import not_a_module_arl_envhost\n")
    with pytest.raises(ModuleNotFoundError, match="not_a_module_arl_envhost"):
        verifiers.load(path, "compute_score")


class _Scalar:
    """A numpy or torch scalar as far as the host cares: a number behind .item()."""

    def __init__(self, value):
        self.value = value

    def item(self):
        return self.value


def test_verl_scores_a_number_a_dict_with_acc_and_extra_entries(tmp_path):
    path = write(
        tmp_path,
        "verl_reward.py",
        """
        def compute_score(data_source, solution_str, ground_truth, extra_info=None):
            return RESULTS[solution_str]
        RESULTS = {}
        """,
    )
    handle = verifiers.load(path, "compute_score")
    module = sys.modules[[k for k, v in sys.modules.items() if getattr(v, "__file__", None) == path][0]]
    module.RESULTS.update(
        {
            "int": 2,
            "bool": True,
            "zero": 0.0,
            "scalar": _Scalar(0.25),
            "dict": {"score": -1.0, "acc": True, "length": 7, "pred": "text is dropped", "hit": False},
            "dict-no-acc": {"score": 0.5},
        }
    )
    score = lambda text: verifiers.score_verl(handle, "src", text, "truth", {"k": 1})  # noqa: E731
    assert score("int") == {"score": 2.0, "correct": True, "answered": True}
    assert score("bool") == {"score": 1.0, "correct": True, "answered": True}
    assert score("zero") == {"score": 0.0, "correct": False, "answered": True}
    assert score("scalar") == {"score": 0.25, "correct": True, "answered": True}
    # acc, not the score's sign, says whether it is correct; numbers and bools become signals.
    assert score("dict") == {"score": -1.0, "acc": True, "length": 7.0, "hit": False, "correct": True, "answered": True}
    assert score("dict-no-acc") == {"score": 0.5, "correct": True, "answered": True}
    # An extra entry that is no finite number is left out, as text is (the answer must stay JSON).
    module.RESULTS["dict-inf"] = {"score": 1.0, "length": float("-inf"), "ratio": float("nan")}
    assert score("dict-inf") == {"score": 1.0, "correct": True, "answered": True}


@pytest.mark.parametrize(
    ("result", "message"),
    [
        ("high", "compute_score's result is a str, not a number"),
        (None, "compute_score's result is a NoneType, not a number"),
        (float("nan"), "compute_score's result is NaN"),
        (float("inf"), "compute_score's result is inf, not a finite number"),
        ({"acc": True}, "compute_score returned a dict without 'score' \\(keys: acc\\)"),
        ({"score": "1"}, "compute_score's score is a str, not a number"),
    ],
)
def test_verl_refuses_what_is_not_a_score(tmp_path, result, message):
    path = write(tmp_path, "bad_result.py", "def compute_score(*args):\n    return RESULT\n")
    handle = verifiers.load(path, "compute_score")
    sys.modules[[k for k, v in sys.modules.items() if getattr(v, "__file__", None) == path][0]].RESULT = result
    with pytest.raises(verifiers.VerifierError, match=message):
        verifiers.score_verl(handle, None, "answer", "truth", None)


def test_trl_passes_prompts_completions_and_columns_as_lists_of_one(tmp_path):
    path = write(
        tmp_path,
        "trl_reward.py",
        """
        SEEN = []

        def reward(prompts, completions, solution, **kwargs):
            SEEN.append({"prompts": prompts, "completions": completions, "solution": solution, **kwargs})
            text = completions[0] if isinstance(completions[0], str) else completions[0][0]["content"]
            return [1.0 if text == solution[0] else 0.0]

        def two(completions, **kwargs):
            return [1.0, 0.0]

        def none(completions, **kwargs):
            return [None]
        """,
    )
    handle = verifiers.load(path, "reward")
    seen = sys.modules[[k for k, v in sys.modules.items() if getattr(v, "__file__", None) == path][0]].SEEN
    assert verifiers.score_trl(handle, "2+2?", "4", {"solution": "4", "level": 3}) == {"score": 1.0, "correct": True, "answered": True}
    assert seen[-1] == {"prompts": ["2+2?"], "completions": ["4"], "solution": ["4"], "level": [3]}
    # A conversational prompt gets a conversational completion, as TRL passes it.
    chat = [{"role": "user", "content": "2+2?"}]
    assert verifiers.score_trl(handle, chat, "5", {"solution": "4"})["correct"] is False
    assert seen[-1]["completions"] == [[{"role": "assistant", "content": "5"}]]
    with pytest.raises(verifiers.VerifierError, match="two returned a list of 2 values, not a list of one reward"):
        verifiers.score_trl(verifiers.load(path, "two"), "q", "a", {})
    with pytest.raises(verifiers.VerifierError, match="none returned None for the completion"):
        verifiers.score_trl(verifiers.load(path, "none"), "q", "a", {})


def test_math_verify_equivalence_and_an_unparseable_ground_truth():
    pytest.importorskip("math_verify")
    assert verifiers.score_math_verify("so \\boxed{\\frac{1}{2}}", "0.5") == {"score": 1.0, "correct": True, "answered": True}
    assert verifiers.score_math_verify("\\boxed{0.333}", "\\frac{1}{3}")["correct"] is False
    assert verifiers.score_math_verify("no number at all", "7") == {"score": 0.0, "correct": False, "answered": False}
    with pytest.raises(verifiers.VerifierError, match="cannot parse the ground truth"):
        verifiers.score_math_verify("\\boxed{1}", "")


# --- the host process: python -m arl_envhost ---------------------------------------------------


class Host:
    """One env host over pipes, as the runtime starts it (its stderr kept to read what was printed)."""

    def __init__(self, cwd):
        env = {**os.environ, "PYTHONPATH": RUNTIME_GPU + os.pathsep + os.environ.get("PYTHONPATH", "")}
        self.stderr_path = cwd / "host.stderr"
        self.stderr = open(self.stderr_path, "w")  # noqa: SIM115 - closed in close()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "arl_envhost"], cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr, text=True
        )
        self.ready = self._line()
        self.next_id = 0

    def _line(self):
        line = self.process.stdout.readline()
        assert line, f"the host closed its stdout: {self.stderr_path.read_text()}"
        return json.loads(line)

    def raw(self, text: str):
        self.process.stdin.write(text + "\n")
        self.process.stdin.flush()
        return self._line()

    def request(self, method: str, **params):
        self.next_id += 1
        answer = self.raw(json.dumps({"id": self.next_id, "method": method, "params": params}))
        assert answer["id"] == self.next_id
        return answer

    def requests(self, calls):
        """Sends every (method, params) at once, then reads as many answers: each matched to its call by id."""
        ids = []
        for method, params in calls:
            self.next_id += 1
            ids.append(self.next_id)
            self.process.stdin.write(json.dumps({"id": self.next_id, "method": method, "params": params}) + "\n")
        self.process.stdin.flush()
        answers = {}
        for _ in calls:
            answer = self._line()
            answers[answer["id"]] = answer
        return [answers[i] for i in ids]

    def close(self):
        if self.process.poll() is None:
            self.process.stdin.write(json.dumps({"id": 0, "method": "shutdown", "params": {}}) + "\n")
            self.process.stdin.flush()
            self.process.wait(timeout=30)
        self.stderr.close()


@pytest.fixture
def host(tmp_path):
    h = Host(tmp_path)
    yield h
    h.close()


UNRULY = """
import os
import sys
import time

print("loading the reward module")


def compute_score(data_source, solution_str, ground_truth, extra_info=None):
    if solution_str == "print":
        print("scoring", solution_str)
        os.write(1, b"straight to fd 1\\n")
        sys.stdout.flush()
        return 1.0
    if solution_str == "raise":
        raise ValueError("cannot score this")
    if solution_str == "hang":
        while True:
            time.sleep(0.01)
    if solution_str == "swallow":
        try:
            while True:
                time.sleep(0.01)
        except Exception:
            return 1.0
    if solution_str == "exit":
        sys.exit(3)
    if solution_str == "inf":
        return float("inf")
    return 0.5
"""


def test_host_says_ready_and_answers_bad_requests_as_request_errors(host):
    assert host.ready["ready"]["protocol"] == PROTOCOL_VERSION
    assert host.ready["ready"]["pid"] == host.process.pid
    assert host.raw("{not json")["error"]["kind"] == "request"
    assert host.request("no.such.method")["error"] == {"kind": "request", "message": "unknown method 'no.such.method'", "traceback": None}
    assert host.request("verifier.load", path="x.py", function="f", timeout_s=-1)["error"]["message"] == "params.timeout_s must be a positive number"
    assert host.request("verifier.score", style="other", timeout_s=1)["error"]["message"] == "unknown verifier style 'other' (verl, trl, math_verify)"
    # The host serves episodes too (docs/env-host.md): a fresh one has none open.
    assert host.request("ping")["result"] == {"pid": host.process.pid, "episodes": 0}


@pytest.mark.parametrize("workers", [None, 2], ids=["in the host", "in verifier workers"])
def test_host_serves_each_failure_as_that_calls_error_and_goes_on(host, tmp_path, workers):
    path = write(tmp_path, "unruly.py", UNRULY)
    handle = host.request("verifier.load", path=path, function="compute_score", timeout_s=30)["result"]["handle"]
    if workers:
        assert host.request("verifier.pool", workers=workers, timeout_s=60)["result"] == {"workers": workers}
    score = lambda text, limit=1: host.request("verifier.score", style="verl", handle=handle, solution_str=text, ground_truth="1", timeout_s=limit)  # noqa: E731

    # What the verifier prints (print or fd 1) goes to stderr: the protocol's stdout stays JSON.
    assert score("print")["result"] == {"score": 1.0, "correct": True, "answered": True}
    raised = score("raise")["error"]
    assert (raised["kind"], raised["message"]) == ("raised", "ValueError: cannot score this")
    assert 'raise ValueError("cannot score this")' in raised["traceback"]
    hung = score("hang")["error"]
    assert (hung["kind"], hung["message"]) == ("timeout", "the call ran past its limit of 1 s")
    # The limit is not an Exception: a verifier's `except Exception` cannot turn it into a score.
    assert score("swallow")["error"]["kind"] == "timeout"
    exited = score("exit")["error"]
    assert (exited["kind"], exited["message"]) == ("raised", "SystemExit(3): the verifier called exit")
    inf = score("inf")["error"]
    assert (inf["kind"], inf["message"]) == ("result", "compute_score's result is inf, not a finite number")
    assert score("fine")["result"] == {"score": 0.5, "correct": True, "answered": True}
    assert host.process.poll() is None

    host.close()
    printed = host.stderr_path.read_text()
    assert "loading the reward module" in printed
    assert "scoring print" in printed and "straight to fd 1" in printed


SLOW = """
import os
import time

CALLS = []


def compute_score(data_source, solution_str, ground_truth, extra_info=None):
    time.sleep(1)
    # Module state is the worker's own: each counts only the calls it served.
    CALLS.append(solution_str)
    return {"score": float(len(solution_str)), "pid": os.getpid(), "calls": len(CALLS)}
"""


def test_verifier_workers_score_at_once_and_answer_each_call_with_its_own_result(host, tmp_path):
    import time

    handle = host.request("verifier.load", path=write(tmp_path, "slow.py", SLOW), function="compute_score", timeout_s=30)["result"]["handle"]
    assert host.request("verifier.pool", workers=8, timeout_s=120)["result"] == {"workers": 8}
    calls = [("verifier.score", {"style": "verl", "handle": handle, "solution_str": "x" * (i + 1), "ground_truth": "1", "timeout_s": 30}) for i in range(8)]
    host.requests(calls)  # every worker started and the verifier imported in each
    started = time.monotonic()
    answers = host.requests(calls)
    elapsed = time.monotonic() - started
    # Eight 1 s calls on eight workers: about 1 s, not 8 (loosely: a loaded 2-core machine).
    assert elapsed < 5, elapsed
    assert [a["result"]["score"] for a in answers] == [float(i + 1) for i in range(8)]
    assert len({a["result"]["pid"] for a in answers}) > 1
    assert host.process.pid not in {a["result"]["pid"] for a in answers}


STUCK = """
import os
import signal
import time


def compute_score(data_source, solution_str, ground_truth, extra_info=None):
    if solution_str == "stuck":
        # As if stuck in C code: the time limit's signal cannot reach it.
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
        time.sleep(60)
    if solution_str == "die":
        os._exit(7)
    return 1.0
"""


def test_a_stuck_or_dead_worker_fails_its_own_call_and_is_replaced(host, tmp_path):
    handle = host.request("verifier.load", path=write(tmp_path, "stuck.py", STUCK), function="compute_score", timeout_s=30)["result"]["handle"]
    assert host.request("verifier.pool", workers=2, timeout_s=60)["result"] == {"workers": 2}
    score = lambda text: ("verifier.score", {"style": "verl", "handle": handle, "solution_str": text, "ground_truth": "1", "timeout_s": 1})  # noqa: E731
    stuck, died, fine = host.requests([score("stuck"), score("die"), score("fine")])
    assert stuck["error"] == {"kind": "timeout", "message": "the call ran past its limit of 1 s", "traceback": None}
    assert died["error"]["kind"] == "raised" and died["error"]["message"] == "the verifier's worker process died (exit status 7)"
    assert fine["result"] == {"score": 1.0, "correct": True, "answered": True}
    # The host went on, and fresh workers import the verifier again and serve.
    assert [a["result"]["score"] for a in host.requests([score("again")] * 3)] == [1.0] * 3
    assert host.process.poll() is None


def test_host_loads_refuse_a_missing_function_and_a_failing_import(host, tmp_path):
    path = write(tmp_path, "reward.py", "def compute_score(*a):\n    return 1.0\n")
    missing = host.request("verifier.load", path=path, function="score_it", timeout_s=30)["error"]
    assert (missing["kind"], missing["message"]) == ("result", f"{path} does not define 'score_it'")
    broken = write(tmp_path, "broken.py", "raise RuntimeError('import-time failure')\n")
    failed = host.request("verifier.load", path=broken, function="compute_score", timeout_s=30)["error"]
    assert (failed["kind"], failed["message"]) == ("raised", "RuntimeError: import-time failure")
    assert host.request("verifier.load", path=path, function="compute_score", timeout_s=30)["result"]["handle"].endswith("::compute_score")
