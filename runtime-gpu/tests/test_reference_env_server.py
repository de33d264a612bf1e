"""The reference HTTP task server (reference_env_server.py, with reference_env_tasks.py and
reference_env_bodies.py) on its own, through a standard-library client (urllib): the wire format,
both task families, session isolation, every injected fault, bad requests, and the process:
`--port 0`, loopback only, clean exit on SIGTERM."""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

import pytest

import reference_env_bodies as bodies
import reference_env_server as res
import reference_env_tasks as tasks

SERVER = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "reference_env_server.py")
SLEEP_S = 1.5


@pytest.fixture(scope="module")
def url():
    """The server in-process on a free port, on a background thread."""
    server = res.make_server(0, res.parse_faults(["7=step_500"]), sleep_s=SLEEP_S)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.state.stopping.set()
    server.shutdown()
    server.server_close()
    thread.join(5)


def post(url: str, op: str, body, timeout: float = 5.0):
    """(status, parsed JSON or raw text)."""
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    req = urllib.request.Request(f"{url}/{op}", data=data, method="POST", headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            status, raw = r.status, r.read()
    except urllib.error.HTTPError as e:
        status, raw = e.code, e.read()
    try:
        return status, json.loads(raw)
    except ValueError:
        return status, raw.decode()


def get(url: str, path: str):
    with urllib.request.urlopen(f"{url}/{path}", timeout=5) as r:
        return json.loads(r.read())


def reset(url: str, index: int, task="counter", seed: int = 0) -> dict:
    status, body = post(url, "reset", {"task": task, "index": index, "seed": seed})
    assert status == 200, body
    return body


def step(url: str, session: str, name: str, arguments=None):
    return post(url, "step", {"session": session, "call": {"name": name, "arguments": arguments or {}}})


def test_counter_episode_to_success(url):
    r = reset(url, 2)
    assert r["observation"] == "Call step 3 times."
    assert r["signals"] == {"progress": 0.0}
    assert [t["name"] for t in r["tools"]] == ["step", "noop"]
    sid = r["session"]
    assert step(url, sid, "noop") == (200, {"observation": "count 0", "signals": {"progress": 0.0}, "terminated": False})
    step(url, sid, "step")
    step(url, sid, "step")
    assert step(url, sid, "step") == (200, {"observation": "count 3", "signals": {"progress": 1.0}, "terminated": True})
    # The episode has ended: another step is a conflict.
    assert step(url, sid, "step")[0] == 409
    assert post(url, "outcome", {"session": sid}) == (200, {"signals": {"success": True, "steps": 4}})
    assert post(url, "outcome", {"session": sid}) == (200, {"signals": {"success": True, "steps": 4}})
    assert post(url, "close", {"session": sid}) == (200, {"closed": True})
    assert post(url, "close", {"session": sid})[0] == 404
    assert post(url, "outcome", {"session": sid})[0] == 404


def test_reach_family_is_the_default_and_deterministic(url):
    a = reset(url, 3, task=None)
    b = reset(url, 3, task="reach", seed=99)
    assert a["observation"] == b["observation"] == "The value is 4. Make it exactly 8 with add (1, 2 or 3) and double."
    sid = a["session"]
    status, bad = step(url, sid, "add", {"amount": 5})
    assert status == 200 and bad["observation"].startswith("Error:") and bad["terminated"] is False
    status, unknown = step(url, sid, "fly")
    assert status == 200 and "unknown tool 'fly'" in unknown["observation"]
    assert step(url, sid, "add", {"amount": True})[1]["observation"].startswith("Error:")
    assert step(url, sid, "add", {"amount": 2})[1]["signals"] == {"value": 6, "remaining": 2}
    assert step(url, sid, "double")[1] == {"observation": "The value is 12: past the target 8.", "signals": {"value": 12, "remaining": -4}, "terminated": True}
    assert post(url, "outcome", {"session": sid})[1] == {"signals": {"success": False, "steps": 5}}


def test_the_game_logic_directly():
    game = tasks.Reach(3, 0)
    assert (game.value, game.target) == (4, 8)
    assert game.act("double", {}) == ("The value is 8: the target.", True)
    assert game.outcome() == {"success": True}
    counter = tasks.Counter(0, 0)
    assert counter.act("step", {}) == ("count 1", True)


def test_step_limit_ends_the_episode(url):
    sid = reset(url, 0)["session"]
    for _ in range(tasks.MAX_STEPS - 1):
        assert step(url, sid, "noop")[1]["terminated"] is False
    last = step(url, sid, "noop")[1]
    assert last["terminated"] is True and "step limit" in last["observation"]


def test_any_path_prefix_routes_to_the_endpoints(url):
    r = reset(url + "/agentbench/counter", 1)
    assert post(url + "/x/y", "outcome", {"session": r["session"]}) == (200, {"signals": {"success": False, "steps": 0}})


def test_sessions_are_isolated_under_concurrency(url):
    sessions = [reset(url, 2)["session"] for _ in range(16)]
    errors = []

    def play(i: int, sid: str) -> None:
        try:
            for _ in range(i % 3):
                assert step(url, sid, "step")[0] == 200
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=play, args=(i, s)) for i, s in enumerate(sessions)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert errors == []
    for i, sid in enumerate(sessions):
        assert post(url, "outcome", {"session": sid})[1] == {"signals": {"success": False, "steps": i % 3}}
        post(url, "close", {"session": sid})


