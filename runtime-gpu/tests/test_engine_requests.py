"""Every HTTP call ARL's engine wires build, checked by vLLM's and SGLang's own code (pinned:
vllm 0.33.0, sglang 0.5.23, installed with --no-deps; docs/engines.md "Verified against").

The calls come from runtime-gpu/tests/engine_requests.mjs over dist/ (`npm run build` first).
What each engine's code checks, and what is imported for it:

- vLLM: `CompletionRequest` (vllm.entrypoints.openai.completion.protocol, the class the
  /v1/completions route parses into) and its `to_sampling_params`, whose `SamplingParams` runs
  vLLM's value checks; `LoadLoRAAdapterRequest` (vllm.entrypoints.serve.lora.protocol); the launch
  flags through an argparse parser built from vLLM's own per-field kwargs (`get_kwargs` of
  ModelConfig, ParallelConfig, LoRAConfig, FrontendArgs: types and choices), because
  `make_arg_parser` itself needs xgrammar and apache-tvm-ffi. The development-mode routes
  (/pause, /collective_rpc, /update_weight_version, /resume) import the engine's request and
  structured-output stack, so their signatures are read from the installed source with `ast`.
- SGLang: `GenerateRequest` of sglang.api.v1.api_types, the schema decoder the /generate route
  applies to every body (`generate_contract_error`), and sglang.srt.sampling.sampling_params
  `SamplingParams(**sampling_params)` with `verify` and `normalize`; the launch argv through
  `ServerArgs.add_cli_args`. `GenerateReqInput`, `UpdateWeightFromDiskReqInput` and
  `LoadLoRAAdapterReqInput` live in sglang.srt.managers.io_struct, whose imports need
  torchvision, so their fields are read from the installed source with `ast`. The `sglang`
  package's own __init__ (its frontend language, which imports IPython) is not run: the package
  is entered at its installed directory and the submodules above are imported from it.

Both wires' answer parsers read answers written by the engines' own response classes.
"""

import argparse
import ast
import importlib
import importlib.util
import json
import shutil
import subprocess
import sys
import types
import typing
from pathlib import Path

import pytest
from helpers import require_built

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "runtime-gpu" / "tests" / "engine_requests.mjs"
WIRES = REPO / "dist" / "inference" / "engine" / "wires.js"
QWEN_VOCAB = 151936


def run_script(mode, stdin=None):
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not on PATH")
    require_built(WIRES)
    done = subprocess.run([node, str(SCRIPT), mode], input=stdin, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def calls():
    return run_script("requests")


def by_name(calls, engine):
    return {item["name"]: item for item in calls[engine]["generate"]}


def unknown_keys(body, names):
    """Keys a class would ignore (both engines' request classes ignore unknown top-level keys)."""
    return sorted(set(body) - set(names))


def installed_source(module_name, relative):
    spec = importlib.util.find_spec(module_name)
    if spec is None:
        pytest.skip(f"{module_name} is not installed (runtime-gpu/requirements-engines.in)")
    return ast.parse((Path(next(iter(spec.submodule_search_locations))) / relative).read_text())


def routes(tree):
    """{(method, path): FunctionDef} of the FastAPI routes a module declares."""
    found = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.AsyncFunctionDef | ast.FunctionDef):
            continue
        for decorator in node.decorator_list:
            if not (isinstance(decorator, ast.Call) and isinstance(decorator.func, ast.Attribute) and decorator.args):
                continue
            first = decorator.args[0]
            if not (isinstance(first, ast.Constant) and isinstance(first.value, str)):
                continue
            kind = decorator.func.attr
            if kind in ("get", "post"):
                found[(kind.upper(), first.value)] = node
            elif kind == "api_route":
                for keyword in decorator.keywords:
                    if keyword.arg == "methods":
                        for method in ast.literal_eval(keyword.value):
                            found[(method, first.value)] = node
    return found


