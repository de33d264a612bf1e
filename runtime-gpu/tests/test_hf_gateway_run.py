"""The agent gateway on a real model stack: `arl run` of an agent-program spec whose policy is a
local random Qwen3 (transformers, the real Qwen3 tokenizer and chat template) on the PyTorch
trainer. The agent is, in turn, a plain Python program on the official `openai` SDK with its own
tools (chat completions), and the Anthropic SDK agent of experiments/agents/anthropic_support.py,
unmodified (the Messages API, its tool_use/tool_result round trip); a supervised cold start on
chat records teaches the model Qwen3's tool-call format first, so that its episodes make several
calls. Every trajectory in the token buffer is then checked against
transformers' own template and tokenizer (docs/gateway.md#exact-tokens-and-rewrites):

- each call after the first continued the trajectory: the ids between two generated turns are
  exactly what the template writes after the first turn's <|im_end|> when it renders the
  conversation the program sent (its tool result, the generation prompt), encoded once;
- nothing the model generated was tokenized again (the buffer's generated spans are sampled ids,
  with a policy version and a log-prob each);
- the tool calls the program made are those the template's format carries in the sampled text.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hf_models import make_model_dir
from run_records import ROLE, arl_run, assert_spans_tokenized_once, buffer_records, role_spans

pytest.importorskip("transformers")
pytest.importorskip("openai")

EXAMPLES = Path(__file__).resolve().parents[2] / "experiments" / "agents"
# The prompt and tool of experiments/agents/anthropic_support.py too (its tool's description apart).
PROMPT = "Support assistant: look the order up, then answer."
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "lookup_order",
            "description": "An order's status.",
            "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]},
        },
    }
]
# The tool as the Anthropic agent declares it, in the chat shape the gateway gives the template.
ANTHROPIC_TOOLS = [{**TOOLS[0], "function": {**TOOLS[0]["function"], "description": "The status of an order, by its id."}}]
ORDERS = {f"A{100 + k}": ("shipped", "delayed", "delivered")[k % 3] for k in range(36)}

# The agent: its own loop, prompt and tool, the SDK reading OPENAI_BASE_URL/OPENAI_API_KEY. It
# sends back each reply as the SDK gave it (content and tool_calls), as agents do.
AGENT = f"""
import json, sys
from openai import OpenAI

PROMPT = {PROMPT!r}
TOOLS = {json.dumps(TOOLS)}
ORDERS = {json.dumps(ORDERS)}

job = json.loads(sys.stdin.readline())
task = job["task"]
client = OpenAI()
messages = [{{"role": "system", "content": PROMPT}}, {{"role": "user", "content": task["message"]}}]
answer, looked_up = "", False
for _ in range(3):
    reply = client.chat.completions.create(model="policy", messages=messages, tools=TOOLS, max_tokens=64)
    message = reply.choices[0].message
    if not message.tool_calls:
        answer = message.content or ""
        break
    messages.append({{"role": "assistant", "content": message.content, "tool_calls": [
        {{"id": c.id, "type": "function", "function": {{"name": c.function.name, "arguments": c.function.arguments}}}}
        for c in message.tool_calls]}})
    for call in message.tool_calls:
        try:
            order_id = str(json.loads(call.function.arguments).get("order_id", ""))
        except (json.JSONDecodeError, AttributeError):
            order_id = ""
        looked_up = looked_up or order_id == task["order_id"]
        result = json.dumps({{"status": ORDERS[order_id]}}) if order_id in ORDERS else "error: no such order"
        messages.append({{"role": "tool", "tool_call_id": call.id, "content": result}})
print(json.dumps({{"signals": {{"resolved": task["status"] in answer.lower(), "found_order": looked_up}}}}))
"""

SPEC = """
import "std/algorithms" as algo
import "std/envs/agent" as agent

