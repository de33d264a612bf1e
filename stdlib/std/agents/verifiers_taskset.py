"""One task of a verifiers v1 taskset (prime-rl's environments) as an ARL agent episode.

ARL starts this program once per episode (`std/envs/verifiers`, docs/envs.md, "verifiers") with
the env servers' Python, which has verifiers 0.4.0. Its task line names the taskset and the task:

    {"taskset": "./my_tasks.py", "index": 3}
    {"taskset": "my_tasks", "name": "MathTaskset", "index": 3, "config": {"task": {...}}}

`taskset` is a Python file (relative to the spec's folder) or an importable module, as verifiers'
own ids are; `name` picks the Taskset class (default: the one its `__all__` exports, verifiers'
rule); `config` is the taskset's config as its TasksetConfig reads it. The program takes the
taskset's task `index` (its position in `load()`), plays its prompt against OPENAI_BASE_URL (the
run's gateway) with a streamed chat completion, records the turn in a verifiers `Trace` through
verifiers' own message graph, scores it with `Task.score(trace)` (no runtime: offline) and prints

    {"signals": {"reward": <trace.reward>, "<each reward>": <its score>, "<each metric>": <value>}}

Anything the taskset gets wrong (not importable, no such task, a reward that raises, a task that
needs what this program does not run: tool servers, a container, a runtime, a judge's model) is one line on
stderr and exit code 3: ARL counts the episode as an env error, not as the policy's failure.
"""

import asyncio
import importlib
import importlib.util
import inspect
import itertools
import json
import os
import sys
from pathlib import Path

ENV_FAULT_EXIT = 3


class TasksetFault(Exception):
    """What the taskset or the task line gets wrong: one line for ARL's episode error."""


def last_line(error: BaseException) -> str:
    """The exception as `Type: message`, its message's last line (a reward's own error, not its wrapper's)."""
    root = error.__cause__ if error.__cause__ is not None else error
    text = str(root).strip().splitlines()
    return f"{type(root).__name__}: {text[-1]}" if text else type(root).__name__


def read_task_line() -> dict:
    """The task object ARL writes on stdin ({"task": {...}, "task_id": n, "seed": s}), checked."""
    try:
        task = json.loads(sys.stdin.readline())["task"]
    except (ValueError, KeyError, TypeError) as error:
        raise TasksetFault(f"stdin is not ARL's task line ({last_line(error)})") from None
    taskset = task.get("taskset")
    if not isinstance(taskset, str) or not taskset:
        raise TasksetFault('the task line names no taskset (write {"taskset": "./my_tasks.py", "index": 0})')
    index = task.get("index")
    if not isinstance(index, int) or isinstance(index, bool) or index < 0:
        raise TasksetFault(f"the task line's index must be a non-negative integer, not {json.dumps(index)}")
    for field, kind in (("name", str), ("config", dict)):
        if field in task and not isinstance(task[field], kind):
            raise TasksetFault(f"the task line's {field} must be a {'string' if kind is str else 'JSON object'}")
    return task


def import_taskset_module(spec: str):
    """A `.py` file below the spec's folder, else a module (verifiers' built-in tasksets first, as its loader does)."""
    try:
        if spec.endswith(".py"):
            path = Path(spec).resolve()
            if not path.is_file():
                raise TasksetFault(f"taskset file '{spec}' does not exist (it is read relative to the spec's folder, {os.getcwd()})")
            loader_spec = importlib.util.spec_from_file_location(f"arl_taskset_{path.stem}", path)
            if loader_spec is None or loader_spec.loader is None:
                raise TasksetFault(f"taskset file '{spec}' cannot be imported as Python")
            module = importlib.util.module_from_spec(loader_spec)
            sys.path.insert(0, str(path.parent))
            loader_spec.loader.exec_module(module)
            return module
        builtin = f"verifiers.v1.tasksets.{spec.replace('-', '_').lower()}"
        return importlib.import_module(builtin if importlib.util.find_spec(builtin) else spec)
    except TasksetFault:
        raise
    except ModuleNotFoundError as error:
        # Not "No module named" verbatim: ARL reads that as a package to pip install.
        raise TasksetFault(f"taskset '{spec}' is not importable: module '{error.name}' not found on the env servers' Python") from None
    except Exception as error:  # noqa: BLE001 - the taskset's own import failed: its last line
        raise TasksetFault(f"taskset '{spec}' failed to import: {last_line(error)}") from None