def class_fields(tree, name):
    """{field: has_default} of a class's annotated fields, from its source."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == name:
            return {item.target.id: item.value is not None for item in node.body if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)}
    raise AssertionError(f"class {name} is not in the installed source")


def check_body_against_fields(body, fields):
    assert unknown_keys(body, fields) == [], f"fields the class does not have: {unknown_keys(body, fields)}"
    missing = [name for name, has_default in fields.items() if not has_default and name not in body]
    assert missing == [], f"required fields missing: {missing}"


# --------------------------------------------------------------------------- vLLM


@pytest.fixture(scope="module")
def vllm_protocol():
    return pytest.importorskip("vllm.entrypoints.openai.completion.protocol", reason="vllm==0.33.0 is not installed (runtime-gpu/requirements-engines.in)")


def vllm_sampling(protocol, body, defaults=None):
    request = protocol.CompletionRequest.model_validate(body)
    return request, request.to_sampling_params(request.max_tokens, defaults or {})


def test_vllm_completion_requests_parse_and_convert_to_sampling_params(calls, vllm_protocol):
    # A Qwen-like generation_config.json as server defaults: the request's explicit values win.
    model_defaults = {"repetition_penalty": 1.05, "temperature": 0.7, "top_p": 0.8, "top_k": 20}
    for name, item in by_name(calls, "vllm").items():
        body, args = item["call"]["body"], item["args"]
        assert (item["call"]["method"], item["call"]["path"]) == ("POST", "/v1/completions")
        assert unknown_keys(body, vllm_protocol.CompletionRequest.model_fields) == [], name
        request, params = vllm_sampling(vllm_protocol, body, model_defaults)
        assert request.prompt == args["prompt"], name
        assert params.max_tokens == args["maxNewTokens"] and params.seed == args["seed"], name
        assert params.stop_token_ids == args["stopIds"] and params.ignore_eos, name
        assert params.logprobs == 0 and request.return_token_ids and request.return_weight_versions, name
        assert (params.repetition_penalty, params.presence_penalty, params.frequency_penalty, params.min_p) == (1.0, 0.0, 0.0, 0.0), name
        if args["temperature"] == 0:
            assert params.sampling_type.name == "GREEDY", name
        else:
            assert (params.temperature, params.top_p, params.top_k) == (args["temperature"], args["topP"], args["topK"]), name
        # The model's eos ids from generation_config do not join the stop set (ignore_eos).
        params.update_from_generation_config({"eos_token_id": [151645, 151643, 7]}, eos_token_id=151643)
        assert params.stop_token_ids == args["stopIds"] and params.eos_token_id is None, name
    assert by_name(calls, "vllm")["lora"]["call"]["body"]["model"] == "arl-policy-v3"


def test_vllm_rejects_what_is_wrong(calls, vllm_protocol):
    from pydantic import ValidationError
    from vllm.exceptions import VLLMValidationError

    good = by_name(calls, "vllm")["top_k"]["call"]["body"]
    with pytest.raises(VLLMValidationError, match="top_k"):
        vllm_sampling(vllm_protocol, {**good, "top_k": -2})
    with pytest.raises(VLLMValidationError, match="logprobs"):
        vllm_sampling(vllm_protocol, {**good, "logprobs": -3})
    with pytest.raises(ValidationError):
        vllm_sampling(vllm_protocol, {**good, "prompt": [1, "x"]})
    with pytest.raises(VLLMValidationError, match="temperature"):
        vllm_sampling(vllm_protocol, {**good, "temperature": 2.5})
    assert unknown_keys({**good, "stop_ids": [1]}, vllm_protocol.CompletionRequest.model_fields) == ["stop_ids"]


def test_vllm_lora_adapter_request(calls):
    lora = pytest.importorskip("vllm.entrypoints.serve.lora.protocol")
    from pydantic import ValidationError

    (call,) = calls["vllm"]["weightSync"]["lora"]
    assert (call["method"], call["path"]) == ("POST", "/v1/load_lora_adapter")
    assert unknown_keys(call["body"], lora.LoadLoRAAdapterRequest.model_fields) == []
    assert lora.LoadLoRAAdapterRequest.model_validate(call["body"]).lora_name == "arl-policy-v3"
    with pytest.raises(ValidationError):
        lora.LoadLoRAAdapterRequest.model_validate({"lora_name": "arl-policy-v3"})
    router = routes(installed_source("vllm", "entrypoints/serve/lora/api_router.py"))
    assert ("POST", "/v1/load_lora_adapter") in router


def test_vllm_lora_unload_request(calls):
    lora = pytest.importorskip("vllm.entrypoints.serve.lora.protocol")

    call = calls["vllm"]["unloadAdapter"]
    assert (call["method"], call["path"], call["answer"]) == ("POST", "/v1/unload_lora_adapter", "text")
    assert unknown_keys(call["body"], lora.UnloadLoRAAdapterRequest.model_fields) == []
    assert lora.UnloadLoRAAdapterRequest.model_validate(call["body"]).lora_name == "arl-policy-v3"
    router = routes(installed_source("vllm", "entrypoints/serve/lora/api_router.py"))
    assert ("POST", "/v1/unload_lora_adapter") in router


def embedded_body_params(function):
    """Names of a route's `Annotated[..., Body(embed=True)]` parameters, and its `Query` ones."""
    body, query = set(), {}
    for arg in function.args.args:
        annotation = ast.unparse(arg.annotation) if arg.annotation is not None else ""
        if "Body(embed=True)" in annotation:
            body.add(arg.arg)
        elif "Query(" in annotation:
            query[arg.arg] = annotation
    return body, query


