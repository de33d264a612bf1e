"""Request checks. The structure of every request's params is checked against the ONE protocol
schema, protocol.schema.json (written from src/contracts/trainer-requests.ts by `npm run build`;
docs/protocol.md stays normative). The schema describes the message as it is on the wire, bulk arrays
as {"$array": k} descriptors, so the params are checked in that form. What the schema cannot say
stays in code here: the decoded arrays' lengths and alignment with `ids`, token ids within the
vocabulary, and values JSON cannot carry (non-finite numbers of in-process callers)."""
from __future__ import annotations

import functools
import json
import math
import os
from typing import Any

import numpy as np

from .errors import invalid
from .framing import Ragged
from .sampling import SamplingParams

try:
    import jsonschema
except ImportError as e:  # pragma: no cover - the message is the point
    raise ImportError(
        "arl_trainer checks requests against protocol.schema.json with the 'jsonschema' package, which is not installed: "
        "apt-get install python3-jsonschema, or pip install jsonschema",
        name="jsonschema",
    ) from e

SCHEMA_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "protocol.schema.json")
# Integer bounds the schema writes for JavaScript's safe integers: not worth naming in a message.
_SAFE_INTEGER = 2**53 - 1


@functools.cache
def protocol_schema() -> dict[str, Any]:
    """The protocol schema, read and checked against its own meta-schema once per process."""
    with open(SCHEMA_FILE, encoding="utf-8") as f:
        schema = json.load(f)
    jsonschema.validators.validator_for(schema).check_schema(schema)
    return schema


@functools.cache
def _validator(method: str) -> Any:
    """A validator of one method's params (the schema's $defs/METHOD), built once per method."""
    schema = protocol_schema()
    cls = jsonschema.validators.validator_for(schema)
    return cls({"$schema": schema["$schema"], "$defs": schema["$defs"], "$ref": f"#/$defs/{method}"})


def parse_request(method: str, params: Any) -> dict:
    """params, when they fit the method's schema; else the protocol's invalid_request naming the
    first problem (the field, what it must be, what it is)."""
    errors = list(_validator(method).iter_errors(wire_form(params)))
    if errors:
        raise invalid(_message(_relevant(errors)))
    return params


