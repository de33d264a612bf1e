#!/usr/bin/env python3
"""A reference task server for arl's `http` env kind (src/envs/adapters/http.ts holds the wire format).

Standard library only (http.server + json). It binds to 127.0.0.1 only, serves every endpoint
under any path prefix (so `url: "http://127.0.0.1:PORT/anything"` works), and keeps one
isolated session per reset:

    POST .../reset    {"task", "index", "seed"} -> {"session", "observation", "signals", "tools"}
    POST .../step     {"session", "call": {"name", "arguments"}}
                                                 -> {"observation", "signals", "terminated"}
    POST .../outcome  {"session"}                -> {"signals"}
    POST .../close    {"session"}                -> {"closed": true}   (404 for unknown sessions)
    GET  /health -> {"ok": true};  GET /stats -> request counts, per op and per task index

Task families (the request's `task`; null means "reach"), deterministic by task index:

    counter  call `step` 1 + index % 3 times (`noop` does nothing). State signal `progress`
             in [0, 1]; outcome signals `success` (bool) and `steps`.
    reach    start at 1 + index % 5 and reach the target exactly with `add` {amount: 1..3}
             and `double`; passing the target ends the task. State signals `value`,
             `remaining`; outcome `success`, `steps`.

A bad tool call (unknown name, bad arguments) is the policy's failure: an error observation,
never an HTTP error. Each session ends after MAX_STEPS steps (terminated).

Fault injection, by task index (`--fault INDEX=KIND`, repeatable, adds to the defaults):

    step_500          step answers 500 {"error": ...}
    step_sleep        step sleeps --sleep-s seconds, then answers normally
    step_close        step closes the connection without answering
    step_bad_json     step answers 200 with a body that is not JSON
    step_missing      step answers 200 {} (no observation, no terminated)
    step_error        step answers 200 {"error": ...} (a server-reported error)
    reset_500_once    the first reset of each (task, index, seed) answers 500, later ones work
    reset_sleep_once  the first reset of each (task, index, seed) sleeps --sleep-s seconds
    reset_close_once  the first reset of each (task, index, seed) closes the connection
    reset_500         every reset answers 500
    reset_400         every reset answers 400
    outcome_500_once  the first outcome of each session answers 500, later ones work
    close_500         every close answers 500

Defaults: index 1000 + i has the i-th fault of that list (1000 step_500 ... 1012 close_500).

The task families are in reference_env_tasks.py, the request bodies' parsing in
reference_env_bodies.py.

Usage: python3 reference_env_server.py --port 0   (prints `listening on http://127.0.0.1:PORT`
first; SIGTERM or SIGINT stops it cleanly with exit status 0).
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
import uuid
from collections import OrderedDict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from reference_env_bodies import HttpError, clip, int_field, parse_body
from reference_env_tasks import FAMILIES, MAX_STEPS, Session

MAX_SESSIONS = 4096
MAX_BODY = 1 << 20

FAULTS = (
    "step_500",
    "step_sleep",
    "step_close",
    "step_bad_json",
    "step_missing",
    "step_error",
    "reset_500_once",
    "reset_sleep_once",
    "reset_close_once",
    "reset_500",
    "reset_400",
    "outcome_500_once",
    "close_500",
)
DEFAULT_FAULTS = {1000 + i: f for i, f in enumerate(FAULTS)}


# ---------------------------------------------------------------------------- server state


class State:
    def __init__(self, faults: dict[int, str], sleep_s: float):
        self.faults = faults
        self.sleep_s = sleep_s
        self.lock = threading.Lock()
        self.sessions: OrderedDict[str, Session] = OrderedDict()
        self.seen_resets: set[tuple] = set()
        self.counts: dict[str, int] = {}
        self.by_index: dict[str, dict[str, int]] = {}
        self.stopping = threading.Event()

    def count(self, op: str, index: int | None) -> None:
        with self.lock:
            self.counts[op] = self.counts.get(op, 0) + 1
            if index is not None:
                per = self.by_index.setdefault(str(index), {})
                per[op] = per.get(op, 0) + 1

    def first_reset(self, key: tuple) -> bool:
        with self.lock:
            if key in self.seen_resets:
                return False
            self.seen_resets.add(key)
            return True

    def add(self, session: Session) -> str:
        sid = uuid.uuid4().hex
        with self.lock:
            self.sessions[sid] = session
            while len(self.sessions) > MAX_SESSIONS:
                self.sessions.popitem(last=False)
        return sid

    def get(self, sid: object) -> Session:
        if not isinstance(sid, str):
            raise HttpError(400, '"session" must be a string')
        with self.lock:
            session = self.sessions.get(sid)
        if session is None:
            raise HttpError(404, f"unknown session {clip(sid)!r}")
        return session

    def remove(self, sid: object) -> Session:
        session = self.get(sid)
        with self.lock:
            self.sessions.pop(sid, None)  # type: ignore[arg-type]
        return session

    def stats(self) -> dict:
        with self.lock:
            return {"requests": dict(self.counts), "by_index": {k: dict(v) for k, v in self.by_index.items()}, "sessions": len(self.sessions)}


class CloseConnection(Exception):
    """Drop the connection without an answer (fault injection)."""


class Handler(BaseHTTPRequestHandler):
    server_version = "arl-reference-env/1"
    state: State  # set on the subclass made by make_server

    def log_message(self, format: str, *args) -> None:  # quiet unless --verbose
        if getattr(self.server, "verbose", False):
            sys.stderr.write(f"{self.address_string()} - {format % args}\n")

    # -- plumbing

    def _send(self, status: int, body: object, raw: bytes | None = None) -> None:
        data = raw if raw is not None else json.dumps(body).encode("utf-8")
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json" if raw is None else "text/plain")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (e.g. its timeout); nothing to answer

    def _sleep(self) -> None:
        self.state.stopping.wait(self.state.sleep_s)

    def do_GET(self) -> None:
        op = self.path.split("?", 1)[0].rstrip("/").rsplit("/", 1)[-1]
        if op == "health":
            self._send(200, {"ok": True})
        elif op == "stats":
            self._send(200, self.state.stats())
        else:
            self._send(404, {"error": f"no GET endpoint {self.path!r}; POST reset, step, outcome, close"})

    def do_POST(self) -> None:
        op = self.path.split("?", 1)[0].rstrip("/").rsplit("/", 1)[-1]
        handler = {"reset": self._reset, "step": self._step, "outcome": self._outcome, "close": self._close}.get(op)
        try:
            if handler is None:
                raise HttpError(404, f"no endpoint {self.path!r}; POST reset, step, outcome, close")
            body = self._body()
            status, answer = handler(body)
            if isinstance(answer, bytes):
                self._send(status, None, raw=answer)
            else:
                self._send(status, answer)
        except CloseConnection:
            self.close_connection = True
            try:
                self.connection.shutdown(2)
            except OSError:
                pass
        except HttpError as e:
            self._send(e.status, {"error": e.message})
        except Exception as e:  # a bug in the server: report it as a 500, keep serving
            self._send(500, {"error": f"{type(e).__name__}: {e}"})

    def _body(self) -> dict:
        raw_length = self.headers.get("Content-Length", "0").strip()
        if not raw_length.isdigit():
            # The body's end is unknown: the connection cannot carry another request.
            self.close_connection = True
            raise HttpError(400, f"bad Content-Length {clip(raw_length)!r}: want a non-negative integer")
        length = int(raw_length)
        if length > MAX_BODY:
            self.close_connection = True  # the unread body would be taken for the next request
            raise HttpError(413, f"request body too large ({length} bytes; at most {MAX_BODY})")
        raw = self.rfile.read(length) if length > 0 else b""
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise HttpError(400, "the request body is not UTF-8") from e
        return parse_body(text)

    # -- endpoints

    def _reset(self, body: dict) -> tuple[int, object]:
        task = body.get("task")
        index = int_field(body, "index", minimum=0)
        seed = int_field(body, "seed", default=0)
        if task is not None and not isinstance(task, str):
            raise HttpError(400, f'"task" must be a string or null, not {clip(task)}; tasks: {", ".join(sorted(FAMILIES))}')
        family = "reach" if task is None else task
        if family not in FAMILIES:
            raise HttpError(400, f"unknown task {clip(task)!r}; tasks: {', '.join(sorted(FAMILIES))}")
        self.state.count("reset", index)
        fault = self.state.faults.get(index)
        key = (family, index, seed)
        if fault == "reset_500":
            raise HttpError(500, "injected fault: reset_500")
        if fault == "reset_400":
            raise HttpError(400, "injected fault: reset_400")
        if fault in ("reset_500_once", "reset_sleep_once", "reset_close_once") and self.state.first_reset(key):
            if fault == "reset_500_once":
                raise HttpError(500, "injected fault: reset_500_once")
            if fault == "reset_close_once":
                raise CloseConnection()
            self._sleep()
        session = Session(family, index, seed)
        sid = self.state.add(session)
        return 200, {"session": sid, "observation": session.game.intro(), "signals": session.game.state(), "tools": session.game.tools}

    def _step(self, body: dict) -> tuple[int, object]:
        session = self.state.get(body.get("session"))
        self.state.count("step", session.index)
        call = body.get("call")
        if not isinstance(call, dict) or not isinstance(call.get("name"), str):
            raise HttpError(400, '"call" must be an object with a string "name"')
        arguments = call.get("arguments", {})
        if not isinstance(arguments, dict):
            raise HttpError(400, '"call.arguments" must be an object')
        fault = self.state.faults.get(session.index)
        if fault == "step_500":
            raise HttpError(500, "injected fault: step_500")
        if fault == "step_close":
            raise CloseConnection()
        if fault == "step_bad_json":
            return 200, b"this is not JSON"
        if fault == "step_missing":
            return 200, {}
        if fault == "step_error":
            return 200, {"error": "injected fault: step_error"}
        if fault == "step_sleep":
            self._sleep()
        with session.lock:
            if session.done:
                raise HttpError(409, "the episode has ended; reset for a new one")
            session.steps += 1
            text, terminated = session.game.act(call["name"], arguments)
            if session.steps >= MAX_STEPS and not terminated:
                text += f" (step limit {MAX_STEPS} reached)"
                terminated = True
            session.done = terminated
            return 200, {"observation": text, "signals": session.game.state(), "terminated": terminated}

    def _outcome(self, body: dict) -> tuple[int, object]:
        session = self.state.get(body.get("session"))
        self.state.count("outcome", session.index)
        with session.lock:
            session.outcome_calls += 1
            first = session.outcome_calls == 1
            if first and self.state.faults.get(session.index) == "outcome_500_once":
                raise HttpError(500, "injected fault: outcome_500_once")
            return 200, {"signals": {**session.game.outcome(), "steps": session.steps}}

    def _close(self, body: dict) -> tuple[int, object]:
        session = self.state.get(body.get("session"))
        self.state.count("close", session.index)
        if self.state.faults.get(session.index) == "close_500":
            raise HttpError(500, "injected fault: close_500")
        self.state.remove(body.get("session"))
        return 200, {"closed": True}


def parse_faults(specs: list[str]) -> dict[int, str]:
    faults = dict(DEFAULT_FAULTS)
    for spec in specs:
        index, sep, kind = spec.partition("=")
        if not sep or not index.strip().isdigit() or kind.strip() not in FAULTS:
            raise ValueError(f"bad --fault {spec!r}: want INDEX=KIND with KIND one of {', '.join(FAULTS)}")
        faults[int(index)] = kind.strip()
    return faults


class Server(ThreadingHTTPServer):
    daemon_threads = True
    # The default backlog (5) drops connections of a burst of parallel episodes: the client
    # then waits a second for a SYN retransmit.
    request_queue_size = 128


def make_server(port: int = 0, faults: dict[int, str] | None = None, sleep_s: float = 3.0, verbose: bool = False) -> Server:
    """A server bound to 127.0.0.1:port (0: a free port), not yet serving."""
    state = State(dict(DEFAULT_FAULTS) if faults is None else faults, sleep_s)
    handler = type("BoundHandler", (Handler,), {"state": state})
    server = Server(("127.0.0.1", port), handler)
    server.verbose = verbose  # type: ignore[attr-defined]
    server.state = state  # type: ignore[attr-defined]
    return server


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Reference HTTP task server for arl's http env kind (127.0.0.1 only).")
    parser.add_argument("--port", type=int, default=0, help="port to listen on; 0 picks a free one (default)")
    parser.add_argument("--fault", action="append", default=[], metavar="INDEX=KIND", help="inject a fault for a task index (repeatable)")
    parser.add_argument("--sleep-s", type=float, default=3.0, help="how long the *_sleep faults sleep (default 3)")
    parser.add_argument("--verbose", action="store_true", help="log every request to stderr")
    args = parser.parse_args(argv)
    try:
        faults = parse_faults(args.fault)
    except ValueError as e:
        parser.error(str(e))
    if not 0 <= args.port <= 65535:
        parser.error("--port must be in 0..65535")

    server = make_server(args.port, faults, args.sleep_s, args.verbose)

    def stop(signum, frame) -> None:
        server.state.stopping.set()  # type: ignore[attr-defined]
        # shutdown() waits for serve_forever to return: call it off the serving thread.
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    print(f"listening on http://127.0.0.1:{server.server_address[1]}", flush=True)
    try:
        server.serve_forever(poll_interval=0.1)
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