def test_vllm_weight_sync_calls_match_the_development_routes(calls, vllm_protocol):
    from vllm.v1.engine import PauseMode

    rl = routes(installed_source("vllm", "entrypoints/rl/online/api_router.py"))
    rpc = routes(installed_source("vllm", "entrypoints/serve/dev/rpc/api_router.py"))
    pause, reload, relabel, resume = calls["vllm"]["weightSync"]["full"]
    path, _, query = pause["path"].partition("?")
    _, pause_query = embedded_body_params(rl[("POST", path)])
    for pair in query.split("&"):
        key, _, value = pair.partition("=")
        assert key in pause_query
    assert dict(pair.split("=") for pair in query.split("&"))["mode"] in typing.get_args(PauseMode)
    # /collective_rpc reads the body's "method" and "kwargs" (strings only) and calls the method on every worker.
    handler = rpc[("POST", reload["path"])]
    read_keys = {
        node.args[0].value
        for node in ast.walk(handler)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
        if node.args and isinstance(node.args[0], ast.Constant)
    }
    assert set(reload["body"]) <= read_keys
    assert all(isinstance(value, str) for value in reload["body"]["kwargs"].values())
    runner = installed_source("vllm", "v1/worker/gpu_model_runner.py")
    (method,) = [n for n in ast.walk(runner) if isinstance(n, ast.FunctionDef) and n.name == reload["body"]["method"]]
    assert set(reload["body"]["kwargs"]) <= {a.arg for a in method.args.args + method.args.kwonlyargs}
    body_params, _ = embedded_body_params(rl[("POST", relabel["path"])])
    assert set(relabel["body"]) == body_params
    assert ("POST", resume["path"]) in rl and "body" not in resume and "body" not in pause


VLLM_FLAGS = {"--seed", "--dtype", "--tensor-parallel-size", "--logprobs-mode", "--generation-config", "--max-model-len", "--enable-lora", "--max-lora-rank"}


def vllm_flag_parser():
    """vLLM's `vllm serve` flags that ARL uses, each added with vLLM's own argparse kwargs."""
    from vllm.config import LoRAConfig, ModelConfig, ParallelConfig
    from vllm.engine.arg_utils import get_kwargs
    from vllm.entrypoints.common.cli_args import FrontendArgs

    sources = {"model_kwargs": ModelConfig, "parallel_kwargs": ParallelConfig, "lora_kwargs": LoRAConfig}
    parser = argparse.ArgumentParser(prog="vllm serve", exit_on_error=False)
    parser.add_argument("model_tag")
    for key in ("host", "port"):
        kwargs = get_kwargs(FrontendArgs)[key]
        parser.add_argument(*kwargs.pop("flags", []), f"--{key.replace('_', '-')}", **kwargs)
    tree = installed_source("vllm", "engine/arg_utils.py")
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument"):
            continue
        flags = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        if not set(flags) & VLLM_FLAGS:
            continue
        kwargs = {}
        for keyword in node.keywords:
            if keyword.arg is None:  # **model_kwargs["dtype"]
                source = sources[keyword.value.value.id]
                kwargs.update(get_kwargs(source)[keyword.value.slice.value])
            elif keyword.arg != "help":
                kwargs[keyword.arg] = eval(compile(ast.Expression(keyword.value), "arg_utils", "eval"), {"argparse": argparse})  # noqa: S307 (vLLM's own source)
        kwargs.pop("flags", None)
        parser.add_argument(*flags, **kwargs)
    return parser


