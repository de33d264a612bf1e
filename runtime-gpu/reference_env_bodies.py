"""Request bodies of the reference task server (reference_env_server.py): bounded JSON parsing and
checked fields, so that a hostile body is a 400 that says what is wrong, never a crash.

Apart from the server's handler because it is the part that distrusts its input: the depth and
number bounds apply before json.loads can recurse or convert a huge int.
"""

from __future__ import annotations

import json
import re

# Requests are small flat objects; these bounds turn hostile bodies into a 400 before the
# parser recurses (json.loads raises RecursionError on deep nesting) or converts huge ints.
MAX_JSON_DEPTH = 32
MAX_INT_DIGITS = 20
INT_RANGE = (-(1 << 63), (1 << 64) - 1)  # a seed or index must fit 64 bits


def clip(value: object, limit: int = 60) -> str:
    """A value for an error message, cut short: a hostile request must not be echoed whole."""
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} characters)"


class HttpError(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


_JSON_TOKEN = re.compile(r'[\[\]{}"\\]')


def json_depth(text: str, limit: int) -> int:
    """How deep arrays and objects nest in text (strings skipped), counted without recursion and
    in one linear pass; stops counting once past limit."""
    depth = deepest = 0
    in_string = False
    escaped_at = -1  # the position a backslash inside a string escapes
    for m in _JSON_TOKEN.finditer(text):
        pos, token = m.start(), m.group()
        if pos == escaped_at:
            continue
        if in_string:
            if token == "\\":
                escaped_at = pos + 1
            elif token == '"':
                in_string = False
        elif token == '"':
            in_string = True
        elif token in "[{":
            depth += 1
            deepest = max(deepest, depth)
            if deepest > limit:
                break
        elif token in "]}":
            depth -= 1
    return deepest


def _bounded_int(digits: str) -> int:
    if len(digits.lstrip("-")) > MAX_INT_DIGITS:
        raise HttpError(400, f"a number in the request has {len(digits.lstrip('-'))} digits (at most {MAX_INT_DIGITS})")
    return int(digits)


def _no_constant(name: str) -> object:
    raise HttpError(400, f"{name} is not JSON")


def parse_body(text: str) -> dict:
    """A request body as a JSON object, or an HttpError(400) that says what is wrong with it."""
    if json_depth(text, MAX_JSON_DEPTH) > MAX_JSON_DEPTH:
        raise HttpError(400, f"the request body nests deeper than {MAX_JSON_DEPTH} levels")
    try:
        body = json.loads(text, parse_int=_bounded_int, parse_constant=_no_constant) if text else None
    except json.JSONDecodeError as e:
        raise HttpError(400, f"the request body is not JSON ({e.msg} at line {e.lineno} column {e.colno})") from e
    if not isinstance(body, dict):
        raise HttpError(400, "the request body is not a JSON object")
    return body


def int_field(body: dict, name: str, default: object = None, minimum: int | None = None) -> int:
    value = body.get(name, default)
    low, high = INT_RANGE if minimum is None else (minimum, INT_RANGE[1])
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        kind = "a non-negative integer" if minimum == 0 else "an integer"
        raise HttpError(400, f'"{name}" must be {kind} that fits 64 bits, not {clip(value)}')
    return value
