"""A small reader and writer of the safetensors format (no dependency on the `safetensors` package).

File layout: u64le N | N bytes of UTF-8 JSON header | raw data. The header maps each tensor name to
{"dtype": "F32"|..., "shape": [...], "data_offsets": [begin, end]} (offsets relative to the start
of the data, tensors packed without gaps in header order here), plus an optional "__metadata__"
object of string -> string. Data is little-endian, row-major. The header is padded with spaces to
a multiple of 8 bytes, as the reference implementation does, so that the data is aligned.
"""
from __future__ import annotations

import json
import math
import os
import stat
import struct
from collections.abc import Mapping

import numpy as np
import torch

_TO_CODE = {
    torch.float64: "F64",
    torch.float32: "F32",
    torch.float16: "F16",
    torch.bfloat16: "BF16",
    torch.int64: "I64",
    torch.int32: "I32",
    torch.int16: "I16",
    torch.int8: "I8",
    torch.uint8: "U8",
    torch.bool: "BOOL",
}
_FROM_CODE = {v: k for k, v in _TO_CODE.items()}
_NUMPY = {
    "F64": np.dtype("<f8"),
    "F32": np.dtype("<f4"),
    "F16": np.dtype("<f2"),
    "BF16": np.dtype("<i2"),  # reinterpreted as bfloat16 through torch
    "I64": np.dtype("<i8"),
    "I32": np.dtype("<i4"),
    "I16": np.dtype("<i2"),
    "I8": np.dtype("i1"),
    "U8": np.dtype("u1"),
    "BOOL": np.dtype("?"),
}


class SafetensorsError(ValueError):
    pass


def _tensor_bytes(t: torch.Tensor) -> np.ndarray:
    """The tensor's bytes, little-endian as stored, as a flat uint8 view of its (host, contiguous)
    memory: written without a copy of their own."""
    t = t.detach().to("cpu").contiguous()
    if t.dtype == torch.bfloat16:
        t = t.view(torch.int16)
    return t.numpy().reshape(-1).view(np.uint8)


def save_file(tensors: Mapping[str, torch.Tensor], path: str, metadata: Mapping[str, str] | None = None) -> None:
    """Writes `tensors` to `path` (not atomically; callers write into a temporary directory)."""
    header: dict[str, object] = {}
    if metadata:
        header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    blobs: list[np.ndarray] = []
    offset = 0
    seen_storage: dict[tuple[int, int], str] = {}
    for name in tensors:
        t = tensors[name]
        if t.dtype not in _TO_CODE:
            raise SafetensorsError(f"tensor {name}: dtype {t.dtype} is not supported")
        key = (t.data_ptr(), t.numel()) if t.numel() > 0 else None
        if key is not None and key in seen_storage:
            raise SafetensorsError(f"tensors {seen_storage[key]} and {name} share memory; save one of them")
        if key is not None:
            seen_storage[key] = name
        blob = _tensor_bytes(t)
        header[name] = {"dtype": _TO_CODE[t.dtype], "shape": list(t.shape), "data_offsets": [offset, offset + blob.nbytes]}
        blobs.append(blob)
        offset += blob.nbytes
    raw = json.dumps(header, separators=(",", ":")).encode("utf-8")
    raw += b" " * ((8 - len(raw) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(raw)))
        f.write(raw)
        for blob in blobs:
            f.write(blob)
        f.flush()
        os.fsync(f.fileno())


def regular_file(path: str) -> str:
    """`path` if it is a regular file (after links). A device or FIFO is refused before it is
    opened: /dev/zero never ends, and opening a FIFO waits for a writer."""
    try:
        mode = os.stat(path).st_mode
    except OSError as e:
        raise SafetensorsError(f"cannot open {path}: {e.strerror}") from None
    if not stat.S_ISREG(mode):
        raise SafetensorsError(f"{path} is not a regular file (a device, FIFO or socket): a checkpoint's files are the ones the trainer's save wrote")
    return path


def _is_count(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def read_header(path: str) -> tuple[dict, int]:
    """Returns (header, data_start) after validating the header's structure: every tensor's
    declared bytes lie inside the file and hold exactly its shape, before anything is read."""
    size = os.path.getsize(regular_file(path))
    with open(path, "rb") as f:
        prefix = f.read(8)
        if len(prefix) != 8:
            raise SafetensorsError(f"{path}: too short for a safetensors file")
        (n,) = struct.unpack("<Q", prefix)
        if n > size - 8 or n > 100 * 1024 * 1024:
            raise SafetensorsError(f"{path}: header length {n} is impossible")
        try:
            header = json.loads(f.read(n).decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise SafetensorsError(f"{path}: header is not JSON: {e}") from None
    if not isinstance(header, dict):
        raise SafetensorsError(f"{path}: header is not an object")
    data_len = size - 8 - n
    for name, info in header.items():
        if name == "__metadata__":
            continue
        if not isinstance(info, dict) or info.get("dtype") not in _FROM_CODE:
            raise SafetensorsError(f"{path}: tensor {name} has unknown dtype {info.get('dtype') if isinstance(info, dict) else info!r}")
        shape, offsets = info.get("shape"), info.get("data_offsets")
        if not isinstance(shape, list) or not all(_is_count(d) for d in shape):
            raise SafetensorsError(f"{path}: tensor {name} has shape {shape!r}, not a list of sizes")
        if not isinstance(offsets, list) or len(offsets) != 2 or not all(_is_count(o) for o in offsets):
            raise SafetensorsError(f"{path}: tensor {name} has data_offsets {offsets!r}, not [begin, end]")
        begin, end = offsets
        count = math.prod(shape)  # Python integers: a lying shape cannot overflow into a match
        if not (begin <= end <= data_len) or end - begin != count * _NUMPY[info["dtype"]].itemsize:
            raise SafetensorsError(f"{path}: tensor {name} has inconsistent data_offsets {info['data_offsets']}")
    return header, 8 + n


def load_file(path: str, device: str | torch.device = "cpu") -> dict[str, torch.Tensor]:
    header, start = read_header(path)
    out: dict[str, torch.Tensor] = {}
    with open(path, "rb") as f:
        f.seek(start)
        data = f.read()
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        code = info["dtype"]
        arr = np.frombuffer(data, dtype=_NUMPY[code], count=(end - begin) // _NUMPY[code].itemsize, offset=begin).copy()
        t = torch.from_numpy(arr)
        if code == "BF16":
            t = t.view(torch.bfloat16)
        out[name] = t.reshape(info["shape"]).to(device)
    return out