def test_vllm_launch_command_parses_with_vllms_flag_definitions(calls, vllm_protocol):
    from vllm import envs

    parser = vllm_flag_parser()
    full, lora = calls["vllm"]["launch"]["full"], calls["vllm"]["launch"]["lora"]
    assert full["command"] == "vllm" and full["args"][0] == "serve"
    args = parser.parse_args(full["args"][1:])
    assert (args.model_tag, args.host, args.port, args.seed, args.tensor_parallel_size) == ("Qwen/Qwen2.5-0.5B-Instruct", "127.0.0.1", 8100, 7, 2)
    assert (args.logprobs_mode, args.generation_config, args.dtype, args.max_model_len) == ("processed_logprobs", "vllm", "bfloat16", 8192)
    lora_args = parser.parse_args(lora["args"][1:])
    assert lora_args.enable_lora is True and lora_args.max_lora_rank == 16
    with pytest.raises((argparse.ArgumentError, SystemExit)):
        parser.parse_args(["m", "--max-lora-rank", "12"])
    with pytest.raises((argparse.ArgumentError, SystemExit)):
        parser.parse_args(["m", "--logprobs-mode", "processed"])
    # --engine-python: the API server's module, which takes the model as --model and the same flags.
    module = calls["vllm"]["launch"]["module"]
    assert module["command"] == "/opt/engine/bin/python"
    assert module["args"][:4] == ["-m", "vllm.entrypoints.openai.api_server", "--model", "Qwen/Qwen2.5-0.5B-Instruct"]
    assert module["args"][4:] == full["args"][2:] and module["env"] == full["env"]
    server_main = installed_source("vllm", "entrypoints/openai/api_server.py")
    assert any(isinstance(n, ast.If) and "__main__" in ast.unparse(n.test) for n in server_main.body), "the module runs as a program"
    # The development routes and runtime LoRA loading are enabled by the variables as vLLM reads them.
    for name, value in lora["env"].items():
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv(name, value)
            assert envs.environment_variables[name]() is True, name


def test_vllm_answers_written_by_vllm_are_read(calls, vllm_protocol):
    from vllm.entrypoints.serve.engine.protocol import UsageInfo
    from vllm.outputs import WeightVersionSpan

    p = vllm_protocol
    request = by_name(calls, "vllm")["top_p"]["args"]

    def answer(finish, ids, version):
        n = len(ids)
        logprobs = p.CompletionLogProbs(token_logprobs=[-0.5, -0.25][:n], tokens=["a", "b"][:n], text_offset=[0, 1][:n], top_logprobs=[None] * n)
        spans = [WeightVersionSpan(version, 0, n)]
        choice = p.CompletionResponseChoice(index=0, text="ab", token_ids=ids, logprobs=logprobs, finish_reason=finish, weight_versions=spans)
        usage = UsageInfo(prompt_tokens=9, completion_tokens=n, total_tokens=9 + n)
        return json.loads(p.CompletionResponse(model=request["model"], choices=[choice], usage=usage).model_dump_json())

    items = [
        {"engine": "vllm", "answer": answer("stop", [9707, 151645], "3"), "request": request},
        {"engine": "vllm", "answer": answer("length", [9707, 11], "default"), "request": request},
        {"engine": "vllm", "answer": answer("abort", [9707], "3"), "request": request},
    ]
    stop, length, abort = run_script("parse", json.dumps(items))
    assert stop == {"ids": [9707, 151645], "logprobs": [-0.5, -0.25], "finish": "stop", "weightVersion": "3"}
    assert length["finish"] == "length" and length["weightVersion"] is None
    assert abort["error"] == "EngineProtocolError" and '"abort"' in abort["message"]


# --------------------------------------------------------------------------- SGLang


