"""Time limits of one call, by the interval timer (each call runs in the main thread of the process that serves it: the host, or a verifier worker).

A limit raises ``CallTimeout`` in the running Python code. It derives from BaseException so that a
user's ``except Exception`` cannot swallow it. Code stuck inside a C extension does not see it: the
runtime's own deadline (a little longer) then ends the whole host, and starts a fresh one.
"""

import signal
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


class CallTimeout(BaseException):
    """The call ran past its time limit."""


def _expire(_signum, _frame):
    raise CallTimeout()


def call_with_limit(fn: Callable[[], T], seconds: float) -> T:
    """fn(), stopped with CallTimeout after ``seconds`` of wall-clock time."""
    previous = signal.signal(signal.SIGALRM, _expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        return fn()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
