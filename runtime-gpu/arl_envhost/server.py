"""The env host's request loop: JSON lines in on stdin, JSON lines out on the protocol's stdout (docs/env-host.md).

Requests are ``{"id": N, "method": M, "params": {...}}``, answered in order by ``{"id": N, "result": ...}``
or ``{"id": N, "error": {"kind", "message", "traceback"}}``. The host's first line is
``{"ready": {"protocol", "python", "pid"}}``. Whatever user code prints goes to stderr: the
protocol has the real stdout to itself.
"""

import json
import os
import sys
import traceback
from typing import Any, TextIO

from arl_envhost import PROTOCOL_VERSION, verifiers
from arl_envhost.backends.base import ConfigError
from arl_envhost.limits import CallTimeout, call_with_limit
from arl_envhost.sessions import LibraryMissing, SessionError, Sessions


class RequestError(Exception):
    """A request the host cannot serve as written."""


def _str(params: dict[str, Any], key: str) -> str:
    value = params.get(key)
    if not isinstance(value, str):
        raise RequestError(f"params.{key} must be a string")
    return value


def _limit(params: dict[str, Any]) -> float:
    value = params.get("timeout_s")
    if not isinstance(value, int | float) or isinstance(value, bool) or value <= 0:
        raise RequestError("params.timeout_s must be a positive number")
    return float(value)


def _int(params: dict[str, Any], key: str) -> int:
    value = params.get(key)
    if not isinstance(value, int) or isinstance(value, bool):
        raise RequestError(f"params.{key} must be an integer")
    return value


def _obj(params: dict[str, Any], key: str) -> dict[str, Any]:
    value = params.get(key)
    if not isinstance(value, dict):
        raise RequestError(f"params.{key} must be an object")
    return value


def _episode_call(sessions: Sessions, method: str, params: dict[str, Any]) -> Any:
    """The env library methods (docs/env-host.md, "Env library sessions"), each under its timeout_s."""
    limit = _limit(params)
    if method == "episode.step":
        eid, action = _str(params, "episode"), _str(params, "action")
        return call_with_limit(lambda: sessions.step(eid, action), limit)
    if method == "episode.answer":
        eid, text = _str(params, "episode"), _str(params, "text")
        return call_with_limit(lambda: sessions.answer(eid, text), limit)
    if method == "episode.outcome":
        eid = _str(params, "episode")
        return call_with_limit(lambda: sessions.outcome(eid), limit)
    if method == "episode.close":
        eid = _str(params, "episode")
        return call_with_limit(lambda: sessions.close(eid), limit)
    library, config = _str(params, "library"), _obj(params, "config")
    if method == "backend.check":
        root = params.get("data_root", ".")
        if not isinstance(root, str):
            raise RequestError("params.data_root must be a string")
        return call_with_limit(lambda: sessions.check(library, config, root), limit)
    if method == "backend.prepare":
        context = _obj(params, "context")
        return call_with_limit(lambda: sessions.prepare(library, config, context), limit)
    data_root = _str(params, "data_root")
    if method == "episode.open":
        task, seed = _int(params, "task"), _int(params, "seed")
        return call_with_limit(lambda: sessions.open(library, config, task, seed, data_root), limit)
    if method == "backend.walkthrough":
        task = _int(params, "task")
        return call_with_limit(lambda: sessions.walkthrough(library, config, task, data_root), limit)
    if method == "backend.vocabulary":
        tasks = params.get("tasks")
        if not isinstance(tasks, list) or not all(isinstance(t, int) for t in tasks):
            raise RequestError("params.tasks must be a list of integers")
        return call_with_limit(lambda: sessions.vocabulary(library, config, tasks, data_root), limit)
    raise RequestError(f"unknown method {method!r}")


_SESSION_METHODS = {
    *("backend.check", "backend.prepare", "backend.walkthrough", "backend.vocabulary"),
    *("episode.open", "episode.step", "episode.answer", "episode.outcome", "episode.close"),
}


