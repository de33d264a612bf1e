"""Binary framing of the trainer protocol (docs/protocol.md, version 1).

    frame   = b"ARL1" | u32le header_length | u32le payload_length | header | payload
    header  = UTF-8 JSON {"message": MESSAGE, "arrays": [{"dtype", "offset", "length"}, ...]}
    payload = raw little-endian arrays, each starting at a multiple of 8 bytes

Inside MESSAGE a bulk array is written as {"$array": k}. Only numpy is needed here; torch
tensors are accepted on the way out (converted with .numpy()).
"""
from __future__ import annotations

import json
import math
import struct
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, BinaryIO

import numpy as np

MAGIC = b"ARL1"
PREFIX = 12
MAX_HEADER_BYTES = 64 * 1024 * 1024

DTYPES: dict[str, np.dtype] = {
    "int32": np.dtype("<i4"),
    "float32": np.dtype("<f4"),
    "float64": np.dtype("<f8"),
    "uint8": np.dtype("u1"),
}


class FrameError(Exception):
    """The byte stream is not in the trainer framing (or a message cannot be framed)."""


def _dtype_name(a: np.ndarray) -> str:
    dt = a.dtype
    for name, want in DTYPES.items():
        if dt == want or (dt.kind == want.kind and dt.itemsize == want.itemsize):
            return name
    raise FrameError(f"arrays of dtype {dt} cannot be framed (int32, float32, float64, uint8 only)")


@dataclass
class Ragged:
    """A ragged batch: sequence i is values[offsets[i]:offsets[i+1]]."""

    values: np.ndarray
    offsets: np.ndarray

    def __post_init__(self) -> None:
        self.offsets = np.ascontiguousarray(self.offsets, dtype=DTYPES["int32"])
        if self.offsets.ndim != 1 or len(self.offsets) < 1:
            raise ValueError("ragged offsets must be a non-empty 1-d array (n + 1 entries)")
        if self.offsets[0] != 0 or self.offsets[-1] != len(self.values) or np.any(np.diff(self.offsets) < 0):
            raise ValueError(
                f"ragged offsets must rise from 0 to len(values) = {len(self.values)} (got {self.offsets[0]}..{self.offsets[-1]})"
            )

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def row(self, i: int) -> np.ndarray:
        return self.values[self.offsets[i] : self.offsets[i + 1]]

    def rows(self) -> list[np.ndarray]:
        return [self.row(i) for i in range(len(self))]

    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)

    @classmethod
    def from_sequences(cls, sequences: Iterable[Sequence[float] | np.ndarray], dtype: str) -> Ragged:
        seqs = [np.asarray(s, dtype=DTYPES[dtype]).reshape(-1) for s in sequences]
        offsets = np.zeros(len(seqs) + 1, dtype=DTYPES["int32"])
        for i, s in enumerate(seqs):
            offsets[i + 1] = offsets[i] + len(s)
        values = np.concatenate(seqs) if seqs else np.zeros(0, dtype=DTYPES[dtype])
        return cls(values.astype(DTYPES[dtype], copy=False), offsets)

    @classmethod
    def from_message(cls, obj: Any, what: str = "ragged", dtype: str | None = None) -> Ragged:
        if isinstance(obj, Ragged):
            obj = obj.to_message()
        if not isinstance(obj, dict) or "values" not in obj or "offsets" not in obj:
            raise ValueError(f"{what}: expected a ragged batch {{values, offsets}}")
        values, offsets = obj["values"], obj["offsets"]
        values = np.asarray(values) if not isinstance(values, np.ndarray) else values
        if dtype is not None:
            values = values.astype(DTYPES[dtype], copy=False)
        offsets = np.asarray(offsets)
        if offsets.dtype.kind not in "iu":
            raise ValueError(f"{what}: offsets must be integers")
        try:
            return cls(values, offsets)
        except ValueError as e:
            raise ValueError(f"{what}: {e}") from None

    def to_message(self) -> dict[str, np.ndarray]:
        return {"values": self.values, "offsets": self.offsets}


def _to_numpy(value: Any) -> np.ndarray | None:
    if isinstance(value, np.ndarray):
        return value
    # torch tensors, without importing torch
    if hasattr(value, "detach") and hasattr(value, "cpu") and hasattr(value, "numpy"):
        return value.detach().cpu().numpy()
    return None


def _clean_float(x: float) -> float | None:
    # JSON has no NaN/Infinity (JSON.parse rejects them): non-finite numbers become null.
    return x if math.isfinite(x) else None


