"""A Hugging Face chat template: rendering messages (tools, tool calls, the tool role), splitting
one rendering into the text each message adds, and probing what the template does.

Splitting (docs/protocol.md `encode`). The whole conversation is rendered once; message k's text
is the part of that rendering between the ends of messages k-1 and k, so the pieces concatenate
to the rendering. A message ends where the rendering of messages[:k+1] stops agreeing with the
whole one (all of it when the template is prefix-preserving). An assistant turn ends instead
right after its end-of-turn token in the whole rendering (found by counting end-of-turn tokens,
which survive where a template rewrites earlier turns' text): that token is the last one the
model generated, so what the template puts after it (Qwen's "\n") belongs to the next message,
and a template that renders the last assistant turn differently from earlier ones (Qwen3's
empty `<think>` block, reasoning dropped before a new user query) still splits at the turn's end.
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

PROBE_TOOL_NAME = "arl_probe_tool"
PROBE_TOOL = {
    "type": "function",
    "function": {
        "name": PROBE_TOOL_NAME,
        "description": "Looks a word up.",
        "parameters": {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
    },
}


@dataclass(frozen=True)
class TemplateInfo:
    prefix_preserving: bool
    renders_tools: bool
    tool_call_format: str
    tool_role: str

    def to_message(self) -> dict[str, Any]:
        return {
            "prefix_preserving": self.prefix_preserving,
            "renders_tools": self.renders_tools,
            "tool_call_format": self.tool_call_format,
            "tool_role": self.tool_role,
        }


def _common_prefix(a: str, b: str) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


class ChatTemplate:
    """The tokenizer's own chat template, or `override` (policy.chat_template, a Jinja text)."""

    def __init__(self, tok: Any, override: str | None) -> None:
        self.tok = tok
        self.override = override or None
        if self.override is not None and "messages" not in self.override:
            raise ValueError(f"{self.override[:40]!r} is not a Jinja chat template (it never reads `messages`); null uses the model's own")
        source = self.override or getattr(tok, "chat_template", None)
        if not source:
            raise ValueError("the tokenizer has no chat template: give one as policy.chat_template (a Jinja template text)")
        self.source = source if isinstance(source, str) else json.dumps(source)
        self.tool_role = "tool"
        self.eot = self._end_of_turn()
        self.tool_role = self._probe_tool_role()
        self.info = TemplateInfo(
            prefix_preserving=self._probe_prefix_preserving(),
            renders_tools=self._probe_renders_tools(),
            tool_call_format=self._tool_call_format(),
            tool_role=self.tool_role,
        )

    # -- rendering ---------------------------------------------------------------------------

    def _message(self, m: dict[str, Any]) -> dict[str, Any]:
        role = m["role"]
        out: dict[str, Any] = {"role": self.tool_role if role == "tool" else role, "content": m.get("content", "")}
        calls = m.get("tool_calls")
        if calls:
            # the structure chat templates read (OpenAI's): type, function.name, function.arguments
            out["tool_calls"] = [{"type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}} for c in calls]
        return out

    def render(self, messages: Sequence[dict[str, Any]], add_generation_prompt: bool, tools: Sequence[Any] | None = None) -> str:
        if not messages:
            return ""
        kwargs: dict[str, Any] = {"tokenize": False, "add_generation_prompt": add_generation_prompt}
        if tools:
            kwargs["tools"] = list(tools)
        if self.override:
            kwargs["chat_template"] = self.override
        try:
            text = self.tok.apply_chat_template([self._message(m) for m in messages], **kwargs)
        except (KeyError, TypeError, ValueError) as e:
            raise ValueError(f"the chat template cannot render these messages: {e}") from None
        except Exception as e:  # jinja2's TemplateError (raise_exception in a template) and its kin
            if type(e).__module__.startswith("jinja2"):
                raise ValueError(f"the chat template cannot render these messages: {e}") from None
            raise
        if not isinstance(text, str):
            raise ValueError("the chat template did not render text")
        return text

    def _rendered_or_none(self, messages: Sequence[dict[str, Any]], add_generation_prompt: bool = False, tools: Sequence[Any] | None = None) -> str | None:
        try:
            return self.render(messages, add_generation_prompt, tools)
        except ValueError:
            return None

    # -- splitting ---------------------------------------------------------------------------

    def segments(self, messages: Sequence[dict[str, Any]], add_generation_prompt: bool, tools: Sequence[Any] | None, context: int) -> list[str]:
        """The text of each message from `context` on, cut out of one rendering of all of them."""
        n = len(messages)
        if context > n:
            raise ValueError(f"context: {context} is more than the {n} messages")
        if context == n:
            if add_generation_prompt and n > 0:
                raise ValueError("context: equals the number of messages, so no message is left to carry the generation prompt")
            return []
        full = self.render(messages, add_generation_prompt, tools)
        # each end is found on its own, so only those from the context on are needed
        bounds = [self._end_of(messages, context, full, tools) if context > 0 else 0]
        for k in range(context + 1, n + 1):
            bounds.append(len(full) if k == n else max(bounds[-1], self._end_of(messages, k, full, tools)))
        return [full[bounds[i] : bounds[i + 1]] for i in range(n - context)]

    def _end_of(self, messages: Sequence[dict[str, Any]], k: int, full: str, tools: Sequence[Any] | None) -> int:
        """Where message k-1 ends in `full`."""
        prefix = self.render(messages[:k], False, tools)
        if messages[k - 1]["role"] == "assistant" and self.eot:
            # its end-of-turn token is the j-th one of `full`, j counted in the rendering that ends
            # with it: earlier turns keep their closing tokens even where their text is rewritten
            j = prefix.count(self.eot)
            at = -1
            for _ in range(j):
                at = full.find(self.eot, at + 1)
                if at < 0:
                    break
            if j > 0 and at >= 0:
                return at + len(self.eot)
        return len(prefix) if full.startswith(prefix) else _common_prefix(prefix, full)

    # -- probes ------------------------------------------------------------------------------

    def _end_of_turn(self) -> str:
        """The special token that closes an assistant turn (<|im_end|>, <|eot_id|>, ...)."""
        text = self._rendered_or_none([{"role": "user", "content": "Hello"}, {"role": "assistant", "content": "ARLPROBE"}])
        if text and "ARLPROBE" in text:
            tail = text[text.rindex("ARLPROBE") + len("ARLPROBE") :]
            special = set(self.tok.all_special_ids)
            for i in self.tok(tail, add_special_tokens=False)["input_ids"]:
                if i in special:
                    return str(self.tok.convert_ids_to_tokens(i))
        return str(self.tok.eos_token or "")

    def _probe_tool_role(self) -> str:
        """`ipython` when the template shows tool results only under that role, or maps `tool`
        to it itself (Llama 3.1); otherwise `tool`."""
        base = [{"role": "user", "content": "Hello"}, {"role": "assistant", "content": "Hi"}]
        before = self._rendered_or_none(base) or ""
        as_tool = self._rendered_or_none(base + [{"role": "tool", "content": "ARLPROBE"}])
        if as_tool and "ARLPROBE" in as_tool:
            return "ipython" if "ipython" in as_tool[len(before) :] and "ipython" not in before else "tool"
        self.tool_role = "ipython"
        as_ipython = self._rendered_or_none(base + [{"role": "tool", "content": "ARLPROBE"}])
        self.tool_role = "tool"
        return "ipython" if as_ipython and "ARLPROBE" in as_ipython else "tool"

    def _probe_conversation(self) -> list[dict[str, Any]]:
        call = {"name": PROBE_TOOL_NAME, "arguments": {"q": "apple"}}
        return [
            {"role": "system", "content": "You are helpful."},
            {"role": "user", "content": "Hello"},
            {"role": "assistant", "content": "Hi there"},
            {"role": "user", "content": "Look up apple"},
            {"role": "assistant", "content": "", "tool_calls": [call]},
            {"role": "tool", "content": "a fruit"},
            {"role": "assistant", "content": "It is a fruit"},
            {"role": "user", "content": "Thanks"},
        ]

    def _probe_prefix_preserving(self) -> bool:
        """Rendering one more message (or the generation prompt before an assistant turn) only
        appends text, at every step of a conversation with a tool call."""
        conv = self._probe_conversation()
        for k in range(1, len(conv)):
            longer = self._rendered_or_none(conv[: k + 1])
            if longer is None:  # the template refuses this step (e.g. no tool role): not probed
                continue
            shorter = self._rendered_or_none(conv[:k])
            if shorter is not None and not longer.startswith(shorter):
                return False
            if conv[k]["role"] == "assistant":
                prompt = self._rendered_or_none(conv[:k], add_generation_prompt=True)
                if prompt is not None and not longer.startswith(prompt):
                    return False
        return True

    def _probe_renders_tools(self) -> bool:
        text = self._rendered_or_none([{"role": "user", "content": "Hello"}], tools=[PROBE_TOOL])
        return bool(text) and PROBE_TOOL_NAME in str(text)

    def _tool_call_format(self) -> str:
        """From the template text, then the vocabulary's special tokens."""
        vocab = self.tok.get_vocab()
        if "<tool_call>" in self.source:
            return "hermes"
        if "tool▁call▁begin" in self.source or "<｜tool▁call▁begin｜>" in vocab:
            return "deepseek_v3"
        if "<|start_header_id|>" in self.source or "<|python_tag|>" in vocab or "<|eom_id|>" in vocab:
            return "llama3_json"
        return "hermes"