def taskset_class(module, spec: str, name):
    import verifiers.v1 as vf

    if name is not None:
        found = getattr(module, name, None)
        if not (isinstance(found, type) and issubclass(found, vf.Taskset)):
            raise TasksetFault(f"taskset '{spec}' has no Taskset class '{name}'")
        return found
    names = getattr(module, "__all__", None) or [n for n, v in vars(module).items() if getattr(v, "__module__", None) == module.__name__]
    classes = [c for n in names if isinstance(c := getattr(module, n, None), type) and issubclass(c, vf.Taskset) and c is not vf.Taskset]
    if len(classes) != 1:
        found = ", ".join(c.__name__ for c in classes) or "none"
        raise TasksetFault(f"taskset '{spec}' must export exactly one Taskset class (found: {found}); name one with \"name\"")
    return classes[0]


def load_task(line: dict):
    """The taskset's task `index`, with the taskset config the line gives."""
    import verifiers.v1 as vf
    from pydantic import ValidationError
    from verifiers.v1.utils.generic import concrete_type

    spec = line["taskset"]
    cls = taskset_class(import_taskset_module(spec), spec, line.get("name"))
    # The taskset's own config class, as verifiers' loader resolves it (taskset_config_type).
    config_type = concrete_type(cls, vf.TasksetConfig, origin=vf.Taskset) or vf.TasksetConfig
    try:
        config = config_type.model_validate(line.get("config", {}))
        taskset = cls(config)
        tasks = iter(taskset)
        task = next(itertools.islice(tasks, line["index"], None), None)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "config"
        raise TasksetFault(f"taskset '{spec}': config.{where}: {first['msg']} ({error.error_count()} error(s))") from None
    except Exception as error:  # noqa: BLE001 - the taskset's own load() failed
        raise TasksetFault(f"taskset '{spec}' failed to load its tasks: {last_line(error)}") from None
    if task is None:
        raise TasksetFault(f"taskset '{spec}' has no task {line['index']} (it has {sum(1 for _ in cls(config))})")
    check_runnable(task, cls, config, spec)
    return task


def check_runnable(task, cls, config, spec: str) -> None:
    """Refuses what this program does not provide, rather than scoring a trace that lacks it."""
    what = f"task {task.data.idx} of taskset '{spec}'"
    if task.NEEDS_CONTAINER:
        raise TasksetFault(f"{what} needs a container (NEEDS_CONTAINER), which ARL's verifiers program does not run")
    if cls.toolsets(config) or type(task).toolsets(task.config):
        raise TasksetFault(f"{what} offers tools from MCP tool servers (toolsets), which ARL's verifiers program does not run")
    if task.config.judges:
        raise TasksetFault(f"{what} is scored by judges, which call a model: at OPENAI_BASE_URL they would be the policy's own turns")
    for kind in ("reward", "metric"):
        for fn in task.hooks(kind):
            param = inspect.signature(fn).parameters.get("runtime")
            if param is not None and param.default is inspect.Parameter.empty:
                raise TasksetFault(f"{what}: {kind} '{fn.__name__}' needs a runtime (a sandbox), which ARL's verifiers program does not provide")
    if task.data.prompt is None:
        raise TasksetFault(f"{what} has no prompt (a conversation the user opens needs verifiers' user simulator)")


def prompt_messages(task) -> list:
    """The null harness's conversation: the system prompt as a system message, then the prompt (text or messages)."""
    from verifiers.v1.types import SystemMessage, UserMessage

    data = task.data
    messages = [SystemMessage(content=data.system_prompt)] if data.system_prompt else []
    messages += [UserMessage(content=data.prompt)] if isinstance(data.prompt, str) else list(data.prompt)
    return messages


