"""The agent gateway driven by the official OpenAI Python SDK (PyPI `openai`), a client nobody
here wrote: chat, the function-calling round trip with a tool result, streaming (raw chunks and
the SDK's stream helper), errors as APIStatusError, and completions from token ids.

One Node process serves a scripted model for the whole module
(test/gateway/fixtures/scripted-gateway.mjs, over dist/: `npm run build` first; docs/gateway.md).
"""

import json
import shutil
import subprocess
from pathlib import Path

import pytest

openai = pytest.importorskip("openai")

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "test" / "gateway" / "fixtures" / "scripted-gateway.mjs"
SERVER = REPO / "dist" / "runtime" / "gateway" / "server.js"


class ScriptedGateway:
    """The fixture script's line protocol: one command in, one JSON line out."""

    def __init__(self, process):
        self.process = process

    def ask(self, command):
        self.process.stdin.write(command + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise AssertionError(f"the scripted gateway exited: {self.process.stderr.read()}")
        return json.loads(line)

    def client(self):
        session = self.ask("open")
        return session["id"], openai.OpenAI(base_url=session["baseUrl"], api_key=session["apiKey"], max_retries=0)


@pytest.fixture(scope="module")
def gateway():
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not on PATH")
    if not SERVER.exists():
        pytest.skip(f"{SERVER} is missing (run npm run build)")
    process = subprocess.Popen([node, str(SCRIPT)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        yield ScriptedGateway(process)
    finally:
        process.stdin.close()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def test_chat_returns_the_answer_with_exact_ids(gateway):
    _, client = gateway.client()
    assert [m.id for m in client.models.list().data] == ["arl-policy"]
    response = client.chat.completions.create(model="arl-policy", messages=[{"role": "user", "content": "hi"}], max_tokens=16, logprobs=True, user="u-1")
    choice = response.choices[0]
    assert choice.message.content == "Hello, world"
    assert choice.finish_reason == "stop"
    assert response.usage.prompt_tokens == 5 and response.usage.completion_tokens == 4
    assert response.prompt_token_ids == [100, 101, 102, 103, 104]
    assert choice.token_ids == [10, 11, 12, 13]
    assert [t.token for t in choice.logprobs.content] == ["Hello", ",", " world", "<|im_end|>"]
    assert choice.logprobs.content[1].logprob == pytest.approx(-0.5)


WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}


def test_function_calling_round_trip(gateway):
    session, client = gateway.client()
    messages = [{"role": "user", "content": "Weather in Paris?"}]
    first = client.chat.completions.create(model="arl-policy", messages=messages, tools=[WEATHER])
    message = first.choices[0].message
    assert first.choices[0].finish_reason == "tool_calls"
    assert message.content is None
    [call] = message.tool_calls
    assert (call.id, call.function.name, json.loads(call.function.arguments)) == ("call_0", "get_weather", {"city": "Paris"})

    # The usual loop: the SDK's message object goes back into the history as it is.
    messages += [message, {"role": "tool", "tool_call_id": call.id, "content": "sunny, 21 C"}]
    second = client.chat.completions.create(model="arl-policy", messages=messages, tools=[WEATHER])
    assert second.choices[0].message.content == "It is sunny, 21 C."

    seen = gateway.ask(f"seen {session}")["chats"][1]["messages"]
    assert seen[1]["role"] == "assistant"
    assert seen[1]["tool_calls"] == [{"name": "get_weather", "arguments": {"city": "Paris"}}]
    assert seen[1]["toolCallIds"] == ["call_0"]
    assert seen[2] == {"role": "tool", "content": "sunny, 21 C", "toolCallId": "call_0"}


def test_streaming(gateway):
    _, client = gateway.client()
    stream = client.chat.completions.create(
        model="arl-policy", messages=[{"role": "user", "content": "hi"}], stream=True, stream_options={"include_usage": True}
    )
    chunks = list(stream)
    assert [c.choices[0].delta.content for c in chunks if c.choices and c.choices[0].delta.content] == ["Hello", ",", " world"]
    assert [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason] == ["stop"]
    assert chunks[-1].choices == [] and chunks[-1].usage.total_tokens == 9

    with client.chat.completions.stream(model="arl-policy", messages=[{"role": "user", "content": "weather?"}], tools=[WEATHER]) as events:
        final = events.get_final_completion()
    [call] = final.choices[0].message.tool_calls
    assert call.function.name == "get_weather"
    assert json.loads(call.function.arguments) == {"city": "Paris"}


def test_errors_are_api_status_errors(gateway):
    session, client = gateway.client()
    with pytest.raises(openai.BadRequestError) as refused:
        client.chat.completions.create(model="arl-policy", messages=[{"role": "user", "content": "hi"}], n=2)
    assert refused.value.status_code == 400
    assert refused.value.body["param"] == "n"
    assert "one choice per call" in refused.value.message

    intruder = openai.OpenAI(base_url=client.base_url, api_key="sk-wrong", max_retries=0)
    with pytest.raises(openai.AuthenticationError):
        intruder.chat.completions.create(model="arl-policy", messages=[{"role": "user", "content": "hi"}])

    gateway.ask(f"close {session}")
    with pytest.raises(openai.APIStatusError) as late:
        client.chat.completions.create(model="arl-policy", messages=[{"role": "user", "content": "hi"}])
    assert late.value.status_code == 410
    assert [f["kind"] for f in gateway.ask(f"seen {session}")["faults"]] == ["wrong_key", "after_end"]


def test_completions_from_token_ids(gateway):
    _, client = gateway.client()
    response = client.completions.create(model="arl-policy", prompt=[1, 2, 3], max_tokens=3, logprobs=0)
    choice = response.choices[0]
    assert choice.text == " 42."
    assert choice.logprobs.tokens == [" 4", "2", "."]
    assert response.prompt_token_ids == [1, 2, 3]
    with pytest.raises(openai.BadRequestError) as text_prompt:
        client.completions.create(model="arl-policy", prompt="What is 6 x 7?")
    assert text_prompt.value.body["param"] == "prompt"
