"""The agent gateway's Messages API driven by the official Anthropic Python SDK (PyPI `anthropic`),
a client nobody here wrote: messages.create, messages.stream, the tool_use round trip with a
tool_result, and refusals as the SDK's own error classes (Anthropic's error shape).

The `gateway` fixture (conftest.py) serves a scripted model from one Node process (needs dist/).
"""

import pytest

anthropic = pytest.importorskip("anthropic")

WEATHER = {
    "name": "get_weather",
    "description": "The weather in a city",
    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}


def client_of(session, api_key=None):
    return anthropic.Anthropic(base_url=session["anthropicBaseUrl"], api_key=api_key or session["apiKey"], max_retries=0)


def test_messages_create_and_the_tool_use_round_trip(gateway):
    session = gateway.open()
    client = client_of(session)
    plain = client.messages.create(model="arl-policy", max_tokens=64, system="Be brief.", messages=[{"role": "user", "content": "hi"}])
    assert plain.type == "message" and plain.role == "assistant"
    assert [block.text for block in plain.content] == ["Hello, world"]
    assert plain.stop_reason == "end_turn"
    assert (plain.usage.input_tokens, plain.usage.output_tokens) == (5, 4)

    messages = [{"role": "user", "content": "Weather in Paris?"}]
    first = client.messages.create(model="arl-policy", max_tokens=64, messages=messages, tools=[WEATHER])
    assert first.stop_reason == "tool_use"
    [use] = [block for block in first.content if block.type == "tool_use"]
    assert (use.id, use.name, use.input) == ("call_0", "get_weather", {"city": "Paris"})
    # The usual loop: the SDK's content blocks go back as the assistant turn, then the result.
    result = {"type": "tool_result", "tool_use_id": use.id, "content": "sunny"}
    messages += [{"role": "assistant", "content": first.content}, {"role": "user", "content": [result]}]
    second = client.messages.create(model="arl-policy", max_tokens=64, messages=messages, tools=[WEATHER])
    assert second.content[0].text == "It is sunny."

    seen = gateway.ask(f"seen {session['id']}")["chats"]
    assert seen[0]["messages"][0] == {"role": "system", "content": "Be brief."}
    assert seen[2]["messages"][1]["tool_calls"] == [{"name": "get_weather", "arguments": {"city": "Paris"}}]
    assert seen[2]["messages"][2] == {"role": "tool", "content": "sunny", "toolCallId": "call_0"}


def test_messages_stream(gateway):
    client = client_of(gateway.open())
    with client.messages.stream(model="arl-policy", max_tokens=64, messages=[{"role": "user", "content": "hi"}]) as stream:
        texts = list(stream.text_stream)
        final = stream.get_final_message()
    assert texts == ["Hello", ",", " world"]
    assert final.content[0].text == "Hello, world"
    assert final.stop_reason == "end_turn"

    with client.messages.stream(model="arl-policy", max_tokens=64, messages=[{"role": "user", "content": "weather?"}], tools=[WEATHER]) as stream:
        final = stream.get_final_message()
    [use] = final.content
    assert (use.type, use.name, use.input) == ("tool_use", "get_weather", {"city": "Paris"})
    assert final.stop_reason == "tool_use"


def test_refusals_are_the_sdk_errors(gateway):
    session = gateway.open()
    client = client_of(session)
    with pytest.raises(anthropic.BadRequestError) as orphan:
        orphan_result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "x"}
        client.messages.create(model="arl-policy", max_tokens=8, messages=[{"role": "user", "content": [orphan_result]}])
    assert orphan.value.body["type"] == "error"
    assert orphan.value.body["error"]["type"] == "invalid_request_error"
    assert "tool_use_id" in orphan.value.message
    with pytest.raises(anthropic.BadRequestError, match='missing required field "tool_choice.name"'):
        client.messages.create(model="arl-policy", max_tokens=8, messages=[{"role": "user", "content": "hi"}], tools=[WEATHER], tool_choice={"type": "tool"})
    with pytest.raises(anthropic.AuthenticationError):
        client_of(session, api_key="sk-ant-wrong").messages.create(model="arl-policy", max_tokens=8, messages=[{"role": "user", "content": "hi"}])
    assert [f["kind"] for f in gateway.ask(f"seen {session['id']}")["faults"]] == ["wrong_key"]
    assert gateway.ask(f"seen {session['id']}")["chats"] == []
