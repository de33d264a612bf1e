"""The error codes of the protocol (docs/protocol.md "Messages") and the exception that carries one.

server.py maps a RequestError to its code; out_of_memory and internal come from the failure
itself, never from a RequestError raised on purpose.
"""
from __future__ import annotations

INVALID_REQUEST = "invalid_request"
UNSUPPORTED = "unsupported"
OUT_OF_MEMORY = "out_of_memory"
INTERNAL = "internal"


class RequestError(Exception):
    """A request the trainer refuses, with the protocol error code of the answer."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def invalid(message: str) -> RequestError:
    return RequestError(INVALID_REQUEST, message)


def unsupported(message: str) -> RequestError:
    return RequestError(UNSUPPORTED, message)
