"""Plain values for trackers that take flat keys: the plan as dotted scalars, safe names."""

from __future__ import annotations

import json
import re
from typing import Any

Scalar = bool | int | float | str


def flatten(value: Any, prefix: str = "") -> dict[str, Scalar]:
    """Dotted keys to scalars (`algorithm.optimizer.lr`); lists are indexed (`eval.k.0`), null is "null"."""
    out: dict[str, Scalar] = {}
    if isinstance(value, dict):
        for key, item in value.items():
            out.update(flatten(item, f"{prefix}.{key}" if prefix else str(key)))
    elif isinstance(value, list):
        if not value:
            out[prefix] = "[]"
        for i, item in enumerate(value):
            out.update(flatten(item, f"{prefix}.{i}"))
    elif value is None:
        out[prefix] = "null"
    elif isinstance(value, bool | int | float | str):
        out[prefix] = value
    else:
        out[prefix] = json.dumps(value)
    return out


_MLFLOW_UNSAFE = re.compile(r"[^A-Za-z0-9_\-. :/]")


def mlflow_key(key: str) -> str:
    """MLflow names allow letters, digits and `_-. :/`: `pass@1` becomes `pass_at_1`, anything else `_`."""
    return _MLFLOW_UNSAFE.sub("_", key.replace("@", "_at_"))


def markdown_table(columns: list[str], rows: list[list[Any]]) -> str:
    """A table as TensorBoard's text plugin renders it (markdown)."""

    def cell(v: Any) -> str:
        return "" if v is None else str(v).replace("|", "\\|")

    lines = ["| " + " | ".join(cell(c) for c in columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)
