"""Request dispatch: frames in, one trainer method per request, frames out.

Rank 0 reads requests and writes responses; under torchrun it broadcasts every request to the
other ranks, all ranks execute it, and their error states are gathered so that a failure on any
rank is answered (see distributed.py). Errors map to the protocol codes:
  RequestError                          -> its code (invalid_request, unsupported)
  torch.cuda.OutOfMemoryError / "out of memory" RuntimeError -> out_of_memory
  anything else                         -> internal (traceback on stderr)
"""
from __future__ import annotations

import logging
import traceback
from typing import Any, BinaryIO

import torch

from .distributed import Dist
from .errors import INTERNAL, OUT_OF_MEMORY, UNSUPPORTED, RequestError, invalid
from .framing import FrameError, read_frame, write_frame
from .trainer import Trainer

log = logging.getLogger("arl_trainer")

_EOF = "__eof__"
_BAD_FRAME = "__bad_frame__"


def _classify(error: BaseException) -> tuple[str, str]:
    if isinstance(error, RequestError):
        return error.code, str(error)
    oom = getattr(torch.cuda, "OutOfMemoryError", None)
    if (oom is not None and isinstance(error, oom)) or (isinstance(error, RuntimeError) and "out of memory" in str(error).lower()):
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
        return OUT_OF_MEMORY, str(error).splitlines()[0] if str(error) else "out of memory"
    if isinstance(error, NotImplementedError):
        return UNSUPPORTED, str(error)
    return INTERNAL, f"{type(error).__name__}: {error}"


class Server:
    def __init__(self, trainer: Trainer, dist: Dist, inp: BinaryIO | None, out: BinaryIO | None) -> None:
        self.trainer = trainer
        self.dist = dist
        self.inp = inp
        self.out = out
        self.handshaken = False

    def _next_request(self) -> dict[str, Any]:
        req: dict[str, Any] | None = None
        if self.dist.is_main:
            assert self.inp is not None
            try:
                msg = read_frame(self.inp)
            except FrameError as e:
                log.error("%s", e)
                msg = {"method": _BAD_FRAME, "error": str(e)}
            if msg is None:
                msg = {"method": _EOF}
            req = msg if isinstance(msg, dict) else {"method": None, "id": 0}
        return self.dist.broadcast_object(req)

    def _reply(self, body: dict[str, Any]) -> None:
        if self.dist.is_main:
            assert self.out is not None
            write_frame(self.out, body)

    def serve(self) -> int:
        while True:
            req = self._next_request()
            method = req.get("method")
            if method == _EOF:
                log.info("end of input: exiting")
                return 0
            if method == _BAD_FRAME:
                return 2  # the stream is unusable: nothing can be answered
            rid = req.get("id", 0)
            params = req.get("params", {})
            result: Any = None
            error: tuple[str, str] | None = None
            try:
                if not isinstance(method, str):
                    raise invalid("request needs a string 'method'")
                if method != "handshake" and not self.handshaken:
                    raise invalid("the first request must be handshake")
                result = self.trainer.handle_request(method, params if params is not None else {})
                if method == "handshake":
                    self.handshaken = True
            except BaseException as e:  # noqa: BLE001 - every failure becomes an error response
                if isinstance(e, (KeyboardInterrupt, SystemExit)):
                    raise
                error = _classify(e)
                if error[0] == INTERNAL:
                    log.error("%s failed:\n%s", method, traceback.format_exc())
                else:
                    log.info("%s: %s: %s", method, error[0], error[1])
            if self.dist.distributed:
                errors = self.dist.all_gather_object(error)
                error = next((e for e in errors if e is not None), None)
                if error is not None and errors.index(error) != 0:
                    error = (error[0], f"rank {errors.index(error)}: {error[1]}")
            if error is not None:
                self._reply({"id": rid, "error": {"code": error[0], "message": error[1]}})
            else:
                self._reply({"id": rid, "result": result if result is not None else {}})
                if method == "shutdown":
                    return 0