def streamed_completion(messages: list):
    """One streamed chat completion at OPENAI_BASE_URL, its chunks assembled into a ChatCompletion (a cut reply included)."""
    from openai import OpenAI
    from openai.types.chat import ChatCompletion
    from verifiers.v1.dialects.chat import message_to_wire

    client = OpenAI(max_retries=0)
    wire = [message_to_wire(m) for m in messages]
    stream = client.chat.completions.create(model="policy", messages=wire, stream=True, stream_options={"include_usage": True})
    head, content, calls, finish, usage = None, [], {}, None, None
    for chunk in stream:
        head = head or chunk
        usage = chunk.usage or usage
        for choice in chunk.choices:
            delta = choice.delta
            content += [delta.content] if delta.content else []
            for call in delta.tool_calls or []:
                known = calls.setdefault(call.index, {"id": call.id, "type": "function", "function": {"name": "", "arguments": ""}})
                known["id"] = call.id or known["id"]
                if call.function is not None:
                    known["function"]["name"] += call.function.name or ""
                    known["function"]["arguments"] += call.function.arguments or ""
            finish = choice.finish_reason or finish
    if head is None:
        raise RuntimeError("the model's stream ended without a chunk")
    message = {"role": "assistant", "content": "".join(content) if content else None}
    if calls:
        message["tool_calls"] = [calls[i] for i in sorted(calls)]
    choice = {"index": 0, "message": message, "finish_reason": finish or "stop"}
    completion = {"id": head.id, "object": "chat.completion", "created": head.created, "model": head.model, "choices": [choice]}
    return ChatCompletion.model_validate({**completion, "usage": usage.model_dump() if usage else None})


def new_trace(task):
    import verifiers.v1 as vf
    from verifiers.v1.state import state_cls

    return vf.Trace(
        task=vf.TraceTask(type=type(task).__name__, data=task.data, key=task.key, hash=task.hash),
        state=state_cls(type(task))(),
        agent=vf.AgentInfo(config=vf.AgentConfig(), name="arl"),
    )


def record_turn(trace, messages: list, completion) -> None:
    """The turn in verifiers' message graph (the path its interception server takes), and its call."""
    from verifiers.v1.dialects.chat import response_from_wire
    from verifiers.v1.graph import prepare_turn
    from verifiers.v1.trace import ModelCall

    response = response_from_wire(completion)
    node = prepare_turn(trace, messages).commit(response)
    trace.calls.append(ModelCall(node=node, model=response.model, finish_reason=response.finish_reason, usage=response.usage))


def outcome(trace) -> dict:
    """The trace's scores as ARL outcome signals: `reward` (the weighted total), each reward's score, each metric."""
    signals = {"reward": trace.reward}
    for name, value in [*((n, r.score if r is not None else None) for n, r in trace.rewards.items()), *trace.metrics.items()]:
        if name in signals:
            raise TasksetFault(f"the taskset scores '{name}' twice (a reward or metric named like another, or 'reward'); rename one")
        if value is None:
            raise TasksetFault(f"the taskset's '{name}' gave no value")
        signals[name] = value
    return {"signals": signals}


async def play(task) -> dict:
    messages = prompt_messages(task)
    completion = await asyncio.to_thread(streamed_completion, messages)
    trace = new_trace(task)
    record_turn(trace, messages, completion)
    trace.is_completed = True
    trace.ok = True
    try:
        await task.score(trace)
    except Exception as error:  # noqa: BLE001 - a reward or metric raised: the taskset's fault
        raise TasksetFault(f"scoring task {task.data.idx} raised {last_line(error)}") from None
    return outcome(trace)


def main() -> None:
    try:
        line = read_task_line()
        task = load_task(line)
        result = asyncio.run(play(task))
    except TasksetFault as fault:
        print(f"verifiers taskset: {fault}", file=sys.stderr)
        sys.exit(ENV_FAULT_EXIT)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
