import io
import json
import os
import shutil
import struct
import subprocess

import numpy as np
import pytest
from helpers import REPO, require_built

from arl_trainer.framing import MAGIC, FrameError, Ragged, decode_frame, encode_frame, read_frame, write_frame


def sample_message():
    return {
        "id": 7,
        "method": "train_step",
        "params": {
            "ids": Ragged.from_sequences([[1, 2, 3], [], [4, 5]], "int32"),
            "mask": np.array([0, 1, 1, 1, 0], dtype=np.uint8),
            "x": np.array([1.5, -2.25, 3.0], dtype=np.float32),
            "d": np.array([1e-300, 0.1, 2.0], dtype=np.float64),
            "nested": [{"a": np.array([9], dtype=np.int32)}, None, True, "text ü"],
            "n": 3,
            "f": 0.5,
        },
    }


def test_round_trip_all_dtypes_and_alignment():
    frame = encode_frame(sample_message())
    assert frame[:4] == MAGIC
    header_len, payload_len = struct.unpack_from("<II", frame, 4)
    header = json.loads(frame[12 : 12 + header_len])
    assert len(frame) == 12 + header_len + payload_len
    for d in header["arrays"]:
        assert d["offset"] % 8 == 0
    assert {d["dtype"] for d in header["arrays"]} == {"int32", "uint8", "float32", "float64"}
    out = decode_frame(frame)
    p = out["params"]
    r = Ragged.from_message(p["ids"])
    assert [list(x) for x in r.rows()] == [[1, 2, 3], [], [4, 5]]
    assert p["mask"].dtype == np.uint8 and list(p["mask"]) == [0, 1, 1, 1, 0]
    assert p["x"].dtype == np.float32 and list(p["x"]) == [1.5, -2.25, 3.0]
    assert p["d"].dtype == np.float64 and p["d"][0] == 1e-300
    assert p["nested"][0]["a"].tolist() == [9] and p["nested"][1:] == [None, True, "text ü"]
    assert out["id"] == 7 and p["n"] == 3 and p["f"] == 0.5


def test_stream_reading_and_clean_eof():
    buf = io.BytesIO()
    write_frame(buf, {"id": 1, "result": {}})
    write_frame(buf, {"id": 2, "result": {"v": np.arange(5, dtype=np.int32)}})
    buf.seek(0)
    assert read_frame(buf) == {"id": 1, "result": {}}
    assert read_frame(buf)["result"]["v"].tolist() == [0, 1, 2, 3, 4]
    assert read_frame(buf) is None


def test_truncated_and_foreign_streams_are_errors():
    frame = encode_frame({"id": 1})
    with pytest.raises(FrameError):
        read_frame(io.BytesIO(frame[:-1]))
    with pytest.raises(FrameError, match="not in the ARL trainer framing"):
        read_frame(io.BytesIO(b"hello world, not a frame"))


def test_non_finite_numbers_become_null_and_bad_dtypes_are_refused():
    out = decode_frame(encode_frame({"loss": float("nan"), "x": float("inf"), "ok": 1.0}))
    assert out == {"loss": None, "x": None, "ok": 1.0}
    with pytest.raises(FrameError):
        encode_frame({"a": np.zeros(2, dtype=np.int64)})


def test_torch_tensors_are_framed():
    torch = pytest.importorskip("torch")
    out = decode_frame(encode_frame({"t": torch.tensor([1.0, 2.0])}))
    assert out["t"].dtype == np.float32 and out["t"].tolist() == [1.0, 2.0]


def test_ragged_validation():
    with pytest.raises(ValueError):
        Ragged(np.zeros(3, np.int32), np.array([0, 2], np.int32))
    with pytest.raises(ValueError):
        Ragged(np.zeros(3, np.int32), np.array([0, 2, 1, 3], np.int32))


NODE_SCRIPT = r"""
import { encodeFrame, decodeFrame } from "%s";
const chunks = [];
process.stdin.on("data", (c) => chunks.push(c));
process.stdin.on("end", () => {
  const msg = decodeFrame(Buffer.concat(chunks));
  const p = msg.params;
  // echo back, with typed arrays transformed so that the round trip is checked
  const out = { id: msg.id + 1, result: {
    ids: { values: Int32Array.from(p.ids.values, (v) => v * 2), offsets: p.ids.offsets },
    mask: p.mask, x: p.x, d: p.d, kinds: [p.ids.values.constructor.name, p.mask.constructor.name, p.x.constructor.name, p.d.constructor.name],
    nested: p.nested } };
  process.stdout.write(encodeFrame(out));
});
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not on PATH")
def test_interoperates_with_the_typescript_framing(tmp_path):
    require_built(os.path.join(REPO, "dist", "trainer", "protocol", "framing.js"))
    script = tmp_path / "echo.mjs"
    script.write_text(NODE_SCRIPT % os.path.join(REPO, "dist", "trainer", "protocol", "framing.js"))
    res = subprocess.run(["node", str(script)], input=encode_frame(sample_message()), capture_output=True, timeout=60)
    assert res.returncode == 0, res.stderr.decode()
    out = decode_frame(res.stdout)
    r = out["result"]
    assert out["id"] == 8
    assert r["kinds"] == ["Int32Array", "Uint8Array", "Float32Array", "Float64Array"]
    assert [list(x) for x in Ragged.from_message(r["ids"]).rows()] == [[2, 4, 6], [], [8, 10]]
    assert r["x"].tolist() == [1.5, -2.25, 3.0] and r["d"][0] == 1e-300
    assert r["nested"][0]["a"].tolist() == [9] and r["nested"][3] == "text ü"
