"""The agent gateway driven by the official OpenAI Python SDK (PyPI `openai`), a client nobody
here wrote: chat, the function-calling round trip with a tool result, streaming (raw chunks and
the SDK's stream helper), errors as APIStatusError, and completions from token ids.

One Node process serves a scripted model for the whole module (the `gateway` fixture of
conftest.py: test/gateway/fixtures/scripted-gateway.mjs, over dist/; `npm run build` first).
"""

import json

import pytest

openai = pytest.importorskip("openai")

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


RESPONSES_WEATHER = {"type": "function", "name": "get_weather", "description": "The weather in a city", "parameters": WEATHER["function"]["parameters"]}


def test_responses_round_trip_and_stream(gateway):
    session, client = gateway.client()
    first = client.responses.create(model="arl-policy", instructions="Use tools.", input="Weather in Paris?", tools=[RESPONSES_WEATHER])
    [call] = first.output
    assert (call.type, call.call_id, call.name, json.loads(call.arguments)) == ("function_call", "call_0", "get_weather", {"city": "Paris"})
    # The loop the Agents SDK runs: the answer's items go back in the input, then the tool's output.
    items = [{"role": "user", "content": "Weather in Paris?"}, *[item.model_dump(exclude_none=True) for item in first.output]]
    items.append({"type": "function_call_output", "call_id": call.call_id, "output": "sunny"})
    second = client.responses.create(model="arl-policy", instructions="Use tools.", input=items, tools=[RESPONSES_WEATHER])
    assert second.output_text == "It is sunny."
    assert second.usage.input_tokens == 9
    seen = gateway.ask(f"seen {session}")["chats"][1]["messages"]
    assert [m["role"] for m in seen] == ["system", "user", "assistant", "tool"]

    output = {"type": "function_call_output", "call_id": "call_0", "output": "rainy"}
    by_id = client.responses.create(model="arl-policy", previous_response_id=first.id, input=[output], tools=[RESPONSES_WEATHER])
    assert by_id.output_text == "It is rainy."

    with client.responses.stream(model="arl-policy", input="hi") as stream:
        deltas = [event.delta for event in stream if event.type == "response.output_text.delta"]
        final = stream.get_final_response()
    assert deltas == ["Hello", ",", " world"]
    assert final.output_text == "Hello, world"

    with pytest.raises(openai.BadRequestError) as orphan:
        client.responses.create(model="arl-policy", input=[{"type": "function_call_output", "call_id": "call_7", "output": "x"}])
    assert orphan.value.body["param"] == "input[0].call_id"
    with pytest.raises(openai.BadRequestError) as unknown:
        client.responses.create(model="arl-policy", previous_response_id="resp_unknown", input="hi")
    assert unknown.value.body["code"] == "previous_response_not_found"
