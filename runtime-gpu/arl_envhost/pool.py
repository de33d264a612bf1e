"""Verifier workers: ``verifier.score`` calls served by a pool of worker processes, several at once
(docs/env-host.md, "Verifier workers"; docs/datasets.md, "Concurrent verifier calls").

Processes, not threads: a user's verifier may keep module-level state that is not thread-safe, a
CPU-bound one (math-verify's sympy) would hold the GIL, and a call's time limit is the interval
timer, which only a process's main thread receives. Each worker imports the verifier files itself,
so each has its own copy of their module state, and runs one call at a time under the same limit
and with the same answers as the host's own loop. A worker stuck where the timer cannot reach it
(C code) is ended after its limit and a short grace, and replaced: only its own call fails.
"""

import multiprocessing
import os
import queue
import threading
import traceback
from collections.abc import Callable
from typing import Any

# A worker that has not answered this long after its call's own limit is stuck: ended, replaced.
STUCK_GRACE_S = 2.0


def _worker_answer(message: tuple) -> dict[str, Any]:
    """A worker's answer to ("load", path, function, limit) or ("score", params), as the host's loop answers."""
    from arl_envhost import answers, verifiers
    from arl_envhost.limits import call_with_limit

    if message[0] == "load":
        _, path, function, limit = message
        return answers.answer(lambda: {"handle": call_with_limit(lambda: verifiers.load(path, function), limit)}, limit)
    params = message[1]
    return answers.answer(lambda: answers.score(params), params.get("timeout_s"))


def _worker_main(conn) -> None:
    """A worker's loop: one call at a time, in its main thread (where the time limit's timer is received)."""
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return
        conn.send(_worker_answer(message))


class _Worker:
    def __init__(self, context) -> None:
        self.conn, child = context.Pipe()
        self.process = context.Process(target=_worker_main, args=(child,), daemon=True)
        self.process.start()
        child.close()
        # How many of the pool's loaded verifiers this worker has imported.
        self.loaded = 0
        self.stuck = False

    def call(self, message: tuple, limit: float) -> dict[str, Any] | None:
        """The worker's answer, or None when it died or was stuck past ``limit`` + the grace (it is then ended)."""
        try:
            self.conn.send(message)
            if self.conn.poll(limit + STUCK_GRACE_S):
                return self.conn.recv()
            self.stuck = True
        except (EOFError, OSError):
            pass
        self.end()
        return None

    def end(self) -> None:
        if self.process.is_alive():
            self.process.kill()
        self.process.join(5)
        self.conn.close()


class VerifierPool:
    """Up to ``size`` worker processes; started when first needed (``start`` starts some at once)."""

    def __init__(self) -> None:
        self._context = multiprocessing.get_context("spawn")
        self.size = 0
        self._workers = 0
        self._idle: queue.Queue[_Worker] = queue.Queue()
        self._lock = threading.Lock()
        # (path, function, limit) of every verifier the host has loaded, in order.
        self._loads: list[tuple[str, str, float]] = []
        self._threads: list[threading.Thread] = []

    def start(self, size: int, limit: float) -> int:
        """Grows the pool to ``size`` workers; starts as many as the host may use CPUs now, loaded. Returns the size."""
        with self._lock:
            self.size = max(self.size, size)
        started = []
        cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
        while len(started) < min(size, cpus) and self._claim_slot():
            started.append(_Worker(self._context))
        failure = None
        for worker in started:
            failure = failure or self._prepare(worker, limit)
            self._idle.put(worker)
        if failure is not None:
            raise RuntimeError(f"a verifier worker could not load the verifiers: {failure['error']['message']}")
        return self.size

    def loaded(self, path: str, function: str, limit: float) -> None:
        """Records a verifier the host loaded: every worker imports it before its next call."""
        with self._lock:
            self._loads.append((path, function, limit))

    def submit(self, params: dict[str, Any], reply: Callable[[dict[str, Any]], None]) -> None:
        """Scores on a worker in a thread of its own; ``reply`` gets the answer (``{"result"}`` or ``{"error"}``)."""
        thread = threading.Thread(target=self._serve, args=(params, reply), daemon=True)
        self._threads = [t for t in self._threads if t.is_alive()] + [thread]
        thread.start()

    def close(self) -> None:
        for thread in self._threads:
            thread.join(timeout=1)
        while True:
            try:
                self._idle.get_nowait().end()
            except queue.Empty:
                return

    def _claim_slot(self) -> bool:
        with self._lock:
            if self._workers >= self.size:
                return False
            self._workers += 1
            return True

    def _take(self) -> _Worker:
        try:
            return self._idle.get_nowait()
        except queue.Empty:
            pass
        if self._claim_slot():
            return _Worker(self._context)
        return self._idle.get()

    def _prepare(self, worker: _Worker, limit: float) -> dict[str, Any] | None:
        """Imports the verifiers the worker lacks; the failing load's answer, or None."""
        while worker.loaded < len(self._loads):
            path, function, load_limit = self._loads[worker.loaded]
            answer = worker.call(("load", path, function, load_limit), load_limit)
            if answer is None:
                return _died(f"loading {path}")
            if "error" in answer:
                return answer
            worker.loaded += 1
        return None

    def _serve(self, params: dict[str, Any], reply: Callable[[dict[str, Any]], None]) -> None:
        limit = float(params.get("timeout_s", 0) or 0)
        worker = self._take()
        try:
            answer = self._prepare(worker, limit) or worker.call(("score", params), limit)
        except Exception:  # noqa: BLE001 - the pool's own failure is this call's error, never the host's
            answer = {"error": {"kind": "raised", "message": "the verifier pool failed", "traceback": traceback.format_exc()}}
        if answer is None:
            answer = _timeout(params.get("timeout_s")) if worker.stuck else _died(f"exit status {worker.process.exitcode}")
        reply(answer)
        # A worker that died or was ended is replaced at once (it imports the verifiers on its first call).
        self._idle.put(worker if worker.process.is_alive() else _Worker(self._context))


def _timeout(limit: Any) -> dict[str, Any]:
    return {"error": {"kind": "timeout", "message": f"the call ran past its limit of {limit} s", "traceback": None}}


def _died(how: str) -> dict[str, Any]:
    return {"error": {"kind": "raised", "message": f"the verifier's worker process died ({how})", "traceback": None}}
