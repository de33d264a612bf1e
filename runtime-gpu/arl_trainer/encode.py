"""encode / decode / tokenize: chat messages to token ids and back, and plain text to ids, over the
configured tokenizer."""
from __future__ import annotations

from .errors import invalid, unsupported
from .framing import Ragged
from .requests import required_ragged
from .state import TrainerState, configured


def encode(state: TrainerState, p: dict) -> dict:
    conf = configured(state)
    try:
        seqs = conf.tokenizer.encode_messages(p["messages"], p["add_generation_prompt"], conf.chat_template, p.get("tools"), int(p.get("context") or 0))
    except NotImplementedError as e:
        raise unsupported(str(e)) from None
    except (ValueError, KeyError, TypeError) as e:
        raise invalid(str(e)) from None
    return {"ids": Ragged.from_sequences(seqs, "int32")}


def decode(state: TrainerState, p: dict) -> dict:
    conf = configured(state)
    ids = required_ragged(p, "ids", "int32")
    skip = bool(p.get("skip_special_tokens", False))
    return {"texts": [conf.tokenizer.decode(r, skip_special=skip) for r in ids.rows()]}


def tokenize(state: TrainerState, p: dict) -> dict:
    """Plain texts to ids without the template; special-token text is its token (the agent
    gateway's forced tool-call openings, docs/gateway.md)."""
    conf = configured(state)
    texts = p["texts"]
    if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
        raise invalid("tokenize: texts must be a list of strings")
    return {"ids": Ragged.from_sequences([conf.tokenizer.encode_text(t) for t in texts], "int32")}