def wire_form(value: Any) -> Any:
    """`value` as the framing would write it (framing.encode_frame): arrays become {"$array": k}
    descriptors, numpy scalars plain numbers, non-finite floats null. In-process callers pass
    numpy arrays and Ragged batches; decoded frames carry numpy arrays where the wire had
    descriptors; both are checked as the wire message."""
    if isinstance(value, Ragged):
        return {"values": {"$array": 0}, "offsets": {"$array": 0}}
    if isinstance(value, np.ndarray) or (hasattr(value, "detach") and hasattr(value, "numpy")):
        return {"$array": 0}
    if isinstance(value, dict):
        return {str(k): wire_form(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [wire_form(v) for v in value]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(value) else None
    return value


# --- messages of schema errors --------------------------------------------------------------------

_PLURAL = {"string": "strings", "integer": "integers", "number": "numbers", "object": "objects"}


def _relevant(errors: list[Any]) -> Any:
    """The error to report: the most relevant (jsonschema's order), and inside anyOf / oneOf the
    errors of the one alternative whose kind the value has, when exactly one has it (a critic
    object missing `returns` is reported as that, not as 'an object or null')."""
    key = jsonschema.exceptions.relevance
    error = max(errors, key=key)
    while error.validator in ("anyOf", "oneOf") and error.context:
        branches: dict[Any, list[Any]] = {}
        for e in error.context:
            branches.setdefault(e.relative_schema_path[0], []).append(e)
        fitting = [b for b in branches.values() if not any(_rules_out(e) for e in b)]
        if len(fitting) != 1:
            break
        error = max(fitting[0], key=key)
    return error


def _rules_out(error: Any) -> bool:
    """Whether an error says the value is not of this alternative at all: the wrong type or
    enum value, or the wrong tag (a const property: {mode: 'token_mean'}, {kind: 'refresh'})."""
    depth = len(error.relative_path)
    return (depth == 0 and error.validator in ("type", "enum", "const")) or (depth == 1 and error.validator == "const")


def _message(error: Any) -> str:
    path = _dotted(error.absolute_path)
    if error.validator == "required":
        name = next((n for n in error.validator_value if isinstance(error.instance, dict) and n not in error.instance), "?")
        return f"'{name}' is missing" if not path else f"{path}.{name} is missing"
    return f"{path or 'params'} must be {_describe(error.schema)}, got {_shown(error.instance)}"


def _dotted(path: Any) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _shown(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _describe(schema: Any) -> str:
    """What a schema node admits, in words."""
    if schema is True or schema == {}:
        return "anything"
    if schema is False:
        return "absent"
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        target = protocol_schema()["$defs"][name]
        if name.startswith("ragged_"):
            return f"a ragged {name[len('ragged_'):]} batch {{values, offsets}}"
        return _describe(target)
    if "x-dtype" in schema:
        return f'a bulk {schema["x-dtype"]} array ({{"$array": k}})'
    for alternatives in ("anyOf", "oneOf"):
        if alternatives in schema:
            words = list(dict.fromkeys(_describe(s) for s in schema[alternatives]))
            return " or ".join(words)
    if "const" in schema:
        return repr(schema["const"])
    if "enum" in schema:
        return "one of " + ", ".join(str(v) for v in schema["enum"])
    kinds = schema.get("type")
    if isinstance(kinds, list):
        return " or ".join(_describe({**schema, "type": k}) for k in kinds)
    return _describe_type(kinds, schema)


def _describe_type(kind: str | None, schema: dict[str, Any]) -> str:
    if kind in ("number", "integer"):
        bounds = []
        for keyword, op in (("exclusiveMinimum", ">"), ("minimum", ">="), ("exclusiveMaximum", "<"), ("maximum", "<=")):
            bound = schema.get(keyword)
            if bound is not None and abs(bound) < _SAFE_INTEGER:
                bounds.append(f"{op} {bound:g}")
        return ("an integer" if kind == "integer" else "a number") + (" " + " and ".join(bounds) if bounds else "")
    if kind == "string":
        return "a non-empty string" if schema.get("minLength") else "a string"
    if kind == "boolean":
        return "true or false"
    if kind == "null":
        return "null"
    if kind == "array":
        if "prefixItems" in schema:
            return f"an array of {len(schema['prefixItems'])} entries"
        items = schema.get("items")
        of = items.get("type") if isinstance(items, dict) else None
        return f"an array of {_PLURAL[of]}" if of in _PLURAL else "an array"
    if kind == "object":
        fixed = [(k, v["const"]) for k, v in (schema.get("properties") or {}).items() if isinstance(v, dict) and "const" in v]
        if fixed:
            return "{" + ", ".join(f"{k}: {v!r}" for k, v in fixed) + "}"
        return "an object"
    return "a value"


# --- the decoded arrays ---------------------------------------------------------------------------


def ragged(params: dict, key: str, dtype: str, n: int | None = None, offsets: np.ndarray | None = None, required: bool = True) -> Ragged | None:
    """params[key] as a Ragged of `dtype` with `n` sequences laid out like `offsets`, or None when
    it is absent and not required."""
    obj = params.get(key)
    if obj is None:
        if required:
            raise invalid(f"'{key}' is missing")
        return None
    try:
        r = Ragged.from_message(obj, key, dtype)
    except ValueError as e:
        raise invalid(str(e)) from None
    if n is not None and len(r) != n:
        raise invalid(f"'{key}' has {len(r)} sequences, expected {n}")
    if offsets is not None and not np.array_equal(r.offsets, offsets):
        raise invalid(f"'{key}' is not aligned with 'ids' (different offsets)")
    return r


def required_ragged(params: dict, key: str, dtype: str, n: int | None = None, offsets: np.ndarray | None = None) -> Ragged:
    r = ragged(params, key, dtype, n, offsets)
    assert r is not None
    return r


def check_ids(ids: Ragged, vocab_size: int) -> None:
    v = ids.values
    if len(v) and (v.min() < 0 or v.max() >= vocab_size):
        raise invalid(f"token ids must lie in [0, {vocab_size})")


def seeds(obj: Any, n: int) -> list[int]:
    """generate's seeds (a bulk int32 array, one per prompt) as uint32 values."""
    values = np.asarray(obj).reshape(-1).tolist()
    if len(values) != n:
        raise invalid(f"seeds has {len(values)} entries for {n} prompts")
    return [int(v) % (2**32) for v in values]


def step_lr(params: dict) -> float | None:
    """train_step's optional `lr`: a positive finite peak rate for this step, or None. The schema
    checks the wire form; a non-finite number (which JSON cannot carry) can still come from an
    in-process caller."""
    lr = params.get("lr")
    if lr is None:
        return None
    if not math.isfinite(lr):
        raise invalid(f"lr must be a positive finite number or null, got {lr!r}")
    return float(lr)


def is_weights(params: dict, n: int, offsets: np.ndarray) -> Ragged | None:
    """train_step's optional `is_weights` (mask.tis, docs/semantics.md §12): aligned with `ids`,
    finite and >= 0; None when absent or null (every weight 1)."""
    w = ragged(params, "is_weights", "float32", n, offsets, required=False)
    if w is not None and len(w.values):
        bad = np.nonzero(~(np.isfinite(w.values) & (w.values >= 0)))[0]
        if len(bad):
            raise invalid(f"is_weights[{int(bad[0])}] (flat) is {float(w.values[bad[0]])!r}; importance weights must be finite and >= 0")
    return w


def sampling_params(obj: Any) -> SamplingParams | None:
    try:
        return SamplingParams.from_message(obj)
    except (ValueError, TypeError) as e:
        raise invalid(str(e)) from None
