"""One env-host request's parameters, read and checked, and a call's answer as the protocol gives it:
``{"result": ...}`` or ``{"error": {"kind", "message", "traceback"}}``. The request loop
(server.py) and the verifier workers (pool.py) answer the same way, so both use this module.
"""

import traceback
from collections.abc import Callable
from typing import Any

from arl_envhost import verifiers
from arl_envhost.backends.base import ConfigError
from arl_envhost.limits import CallTimeout, call_with_limit
from arl_envhost.sessions import LibraryMissing, SessionError


class RequestError(Exception):
    """A request the host cannot serve as written."""


def str_param(params: dict[str, Any], key: str) -> str:
    value = params.get(key)
    if not isinstance(value, str):
        raise RequestError(f"params.{key} must be a string")
    return value


def limit_param(params: dict[str, Any]) -> float:
    value = params.get("timeout_s")
    if not isinstance(value, int | float) or isinstance(value, bool) or value <= 0:
        raise RequestError("params.timeout_s must be a positive number")
    return float(value)


def int_param(params: dict[str, Any], key: str) -> int:
    value = params.get(key)
    if not isinstance(value, int) or isinstance(value, bool):
        raise RequestError(f"params.{key} must be an integer")
    return value


def obj_param(params: dict[str, Any], key: str) -> dict[str, Any]:
    value = params.get(key)
    if not isinstance(value, dict):
        raise RequestError(f"params.{key} must be an object")
    return value


def score(params: dict[str, Any]) -> Any:
    """A ``verifier.score`` request's result, under its time limit (in the host or a verifier worker)."""
    style, limit = str_param(params, "style"), limit_param(params)
    if style == "verl":
        handle, solution = str_param(params, "handle"), str_param(params, "solution_str")
        return call_with_limit(
            lambda: verifiers.score_verl(handle, params.get("data_source"), solution, params.get("ground_truth"), params.get("extra_info")), limit
        )
    if style == "trl":
        handle, completion = str_param(params, "handle"), str_param(params, "completion")
        columns = params.get("columns")
        if not isinstance(columns, dict):
            raise RequestError("params.columns must be an object")
        return call_with_limit(lambda: verifiers.score_trl(handle, params.get("prompt"), completion, columns), limit)
    if style == "math_verify":
        answer, truth = str_param(params, "solution_str"), str_param(params, "ground_truth")
        return call_with_limit(lambda: verifiers.score_math_verify(answer, truth), limit)
    raise RequestError(f"unknown verifier style {style!r} (verl, trl, math_verify)")


def error_of(kind: str, message: str, tb: str | None = None) -> dict[str, Any]:
    return {"kind": kind, "message": message, "traceback": tb}


def answer(fn: Callable[[], Any], limit: Any) -> dict[str, Any]:
    """``{"result": fn()}``, or ``{"error": ...}`` saying how it failed (``limit``: the call's timeout_s, for the message)."""
    try:
        return {"result": fn()}
    except (RequestError, SessionError) as e:
        return {"error": error_of("request", str(e))}
    except LibraryMissing as e:
        return {"error": error_of("missing", str(e))}
    except ConfigError as e:
        return {"error": {**error_of("config", str(e)), "field": e.field, "hint": e.hint}}
    except verifiers.VerifierError as e:
        return {"error": error_of("result", str(e))}
    except CallTimeout:
        return {"error": error_of("timeout", f"the call ran past its limit of {limit} s")}
    except Exception as e:  # noqa: BLE001 - the user's code may raise anything; the host goes on
        last = traceback.format_exception_only(type(e), e)[-1].strip()
        return {"error": error_of("raised", last, traceback.format_exc())}
    except SystemExit as e:
        return {"error": error_of("raised", f"SystemExit({e.code}): the verifier called exit", traceback.format_exc())}