def test_bad_requests_are_4xx(url):
    assert post(url, "reset", b"not json")[0] == 400
    assert post(url, "reset", b"[1, 2]")[0] == 400
    assert post(url, "reset", {"task": "counter", "index": -1})[0] == 400
    assert post(url, "reset", {"task": "counter", "index": "3"})[0] == 400
    assert post(url, "reset", {"task": "counter", "index": 0, "seed": 1.5})[0] == 400
    status, body = post(url, "reset", {"task": "nope", "index": 0})
    assert status == 400 and "unknown task 'nope'" in body["error"]
    assert post(url, "step", {"session": "nope", "call": {"name": "step"}})[0] == 404
    assert post(url, "step", {"session": 12, "call": {"name": "step"}})[0] == 400
    sid = reset(url, 0)["session"]
    assert post(url, "step", {"session": sid, "call": "step"})[0] == 400
    assert post(url, "step", {"session": sid, "call": {"name": "step", "arguments": []}})[0] == 400
    assert post(url, "launch", {})[0] == 404
    assert get(url, "health") == {"ok": True}


def fault_index(kind: str) -> int:
    return {v: k for k, v in res.DEFAULT_FAULTS.items()}[kind]


def test_step_faults(url):
    def started(kind: str) -> str:
        return reset(url, fault_index(kind))["session"]

    status, body = step(url, started("step_500"), "step")
    assert status == 500 and "step_500" in body["error"]
    assert step(url, started("step_bad_json"), "step") == (200, "this is not JSON")
    assert step(url, started("step_missing"), "step") == (200, {})
    assert step(url, started("step_error"), "step") == (200, {"error": "injected fault: step_error"})
    with pytest.raises((http.client.RemoteDisconnected, ConnectionError, urllib.error.URLError)):
        step(url, started("step_close"), "step")
    sid = started("step_sleep")
    with pytest.raises((TimeoutError, socket.timeout, urllib.error.URLError)):
        post(url, "step", {"session": sid, "call": {"name": "step"}}, timeout=0.3)
    # A --fault option adds faults to any index.
    sid = reset(url, 7)["session"]
    assert step(url, sid, "step")[0] == 500


def test_reset_faults(url):
    once = fault_index("reset_500_once")
    assert post(url, "reset", {"task": "counter", "index": once, "seed": 5})[0] == 500
    assert post(url, "reset", {"task": "counter", "index": once, "seed": 5})[0] == 200
    # "once" is per (task, index, seed).
    assert post(url, "reset", {"task": "counter", "index": once, "seed": 6})[0] == 500
    assert post(url, "reset", {"task": "counter", "index": fault_index("reset_500"), "seed": 5})[0] == 500
    assert post(url, "reset", {"task": "counter", "index": fault_index("reset_500"), "seed": 5})[0] == 500
    assert post(url, "reset", {"task": "counter", "index": fault_index("reset_400")})[0] == 400
    closing = {"task": "counter", "index": fault_index("reset_close_once"), "seed": 1}
    with pytest.raises((http.client.RemoteDisconnected, ConnectionError, urllib.error.URLError)):
        post(url, "reset", closing)
    assert post(url, "reset", closing)[0] == 200
    slow = {"task": "counter", "index": fault_index("reset_sleep_once"), "seed": 1}
    t0 = time.monotonic()
    with pytest.raises((TimeoutError, socket.timeout, urllib.error.URLError)):
        post(url, "reset", slow, timeout=0.3)
    assert time.monotonic() - t0 < SLEEP_S
    assert post(url, "reset", slow)[0] == 200


def test_outcome_and_close_faults(url):
    sid = reset(url, fault_index("outcome_500_once"))["session"]
    assert post(url, "outcome", {"session": sid})[0] == 500
    assert post(url, "outcome", {"session": sid}) == (200, {"signals": {"success": False, "steps": 0}})
    sid = reset(url, fault_index("close_500"))["session"]
    assert post(url, "close", {"session": sid})[0] == 500
    assert post(url, "close", {"session": sid})[0] == 500


def test_stats_count_requests_per_index(url):
    before = get(url, "stats")["by_index"].get("5", {})
    sid = reset(url, 5)["session"]
    step(url, sid, "noop")
    post(url, "outcome", {"session": sid})
    post(url, "close", {"session": sid})
    after = get(url, "stats")["by_index"]["5"]
    for op in ("reset", "step", "outcome", "close"):
        assert after[op] == before.get(op, 0) + 1