@pytest.fixture(scope="module")
def sglang():
    """sglang's installed package, entered without running its __init__ (see the module docstring)."""
    spec = importlib.util.find_spec("sglang")
    if spec is None:
        pytest.skip("sglang==0.5.23 is not installed (runtime-gpu/requirements-engines.in)")
    before = set(sys.modules)
    if "sglang" not in sys.modules:
        package = types.ModuleType("sglang")
        package.__path__ = list(spec.submodule_search_locations)
        package.__spec__ = spec
        sys.modules["sglang"] = package
    yield types.SimpleNamespace(
        api=importlib.import_module("sglang.api.v1.api_types"),
        sampling=importlib.import_module("sglang.srt.sampling.sampling_params"),
        server_args=importlib.import_module("sglang.srt.server_args"),
        source=lambda relative: installed_source("sglang", relative),
    )
    # Later tests that import sglang get the real package, __init__ and all.
    for name in set(sys.modules) - before:
        if name == "sglang" or name.startswith("sglang."):
            del sys.modules[name]


def sglang_fields(struct):
    return struct.__struct_fields__


def test_sglang_generate_requests_pass_the_route_contract_and_sampling_checks(calls, sglang):
    api, sampling = sglang.api, sglang.sampling
    for name, item in by_name(calls, "sglang").items():
        body, args = item["call"]["body"], item["args"]
        assert (item["call"]["method"], item["call"]["path"]) == ("POST", "/generate")
        assert unknown_keys(body, sglang_fields(api.GenerateRequest)) == [], name
        decoded = api.GenerateRequest.from_json_value(body)  # the /generate route's contract gate
        assert list(decoded.input_ids) == args["prompt"] and decoded.return_logprob is True, name
        params = sampling.SamplingParams(**body["sampling_params"])
        params.verify(QWEN_VOCAB)
        params.normalize(None)
        assert params.max_new_tokens == args["maxNewTokens"] and params.sampling_seed == args["seed"], name
        assert params.stop_token_ids == (set(args["stopIds"]) or None) and params.no_stop_trim, name
        if args["temperature"] == 0:
            assert params.top_k == 1, name  # SGLang's greedy
        else:
            assert (params.temperature, params.top_p) == (args["temperature"], args["topP"]), name
            assert params.top_k == (args["topK"] if args["topK"] > 0 else sampling.TOP_K_ALL), name
    named = by_name(calls, "sglang")
    assert named["lora"]["call"]["body"]["lora_path"] == "arl-policy-v3"
    # The sampling mask (log-probs under the truncated distribution) is asked for exactly where
    # the scheduler admits it: a finite top-k up to --sampling-mask-max-tokens.
    exec_fields = sglang.source("srt/arg_groups/fields/exec_.py")
    (cap,) = [
        ast.literal_eval(n.value) for n in ast.walk(exec_fields) if isinstance(n, ast.AnnAssign) and getattr(n.target, "id", "") == "sampling_mask_max_tokens"
    ]
    for name, item in named.items():
        top_k, temperature = item["args"]["topK"], item["args"]["temperature"]
        assert item["call"]["body"].get("return_sampling_mask", False) == (temperature > 0 and 1 <= top_k <= cap), name


def test_sglang_rejects_what_is_wrong(calls, sglang):
    api, sampling = sglang.api, sglang.sampling
    good = by_name(calls, "sglang")["top_k"]["call"]["body"]
    with pytest.raises(api.JsonContractError):
        api.GenerateRequest.from_json_value({**good, "sampling_params": {**good["sampling_params"], "seed": 1}})
    with pytest.raises(api.JsonContractError):
        api.GenerateRequest.from_json_value({**good, "input_ids": [1, "x"]})
    with pytest.raises(TypeError):
        sampling.SamplingParams(**{**good["sampling_params"], "seed": 1})
    with pytest.raises(ValueError, match="top_k"):
        sampling.SamplingParams(**{**good["sampling_params"], "top_k": 0}).verify(QWEN_VOCAB)
    assert unknown_keys({**good, "return_logprobs": True}, sglang_fields(api.GenerateRequest)) == ["return_logprobs"]