experiment qwen3_agent {
  seed: 0
  policy {
    model: "MODEL_DIR"
    sampling { temperature: 0.7, max_new_tokens: 64 }
  }
  env support extends agent.program {
    command: ["python3", "agent.py"]
    task_file: "./tasks.jsonl"
    timeout_s: 120
    signals {
      resolved { scope: outcome, type: bool }
      found_order { scope: outcome, type: bool }
    }
  }
  harness {
    max_turns: 4
    max_response_tokens: 64
  }
  reward {
    resolved: outcome.resolved
    found: 0.2 * outcome.found_order
  }
  algorithm extends algo.grpo { group_size: 2 }
  rollout {
    tasks_per_batch: 2
    iterations: 2
    concurrency: 4
    sft { data: "./sft.jsonl", epochs: 30, batch: 6, lr: 0.02 }
  }
  eval { split: test, success: outcome.resolved, every: 2, tasks: 2, before_training: false, k: [1] }
  resources { backend: torch }
  allow {
    self-inclusive-baseline: "a test of the gateway's token exactness, not of the estimator"
  }
}
"""


def _task(order_id: str) -> dict:
    return {"order_id": order_id, "message": f"Where is my order {order_id}?", "status": ORDERS[order_id]}


def _sft_record(order_id: str, tools: list[dict]) -> dict:
    """The conversation the agent should have: one lookup, then the status in a few words."""
    status = ORDERS[order_id]
    return {
        "messages": [
            {"role": "system", "content": PROMPT},
            {"role": "user", "content": _task(order_id)["message"]},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [{"type": "function", "function": {"name": "lookup_order", "arguments": {"order_id": order_id}}}],
            },
            {"role": "tool", "content": json.dumps({"status": status})},
            {"role": "assistant", "content": f"Your order is {status}."},
        ],
        "tools": tools,
    }


def _first_call_object(text: str) -> dict | None:
    """The JSON object that begins at the first "{" after the turn's first <tool_call> (or in the
    whole turn, without the tag), if it is one."""
    body = text.split("<tool_call>", 1)[1] if "<tool_call>" in text else text
    start = body.find("{")
    try:
        value, _ = json.JSONDecoder().raw_decode(body[start:]) if start >= 0 else (None, 0)
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def _as_call(value: dict | None) -> tuple[str, dict] | None:
    """(name, arguments) of a call object as the docs define one (a string name; arguments an
    object, or a string holding one, or absent for none); None when it is not one."""
    if value is None or not isinstance(value.get("name"), str):
        return None
    args = value.get("arguments", {})
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except json.JSONDecodeError:
            return None
    return (value["name"], args) if isinstance(args, dict) else None


@pytest.fixture(scope="module", params=["openai", "anthropic"])
def agent_run(request, tmp_path_factory):
    if request.param == "anthropic":
        pytest.importorskip("anthropic")
    model = make_model_dir(tmp_path_factory.mktemp("qwen3-model"), arch="qwen3", tokenizer="qwen3", layers=2, hidden=32, seed=0)
    base = tmp_path_factory.mktemp(f"qwen3-agent-{request.param}")
    (base / "agent.py").write_text(AGENT if request.param == "openai" else (EXAMPLES / "anthropic_support.py").read_text())
    (base / "tasks.jsonl").write_text("".join(json.dumps(_task(o)) + "\n" for o in ORDERS))
    tools = TOOLS if request.param == "openai" else ANTHROPIC_TOOLS
    (base / "sft.jsonl").write_text("".join(json.dumps(_sft_record(o, tools)) + "\n" for o in ORDERS))
    spec = base / "agent.arl"
    spec.write_text(SPEC.replace("MODEL_DIR", str(model)))
    # arl_run puts this Python first on PATH: the agent's python3 has openai.
    run_dir = arl_run(spec, base / "runs")
    return model, run_dir


def test_the_agent_runs_train_and_continue_their_trajectories(agent_run):
    _, run_dir = agent_run
    metrics = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    assert [m["iteration"] for m in metrics] == [1, 2]
    assert all(m["policy_version"] > 0 for m in metrics)
    records = buffer_records(run_dir / "buffer.arlbuf")
    assert len(records) == 2 * 2 * 2  # iterations x tasks x group
    assert all(r.get("error") is None for r in records), [r.get("error") for r in records]
    assert sum(len(r["toolCalls"]) for r in records) > 0, "the cold start did not teach a tool call"
    # the agent sends every reply back as the SDK gave it: no call rewrote the served history
    assert all(m["gateway_rewrites"] == 0 for m in metrics) and sum(m["gateway_calls"] for m in metrics) > len(records)
    # a multi-call episode that continued stays one sample: several generated turns in one record
    assert max(sum(1 for role, _, _ in role_spans([int(x) for x in r["roles"]]) if role == ROLE["generated"]) for r in records) > 1


def test_every_call_continues_the_templates_own_rendering(agent_run):
    """The context before the first call is the template's rendering of the program's system and
    user messages (its tools in the system turn) with the generation prompt; each later call's
    new ids are exactly the template's text after the previous turn's <|im_end|>, rendered from
    the messages the program sent; and each turn is the model's own ids, ending on <|im_end|>
    unless the reply was cut (then the episode's last)."""
    from transformers import AutoTokenizer

    model, run_dir = agent_run
    tok = AutoTokenizer.from_pretrained(str(model))
    eot = tok.convert_tokens_to_ids("<|im_end|>")
    continued = 0
    for r in buffer_records(run_dir / "buffer.arlbuf"):
        ids = [int(i) for i in r["ids"]]
        spans = role_spans([int(x) for x in r["roles"]])
        messages, tools = r["messages"], r["tools"]
        generated = [(a, b) for role, a, b in spans if role == ROLE["generated"]]
        assistants = [k for k, m in enumerate(messages) if m["role"] == "assistant"]
        first = assistants[0] if assistants else len(messages)
        assert tok.decode(ids[: generated[0][0]]) == tok.apply_chat_template(messages[:first], tools=tools, tokenize=False, add_generation_prompt=True)
        for t, (_a, b) in enumerate(generated):
            if b == len(ids):
                break
            assert ids[b - 1] == eot, "a continued turn that does not end on <|im_end|>"
            nxt = generated[t + 1][0] if t + 1 < len(generated) else len(ids)
            # the messages up to the next assistant turn (this turn's tool results): what the next call sent
            end = assistants[t + 1] if t + 1 < len(assistants) else len(messages)
            upto = messages[:end]
            full = tok.apply_chat_template(upto, tools=tools, tokenize=False, add_generation_prompt=True)
            after_turn = full.rindex("<|im_end|>", 0, full.rindex(upto[-1]["content"])) + len("<|im_end|>")
            assert tok.decode(ids[b:nxt]) == full[after_turn:]
            continued += 1
    assert continued > 0, "no call continued a trajectory"


def test_spans_the_model_did_not_generate_are_tokenized_once(agent_run):
    from transformers import AutoTokenizer

    model, run_dir = agent_run
    assert_spans_tokenized_once(AutoTokenizer.from_pretrained(str(model)), buffer_records(run_dir / "buffer.arlbuf"))


def test_the_calls_served_are_those_in_the_sampled_text(agent_run):
    """A turn's call (the first one in it counts, docs/gateway.md#exact-tokens-and-rewrites) is the
    JSON object the model wrote after its first <tool_call> (without the tag: its first "{"):
    served with that name and those arguments (valid when the name is the offered tool's), or,
    when that text is not a JSON object with a name, recorded as invalid with the reason and not
    served. A turn with neither has no call record."""
    from transformers import AutoTokenizer

    model, run_dir = agent_run
    tok = AutoTokenizer.from_pretrained(str(model))
    served = malformed = 0
    for r in buffer_records(run_dir / "buffer.arlbuf"):
        ids = [int(i) for i in r["ids"]]
        turns = [tok.decode(ids[a:b]) for role, a, b in role_spans([int(x) for x in r["roles"]]) if role == ROLE["generated"]]
        for t, text in enumerate(turns):
            calls = [c for c in r["toolCalls"] if c["turn"] == t]
            if "<tool_call>" not in text and "{" not in text:
                assert calls == [], (text, calls)
                continue
            (call,) = calls
            written = _as_call(_first_call_object(text))
            if call["name"]:
                assert written == (call["name"], call["arguments"]), (text, call)
                assert call["valid"] == (call["name"] == "lookup_order")
                served += 1
            else:
                assert not call["valid"] and call["error"], call
                assert written is None, (text, call)
                malformed += 1
    assert served > 0
