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

import re
from collections.abc import Sequence
from typing import Any

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

    def encode_messages(self, messages: Sequence[dict[str, Any]], add_generation_prompt: bool, chat_template: str | None) -> list[list[int]]:
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
        return seqs

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
    """A transformers tokenizer with its chat template. Messages are rendered incrementally: the
    template applied to messages[:k+1] minus its rendering of messages[:k] gives message k's text,
    tokenized on its own (the runtime never re-tokenizes what came before)."""

    kind = "hf"

    def __init__(self, source: str, trust_remote_code: bool = False) -> None:
        from transformers import AutoTokenizer

        self.tok = AutoTokenizer.from_pretrained(source, trust_remote_code=trust_remote_code)
        self.eos_id = self.tok.eos_token_id if self.tok.eos_token_id is not None else -1
        self.bos_id = self.tok.bos_token_id if self.tok.bos_token_id is not None else -1
        self.pad_id = self.tok.pad_token_id if self.tok.pad_token_id is not None else (self.eos_id if self.eos_id >= 0 else 0)

    @property
    def vocab_size(self) -> int:
        return len(self.tok)

    def decode(self, ids: Sequence[int], skip_special: bool = False) -> str:
        return self.tok.decode([int(i) for i in ids], skip_special_tokens=skip_special)

    def encode_messages(self, messages: Sequence[dict[str, Any]], add_generation_prompt: bool, chat_template: str | None) -> list[list[int]]:
        kwargs: dict[str, Any] = {"tokenize": False}
        if chat_template:
            kwargs["chat_template"] = chat_template
        msgs = [{"role": m["role"], "content": m.get("content", "")} for m in messages]
        seqs: list[list[int]] = []
        previous = ""
        for k in range(len(msgs)):
            last = k == len(msgs) - 1
            text = self.tok.apply_chat_template(msgs[: k + 1], add_generation_prompt=add_generation_prompt and last, **kwargs)
            if not text.startswith(previous):
                # The template is not prefix-stable (it rewrites earlier turns): tokenize this
                # message's own rendering instead of a delta.
                piece = self.tok.apply_chat_template(msgs[k : k + 1], add_generation_prompt=add_generation_prompt and last, **kwargs)
            else:
                piece = text[len(previous) :]
            previous = text
            seqs.append(self.tok(piece, add_special_tokens=False)["input_ids"])
        return seqs

    def save(self, directory: str) -> list[str]:
        return [p.split("/")[-1] for p in self.tok.save_pretrained(directory)]