def test_parse_faults():
    assert res.parse_faults(["3=step_500"])[3] == "step_500"
    assert res.parse_faults([])[1000] == "step_500"
    for bad in ("3", "x=step_500", "3=explode"):
        with pytest.raises(ValueError):
            res.parse_faults([bad])


def test_process_port_zero_loopback_and_sigterm():
    proc = subprocess.Popen([sys.executable, SERVER, "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline().strip()
        assert line.startswith("listening on http://127.0.0.1:")
        port = int(line.rsplit(":", 1)[1])
        assert port > 0
        base = f"http://127.0.0.1:{port}"
        assert get(base, "health") == {"ok": True}
        # Bound to the loopback address only.
        with socket.create_connection(("127.0.0.1", port), timeout=2):
            pass
        # A request in progress (a sleeping fault) does not hold up the shutdown.
        sid = reset(base, fault_index("step_sleep"))["session"]
        def sleeping_step() -> None:
            try:
                post(base, "step", {"session": sid, "call": {"name": "step"}}, timeout=10)
            except (OSError, http.client.HTTPException):
                pass  # the server may go before it answers

        sleeper = threading.Thread(target=sleeping_step, daemon=True)
        sleeper.start()
        time.sleep(0.2)
        t0 = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(5) == 0
        assert time.monotonic() - t0 < 2
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()


def test_the_listening_socket_is_loopback_only():
    server = res.make_server(0)
    try:
        assert server.server_address[0] == "127.0.0.1"
    finally:
        server.server_close()


def test_bad_arguments_exit_with_status_2():
    r = subprocess.run([sys.executable, SERVER, "--fault", "1=explode"], capture_output=True, text=True, timeout=10)
    assert r.returncode == 2 and "bad --fault" in r.stderr


def raw_request(url: str, head: bytes, body: bytes = b"") -> tuple[int, dict]:
    """One hand-written request on its own connection: (status, parsed JSON error body)."""
    host, port = url.rsplit("/", 1)[-1].split(":")
    with socket.create_connection((host, int(port)), timeout=5) as sock:
        sock.sendall(head + body)
        response = http.client.HTTPResponse(sock)
        response.begin()
        return response.status, json.loads(response.read())


@pytest.mark.parametrize(
    "body, says",
    [
        (b'{"task": "counter", "index": 0, "seed": 1' + b"0" * 5000 + b"}", "5001 digits"),
        (json.dumps({"task": "counter", "index": 0, "seed": 2**64}).encode(), '"seed" must be an integer that fits 64 bits'),
        (json.dumps({"task": "counter", "index": 10**19 * 2}).encode(), '"index" must be a non-negative integer'),
        (json.dumps({"task": ["counter"], "index": 0}).encode(), '"task" must be a string or null'),
        (json.dumps({"task": {"name": "counter"}, "index": 0}).encode(), '"task" must be a string or null'),
        (b"[" * 100_000 + b"]" * 100_000, "nests deeper than"),
        (b'{"task": "counter", "index": 0, "x": ' + b'{"a": ' * 100_000 + b"1" + b"}" * 100_001, "nests deeper than"),
        (b'{"task": "counter", "index": 0, "seed": NaN}', "NaN is not JSON"),
        (b"\xff\xfe", "not UTF-8"),
        (b'{"task": "counter", "index": 0', "not JSON (Expecting"),
    ],
    ids=["seed-10**5000", "seed-2**64", "index-2e19", "task-list", "task-object", "100k-deep-arrays", "100k-deep-objects", "nan", "not-utf8", "truncated"],
)
def test_hostile_reset_bodies_are_400_with_a_message(url, body, says):
    status, answer = post(url, "reset", body)
    assert status == 400, answer
    assert says in answer["error"]
    assert "Error:" not in answer["error"]  # no Python exception text
    assert get(url, "health") == {"ok": True}  # and the server keeps serving


def test_brackets_inside_strings_do_not_count_as_depth(url):
    deep_looking = "[" * 10_000 + '\\"{' * 100
    status, answer = post(url, "reset", {"task": "counter", "index": 0, "note": deep_looking})
    assert status == 200, answer
    assert bodies.json_depth(json.dumps({"a": [[deep_looking]]}), 32) == 3


def test_a_long_task_name_is_not_echoed_whole(url):
    status, answer = post(url, "reset", {"task": "x" * 100_000, "index": 0})
    assert status == 400 and "unknown task" in answer["error"]
    assert len(answer["error"]) < 300


def test_bad_content_length_is_400_and_closes_the_connection(url):
    status, answer = raw_request(url, b"POST /reset HTTP/1.1\r\nHost: x\r\nContent-Length: lots\r\n\r\n", b"{}")
    assert status == 400 and "bad Content-Length 'lots'" in answer["error"]
    status, answer = raw_request(url, b"POST /reset HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n")
    assert status == 400 and "bad Content-Length" in answer["error"]
    status, answer = raw_request(url, b"POST /reset HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000000000\r\n\r\n")
    assert status == 413 and "too large" in answer["error"]
    assert get(url, "health") == {"ok": True}