def test_sglang_weight_sync_and_health_match_the_server(calls, sglang):
    io_struct = sglang.source("srt/managers/io_struct.py")
    server = routes(sglang.source("srt/entrypoints/http_server.py"))
    (full,) = calls["sglang"]["weightSync"]["full"]
    (lora,) = calls["sglang"]["weightSync"]["lora"]
    health = calls["sglang"]["health"]
    for call, cls in ((full, "UpdateWeightFromDiskReqInput"), (lora, "LoadLoRAAdapterReqInput")):
        assert (call["method"], call["path"]) in server, call["path"]
        fields = class_fields(io_struct, cls)
        check_body_against_fields(call["body"], fields)
        with pytest.raises(AssertionError):
            check_body_against_fields({**call["body"], "weights_path": "/w"}, fields)
    assert isinstance(full["body"]["weight_version"], str) and full["body"]["flush_cache"] is True
    assert (health["method"], health["path"]) in server
    generate_fields = class_fields(io_struct, "GenerateReqInput")
    for item in calls["sglang"]["generate"]:
        assert unknown_keys(item["call"]["body"], generate_fields) == [], item["name"]


def test_sglang_launch_argv_parses_with_server_args(calls, sglang):
    parser = argparse.ArgumentParser(prog="sglang serve", exit_on_error=False)
    sglang.server_args.ServerArgs.add_cli_args(parser)
    full, lora = calls["sglang"]["launch"]["full"], calls["sglang"]["launch"]["lora"]
    assert full["args"][:2] == ["-m", "sglang.launch_server"]
    args = parser.parse_args(full["args"][2:])
    assert (args.model_path, args.host, args.port, args.random_seed) == ("Qwen/Qwen2.5-0.5B-Instruct", "127.0.0.1", 8100, 7)
    assert (args.tp_size, args.dtype) == (2, "bfloat16")
    assert args.enable_deterministic_inference is True and args.context_length == 8192
    lora_args = parser.parse_args(lora["args"][2:])
    assert lora_args.enable_lora is True and lora_args.max_lora_rank == 16 and list(lora_args.lora_target_modules) == ["all"]
    with pytest.raises((argparse.ArgumentError, SystemExit)):
        parser.parse_args(["--model-path", "m", "--dtype", "bf16"])


def test_sglang_answers_written_by_sglang_are_read(calls, sglang):
    api = sglang.api
    request = by_name(calls, "sglang")["temperature"]["args"]
    masked = by_name(calls, "sglang")["top_k"]["args"]

    def answer(finish, ids, version, **meta):
        entries = [api.LogprobEntry(logprob=-0.5 / (k + 1), token_id=i, text=None) for k, i in enumerate(ids)]
        spans = [api.WeightVersionSpan(version=version, start=0, end=len(ids))]
        info = api.GenerateMetaInfo(
            id="r1", prompt_tokens=9, completion_tokens=len(ids), finish_reason=finish,
            output_token_logprobs=entries, weight_version=version, weight_versions=spans,
        )
        value = api.GenerateResponse(text="ab", meta_info=info, output_ids=ids).to_json_value()
        value["meta_info"].update(meta)  # fields the schema does not list (the sampling mask's)
        return value

    mask = {"output_token_sampling_logprobs": [-0.125, -0.0625]}
    items = [
        {"engine": "sglang", "answer": answer(api.FinishStop(matched=151645), [9707, 151645], "3"), "request": request},
        {"engine": "sglang", "answer": answer(api.FinishLength(length=2), [9707, 11], "default"), "request": request},
        {"engine": "sglang", "answer": answer(api.FinishAbort(message="oom"), [9707], "3"), "request": request},
        {"engine": "sglang", "answer": answer(api.FinishStop(matched=151645), [9707, 151645], "3", **mask), "request": masked},
    ]
    stop, length, abort, truncated = run_script("parse", json.dumps(items))
    assert stop == {"ids": [9707, 151645], "logprobs": [-0.5, -0.25], "finish": "stop", "weightVersion": "3"}
    assert length["finish"] == "length" and length["weightVersion"] is None
    assert abort["error"] == "EngineProtocolError" and '"abort"' in abort["message"]
    assert truncated["logprobs"] == [-0.125, -0.0625]
