"""Tokenizers: a word-level tokenizer over the runtime's `vocabulary`, or a transformers tokenizer.

Word-level tokenizer
--------------------
ids 0..5 are special tokens, then the vocabulary in the order given (duplicates and words equal
to a special token are skipped):

    0 <pad>   1 <bos>   2 <eos>   3 <unk>   4 <|im_start|>   5 <|im_end|>

Text is split into words (runs of word characters: letters, digits, `_`), single punctuation characters and
newlines; other whitespace is dropped. Words outside the vocabulary become <unk>. Decoding joins
words with single spaces (newlines without spaces around them), so it is not an exact inverse.

The chat template (ChatML-like) wraps each message as
    <|im_start|> ROLE CONTENT... <|im_end|>
where ROLE is the role word (system/user/tool/assistant, as ordinary vocabulary entries added
when missing). The first message of a conversation is not prefixed with <bos>; `encode` returns
one sequence per message, and add_generation_prompt appends `<|im_start|> assistant` to the
last message's sequence. The end-of-turn token <|im_end|> is the tokenizer's eos_id, so a
generated turn stops on eos.
"""
from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from typing import Any

from .chat_template import ChatTemplate

SPECIALS = ["<pad>", "<bos>", "<eos>", "<unk>", "<|im_start|>", "<|im_end|>"]
ROLES = ["system", "user", "tool", "assistant"]
_SPLIT = re.compile(r"\n|\w+|[^\s\w]", re.UNICODE)


class WordTokenizer:
    kind = "word"

    def __init__(self, vocabulary: Sequence[str]) -> None:
        tokens = list(SPECIALS)
        seen = set(tokens)
        for w in list(vocabulary) + ROLES:
            if not isinstance(w, str):
                raise ValueError("vocabulary entries must be strings")
            if w not in seen:
                seen.add(w)
                tokens.append(w)
        self.tokens = tokens
        self.index = {t: i for i, t in enumerate(tokens)}
        self.pad_id, self.bos_id, self.unk_id = 0, 1, 3
        self.im_start_id, self.im_end_id = 4, 5
        self.eos_id = self.im_end_id
        self.plain_eos_id = 2

    @property
    def vocab_size(self) -> int:
        return len(self.tokens)

    def split(self, text: str) -> list[str]:
        return _SPLIT.findall(text)

    def encode_text(self, text: str) -> list[int]:
        return [self.index.get(p, self.unk_id) for p in self.split(text)]

    def decode(self, ids: Sequence[int], skip_special: bool = False) -> str:
        out: list[str] = []
        for i in ids:
            i = int(i)
            tok = self.tokens[i] if 0 <= i < len(self.tokens) else "<unk>"
            if skip_special and tok in SPECIALS:
                continue
            out.append(tok)
        text = ""
        for tok in out:
            if tok == "\n" or text.endswith("\n") or not text:
                text += tok
            else:
                text += " " + tok
        return text

    def template_info(self, chat_template: str | None) -> dict[str, Any]:
        """Per-message and prefix-preserving; tools are described by the runtime, calls are in the content."""
        return {"prefix_preserving": True, "renders_tools": False, "tool_call_format": "hermes", "tool_role": "tool"}

    def stop_ids(self, chat_template: str | None) -> list[int]:
        return [self.eos_id]

    def encode_messages(
        self,
        messages: Sequence[dict[str, Any]],
        add_generation_prompt: bool,
        chat_template: str | None,
        tools: Sequence[Any] | None = None,
        context: int = 0,
    ) -> list[list[int]]:
        """One sequence per message from `context` on; `tools` and `tool_calls` are not rendered
        (the runtime describes tools in the system prompt, a call is in the assistant's content)."""
        if context > len(messages):
            raise ValueError(f"context: {context} is more than the {len(messages)} messages")
        if context == len(messages) and add_generation_prompt and messages:
            raise ValueError("context: equals the number of messages, so no message is left to carry the generation prompt")
        if chat_template not in (None, "", "chatml"):
            raise NotImplementedError("the word-level tokenizer only has its built-in ChatML-like template (chat_template null or 'chatml')")
        seqs = []
        for m in messages:
            role = m.get("role")
            if role not in ROLES:
                raise ValueError(f"message role must be one of {', '.join(ROLES)}, got {role!r}")
            seqs.append([self.im_start_id, self.index[role]] + self.encode_text(str(m.get("content", ""))) + [self.im_end_id])
        if add_generation_prompt:
            prompt = [self.im_start_id, self.index["assistant"]]
            if seqs:
                seqs[-1] = seqs[-1] + prompt
            else:
                seqs.append(prompt)
        return seqs[context:]

    def save(self, directory: str) -> list[str]:
        import json
        import os

        path = os.path.join(directory, "vocab.json")
        with open(path, "w") as f:
            json.dump({"kind": "word", "tokens": self.tokens}, f)
        return ["vocab.json"]

    @classmethod
    def load(cls, directory: str) -> WordTokenizer | None:
        import json
        import os

        path = os.path.join(directory, "vocab.json")
        if not os.path.exists(path):
            return None
        with open(path) as f:
            data = json.load(f)
        tokens = data["tokens"]
        if tokens[: len(SPECIALS)] != SPECIALS:
            raise ValueError(f"{path}: not a word-level vocabulary written by this trainer")
        return cls(tokens[len(SPECIALS) :])

    @classmethod
    def synthetic(cls, vocab_size: int) -> WordTokenizer:
        """A vocabulary of placeholder words w0, w1, ... with vocab_size entries in all."""
        n = max(0, vocab_size - len(SPECIALS) - len(ROLES))
        tok = cls([f"w{i}" for i in range(n)])
        return tok


