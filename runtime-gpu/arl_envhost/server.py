"""The env host's request loop: JSON lines in on stdin, JSON lines out on the protocol's stdout (docs/env-host.md).

Requests are ``{"id": N, "method": M, "params": {...}}``, answered by ``{"id": N, "result": ...}`` or
``{"id": N, "error": {"kind", "message", "traceback"}}``: in order, except that with verifier workers
(``verifier.pool``) a ``verifier.score`` is answered when its worker is done. A reader thread takes
the requests in, so a score reaches a free worker while the main thread serves a long call (the
time limits are the interval timer, which only the main thread receives). The host's first line is
``{"ready": {"protocol", "python", "pid"}}``. Whatever user code prints goes to stderr: the
protocol has the real stdout to itself.
"""

import json
import os
import queue
import sys
import threading
from typing import Any, TextIO

from arl_envhost import PROTOCOL_VERSION, verifiers
from arl_envhost.answers import RequestError, answer, error_of, int_param, limit_param, obj_param, str_param
from arl_envhost.answers import score as score_request
from arl_envhost.limits import call_with_limit
from arl_envhost.pool import VerifierPool
from arl_envhost.sessions import Sessions


def _episode_call(sessions: Sessions, method: str, params: dict[str, Any]) -> Any:
    """The env library methods (docs/env-host.md, "Env library sessions"), each under its timeout_s."""
    limit = limit_param(params)
    if method == "episode.step":
        eid, action = str_param(params, "episode"), str_param(params, "action")
        return call_with_limit(lambda: sessions.step(eid, action), limit)
    if method == "episode.answer":
        eid, text = str_param(params, "episode"), str_param(params, "text")
        return call_with_limit(lambda: sessions.answer(eid, text), limit)
    if method == "episode.outcome":
        eid = str_param(params, "episode")
        return call_with_limit(lambda: sessions.outcome(eid), limit)
    if method == "episode.close":
        eid = str_param(params, "episode")
        return call_with_limit(lambda: sessions.close(eid), limit)
    library, config = str_param(params, "library"), obj_param(params, "config")
    if method == "backend.check":
        root = params.get("data_root", ".")
        if not isinstance(root, str):
            raise RequestError("params.data_root must be a string")
        return call_with_limit(lambda: sessions.check(library, config, root), limit)
    if method == "backend.prepare":
        context = obj_param(params, "context")
        return call_with_limit(lambda: sessions.prepare(library, config, context), limit)
    data_root = str_param(params, "data_root")
    if method == "episode.open":
        task, seed = int_param(params, "task"), int_param(params, "seed")
        return call_with_limit(lambda: sessions.open(library, config, task, seed, data_root), limit)
    if method == "backend.walkthrough":
        task = int_param(params, "task")
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


def _dispatch(method: str, params: dict[str, Any], sessions: Sessions, pool: VerifierPool) -> Any:
    if method == "ping":
        return {"pid": os.getpid(), "episodes": len(sessions)}
    if method in _SESSION_METHODS:
        return _episode_call(sessions, method, params)
    if method == "verifier.load":
        path, function, limit = str_param(params, "path"), str_param(params, "function"), limit_param(params)
        handle = call_with_limit(lambda: verifiers.load(path, function), limit)
        pool.loaded(path, function, limit)
        return {"handle": handle}
    if method == "verifier.pool":
        workers, limit = int_param(params, "workers"), limit_param(params)
        if workers < 1:
            raise RequestError("params.workers must be at least 1")
        return {"workers": call_with_limit(lambda: pool.start(workers, limit), limit)}
    if method == "verifier.score":
        return score_request(params)
    raise RequestError(f"unknown method {method!r}")


def serve(requests: TextIO, out: TextIO) -> None:
    lock = threading.Lock()

    def send(message: dict[str, Any]) -> None:
        # The main thread and the verifier workers' threads answer: one whole line at a time.
        with lock:
            out.write(json.dumps(message, allow_nan=False) + "\n")
            out.flush()

    sessions = Sessions()
    pool = VerifierPool()
    try:
        _serve(requests, send, sessions, pool)
    finally:
        # On shutdown and when stdin closes alike: episodes and backends release what they hold (JVMs).
        sessions.shutdown()
        pool.close()


def _read(requests: TextIO, send: Any, pool: VerifierPool, inbox: "queue.Queue[Any]") -> None:
    """The reader thread: a score goes to a verifier worker at once when there are workers, the rest to the main thread."""
    for line in requests:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
        except json.JSONDecodeError as e:
            inbox.put(error_of("request", f"not JSON: {e}"))
            continue
        rid = request.get("id") if isinstance(request, dict) else None
        params = request.get("params", {}) if isinstance(request, dict) else None
        if isinstance(request, dict) and request.get("method") == "verifier.score" and pool.size > 0 and isinstance(params, dict):
            pool.submit(params, lambda reply, rid=rid: send({"id": rid, **reply}))
        else:
            inbox.put(request)
    inbox.put(None)


def _serve(requests: TextIO, send: Any, sessions: Sessions, pool: VerifierPool) -> None:
    send({"ready": {"protocol": PROTOCOL_VERSION, "python": sys.version.split()[0], "pid": os.getpid()}})
    inbox: queue.Queue[Any] = queue.Queue()
    threading.Thread(target=_read, args=(requests, send, pool, inbox), daemon=True).start()
    while (request := inbox.get()) is not None:
        if isinstance(request, dict) and set(request) == {"kind", "message", "traceback"}:
            send({"id": None, "error": request})
            continue
        rid = request.get("id") if isinstance(request, dict) else None
        method = request.get("method") if isinstance(request, dict) else None
        params = request.get("params", {}) if isinstance(request, dict) else None
        if method == "shutdown":
            # Closed before answering: the runtime may stop the process group once it has the answer.
            sessions.shutdown()
            pool.close()
            send({"id": rid, "result": {}})
            return

        def call(method=method, params=params) -> Any:
            if not isinstance(method, str) or not isinstance(params, dict):
                raise RequestError('a request is {"id": N, "method": "...", "params": {...}}')
            return _dispatch(method, params, sessions, pool)

        send({"id": rid, **answer(call, params.get("timeout_s") if isinstance(params, dict) else None)})


def main() -> int:
    # The protocol keeps the real stdout; anything else printing to fd 1 (user code, C libraries) lands on stderr.
    protocol = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    serve(sys.stdin, protocol)
    return 0