def _dispatch(method: str, params: dict[str, Any], sessions: Sessions) -> Any:
    if method == "ping":
        return {"pid": os.getpid(), "episodes": len(sessions)}
    if method in _SESSION_METHODS:
        return _episode_call(sessions, method, params)
    if method == "verifier.load":
        path, function = _str(params, "path"), _str(params, "function")
        return {"handle": call_with_limit(lambda: verifiers.load(path, function), _limit(params))}
    if method == "verifier.score":
        style, limit = _str(params, "style"), _limit(params)
        if style == "verl":
            handle, solution = _str(params, "handle"), _str(params, "solution_str")
            return call_with_limit(
                lambda: verifiers.score_verl(handle, params.get("data_source"), solution, params.get("ground_truth"), params.get("extra_info")), limit
            )
        if style == "trl":
            handle, completion = _str(params, "handle"), _str(params, "completion")
            columns = params.get("columns")
            if not isinstance(columns, dict):
                raise RequestError("params.columns must be an object")
            return call_with_limit(lambda: verifiers.score_trl(handle, params.get("prompt"), completion, columns), limit)
        if style == "math_verify":
            answer, truth = _str(params, "solution_str"), _str(params, "ground_truth")
            return call_with_limit(lambda: verifiers.score_math_verify(answer, truth), limit)
        raise RequestError(f"unknown verifier style {style!r} (verl, trl, math_verify)")
    raise RequestError(f"unknown method {method!r}")


def _error(kind: str, message: str, tb: str | None = None) -> dict[str, Any]:
    return {"kind": kind, "message": message, "traceback": tb}


def serve(requests: TextIO, out: TextIO) -> None:
    def send(message: dict[str, Any]) -> None:
        out.write(json.dumps(message, allow_nan=False) + "\n")
        out.flush()

    sessions = Sessions()
    try:
        _serve(requests, send, sessions)
    finally:
        # On shutdown and when stdin closes alike: episodes and backends release what they hold (JVMs).
        sessions.shutdown()


def _serve(requests: TextIO, send: Any, sessions: Sessions) -> None:
    send({"ready": {"protocol": PROTOCOL_VERSION, "python": sys.version.split()[0], "pid": os.getpid()}})
    for line in requests:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
        except json.JSONDecodeError as e:
            send({"id": None, "error": _error("request", f"not JSON: {e}")})
            continue
        rid = request.get("id") if isinstance(request, dict) else None
        method = request.get("method") if isinstance(request, dict) else None
        params = request.get("params", {}) if isinstance(request, dict) else None
        if method == "shutdown":
            # Closed before answering: the runtime may stop the process group once it has the answer.
            sessions.shutdown()
            send({"id": rid, "result": {}})
            return
        try:
            if not isinstance(method, str) or not isinstance(params, dict):
                raise RequestError('a request is {"id": N, "method": "...", "params": {...}}')
            send({"id": rid, "result": _dispatch(method, params, sessions)})
        except (RequestError, SessionError) as e:
            send({"id": rid, "error": _error("request", str(e))})
        except LibraryMissing as e:
            send({"id": rid, "error": _error("missing", str(e))})
        except ConfigError as e:
            send({"id": rid, "error": {**_error("config", str(e)), "field": e.field, "hint": e.hint}})
        except verifiers.VerifierError as e:
            send({"id": rid, "error": _error("result", str(e))})
        except CallTimeout:
            send({"id": rid, "error": _error("timeout", f"the call ran past its limit of {params.get('timeout_s')} s")})
        except Exception as e:  # noqa: BLE001 - the user's code may raise anything; the host goes on
            last = traceback.format_exception_only(type(e), e)[-1].strip()
            send({"id": rid, "error": _error("raised", last, traceback.format_exc())})
        except SystemExit as e:
            send({"id": rid, "error": _error("raised", f"SystemExit({e.code}): the verifier called exit", traceback.format_exc())})


def main() -> int:
    # The protocol keeps the real stdout; anything else printing to fd 1 (user code, C libraries) lands on stderr.
    protocol = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    serve(sys.stdin, protocol)
    return 0