class HFTokenizer:
    """A transformers tokenizer with its chat template (chat_template.py): the whole conversation
    is rendered once and each message's text, cut out of that rendering, is tokenized on its own."""

    kind = "hf"

    def __init__(self, source: str, trust_remote_code: bool = False) -> None:
        from transformers import AutoTokenizer

        self.source = source
        self.tok = AutoTokenizer.from_pretrained(source, trust_remote_code=trust_remote_code)
        self.eos_id = self.tok.eos_token_id if self.tok.eos_token_id is not None else -1
        self.bos_id = self.tok.bos_token_id if self.tok.bos_token_id is not None else -1
        self.pad_id = self.tok.pad_token_id if self.tok.pad_token_id is not None else (self.eos_id if self.eos_id >= 0 else 0)
        self._templates: dict[str | None, ChatTemplate] = {}
        # The files of the first save, name -> bytes (save).
        self._saved: dict[str, bytes] | None = None

    @property
    def vocab_size(self) -> int:
        return len(self.tok)

    def template(self, chat_template: str | None) -> ChatTemplate:
        """The model's own template (chat_template null) or the override, probed once."""
        key = chat_template or None
        if key not in self._templates:
            self._templates[key] = ChatTemplate(self.tok, key)
        return self._templates[key]

    def template_info(self, chat_template: str | None) -> dict[str, Any]:
        return self.template(chat_template).info.to_message()

    def stop_ids(self, chat_template: str | None) -> list[int]:
        """eos, the generation config's end ids, and the template's end-of-turn token."""
        ids = [self.eos_id] + _generation_config_eos(self.source)
        eot = self.template(chat_template).eot
        if eot:
            eot_id = self.tok.convert_tokens_to_ids(eot)
            if isinstance(eot_id, int):
                ids.append(eot_id)
        return list(dict.fromkeys(i for i in ids if isinstance(i, int) and 0 <= i < self.vocab_size))

    def decode(self, ids: Sequence[int], skip_special: bool = False) -> str:
        # no clean-up of spaces before punctuation: the text is what the model generated
        return self.tok.decode([int(i) for i in ids], skip_special_tokens=skip_special, clean_up_tokenization_spaces=False)

    def encode_text(self, text: str) -> list[int]:
        return list(self.tok(text, add_special_tokens=False)["input_ids"])

    def encode_messages(
        self,
        messages: Sequence[dict[str, Any]],
        add_generation_prompt: bool,
        chat_template: str | None,
        tools: Sequence[Any] | None = None,
        context: int = 0,
    ) -> list[list[int]]:
        pieces = self.template(chat_template).segments(messages, add_generation_prompt, tools, context)
        return [self.encode_text(piece) for piece in pieces]

    def save(self, directory: str) -> list[str]:
        """The tokenizer's files into `directory`. The tokenizer never changes after configure, so
        the files of the first save are kept and written again as they are: a run saves a
        checkpoint every iteration, and serialising a large vocabulary (Qwen3's tokenizer.json is
        11 MB) took a third of each save."""
        if self._saved is None:
            names = [p.split("/")[-1] for p in self.tok.save_pretrained(directory)]
            saved = {}
            for name in names:
                with open(os.path.join(directory, name), "rb") as f:
                    saved[name] = f.read()
            self._saved = saved
            return names
        for name, data in self._saved.items():
            with open(os.path.join(directory, name), "wb") as f:
                f.write(data)
        return list(self._saved)


def _generation_config_eos(source: str) -> list[int]:
    """generation_config.json's eos_token_id (an int or a list) beside the tokenizer, if any."""
    path = os.path.join(source, "generation_config.json")
    if not os.path.isfile(path):
        return []
    try:
        with open(path) as f:
            eos = json.load(f).get("eos_token_id")
    except (OSError, ValueError, AttributeError):
        return []
    if isinstance(eos, int):
        return [eos]
    return [i for i in eos if isinstance(i, int)] if isinstance(eos, list) else []