def encode_frame(message: Any) -> bytes:
    """Encodes one message (JSON values, numpy arrays, torch tensors, Ragged) as one frame."""
    arrays: list[np.ndarray] = []
    descriptors: list[dict[str, Any]] = []
    payload_length = 0

    def walk(v: Any) -> Any:
        nonlocal payload_length
        if isinstance(v, Ragged):
            return walk(v.to_message())
        a = _to_numpy(v)
        if a is not None:
            name = _dtype_name(a)
            a = np.ascontiguousarray(a.reshape(-1), dtype=DTYPES[name])
            payload_length = (payload_length + 7) // 8 * 8
            descriptors.append({"dtype": name, "offset": payload_length, "length": int(a.size)})
            arrays.append(a)
            payload_length += a.nbytes
            return {"$array": len(arrays) - 1}
        if isinstance(v, dict):
            return {str(k): walk(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [walk(x) for x in v]
        if isinstance(v, (bool, np.bool_)):
            return bool(v)
        if isinstance(v, (int, np.integer)):
            return int(v)
        if isinstance(v, (float, np.floating)):
            return _clean_float(float(v))
        if v is None or isinstance(v, str):
            return v
        raise FrameError(f"cannot frame a value of type {type(v).__name__}")

    body = walk(message)
    header = json.dumps({"message": body, "arrays": descriptors}, separators=(",", ":"), allow_nan=False).encode("utf-8")
    payload = bytearray(payload_length)
    for a, d in zip(arrays, descriptors, strict=True):
        payload[d["offset"] : d["offset"] + a.nbytes] = a.tobytes()
    return MAGIC + struct.pack("<II", len(header), payload_length) + header + bytes(payload)


def _revive(value: Any, arrays: list[np.ndarray]) -> Any:
    if isinstance(value, list):
        return [_revive(v, arrays) for v in value]
    if isinstance(value, dict):
        ref = value.get("$array")
        if len(value) == 1 and isinstance(ref, int) and not isinstance(ref, bool):
            if not 0 <= ref < len(arrays):
                raise FrameError(f"frame refers to array {ref}, which it does not carry")
            return arrays[ref]
        return {k: _revive(v, arrays) for k, v in value.items()}
    return value


def decode_frame(frame: bytes) -> Any:
    """Decodes one complete frame; arrays are copied into their own (aligned) numpy arrays."""
    if len(frame) < PREFIX or frame[:4] != MAGIC:
        raise FrameError("not an ARL trainer frame")
    header_length, payload_length = struct.unpack_from("<II", frame, 4)
    if len(frame) != PREFIX + header_length + payload_length:
        raise FrameError("frame length does not match its prefix")
    return _decode_parts(frame[PREFIX : PREFIX + header_length], frame[PREFIX + header_length :])


def _decode_parts(header_bytes: bytes, payload: bytes) -> Any:
    try:
        header = json.loads(header_bytes.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise FrameError(f"frame header is not JSON: {e}") from None
    if not isinstance(header, dict) or "message" not in header:
        raise FrameError("frame header lacks 'message'")
    arrays: list[np.ndarray] = []
    for d in header.get("arrays") or []:
        dtype = DTYPES.get(d.get("dtype")) if isinstance(d, dict) else None
        if dtype is None:
            raise FrameError(f"unknown array dtype {d.get('dtype') if isinstance(d, dict) else d!r}")
        offset, length = int(d["offset"]), int(d["length"])
        nbytes = length * dtype.itemsize
        if offset < 0 or length < 0 or offset + nbytes > len(payload):
            raise FrameError("array lies outside the frame's payload")
        arrays.append(np.frombuffer(payload, dtype=dtype, count=length, offset=offset).copy())
    return _revive(header["message"], arrays)


def _read_exactly(stream: BinaryIO, n: int) -> bytes | None:
    chunks = []
    got = 0
    while got < n:
        chunk = stream.read(n - got)
        if not chunk:
            if got == 0:
                return None
            raise FrameError(f"stream ended inside a frame ({got} of {n} bytes)")
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def read_frame(stream: BinaryIO) -> Any | None:
    """Reads one message; None at a clean end of stream (between frames)."""
    head = _read_exactly(stream, PREFIX)
    if head is None:
        return None
    if head[:4] != MAGIC:
        raise FrameError(f"stream is not in the ARL trainer framing (got {head[:4]!r})")
    header_length, payload_length = struct.unpack_from("<II", head, 4)
    if header_length > MAX_HEADER_BYTES:
        raise FrameError(f"frame header of {header_length} bytes is too large")
    header = _read_exactly(stream, header_length) if header_length else b""
    payload = _read_exactly(stream, payload_length) if payload_length else b""
    if header is None or payload is None:
        raise FrameError("stream ended inside a frame")
    return _decode_parts(header, payload)


def write_frame(stream: BinaryIO, message: Any) -> None:
    stream.write(encode_frame(message))
    stream.flush()


if sys.byteorder != "little":  # pragma: no cover - every supported platform is little-endian
    raise ImportError("arl_trainer assumes a little-endian host")
