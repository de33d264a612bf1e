"""`python3 -m arl_trainer`: serve the trainer protocol on stdin/stdout.

stdout carries frames only. Before anything else is imported, the real stdout is duplicated to a
private descriptor for frames and file descriptor 1 is pointed at stderr, so that stray prints
(ours, a library's, or C code's) end up in the log instead of corrupting the stream.
"""
from __future__ import annotations

import argparse
import logging
import os
import sys

from . import MIN_TORCH, __version__

INSTALL_HINT = "install PyTorch: pip install -r runtime-gpu/requirements.txt (npm test makes .venv with it)"


def _claim_stdout():
    """Returns a binary stream on the original stdout; fd 1 and sys.stdout now go to stderr."""
    sys.stdout.flush()
    frames_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return os.fdopen(frames_fd, "wb", buffering=0)


def _check_torch() -> str | None:
    """An error message when torch is missing or too old, else None."""
    try:
        import torch
    except Exception as e:  # ImportError, or a broken installation
        return f"arl_trainer: PyTorch is not available ({type(e).__name__}: {e}); {INSTALL_HINT}"
    try:
        parts = torch.__version__.split("+")[0].split(".")
        version = (int(parts[0]), int("".join(c for c in parts[1] if c.isdigit()) or 0))
    except (ValueError, IndexError):
        return None
    if version < MIN_TORCH:
        want = ".".join(map(str, MIN_TORCH))
        return f"arl_trainer: PyTorch {torch.__version__} is too old (need >= {want}); {INSTALL_HINT}"
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m arl_trainer", description="arl trainer process (trainer protocol v1 on stdin/stdout)")
    parser.add_argument("--device", choices=["auto", "cpu", "cuda"], default=None, help="where to train (default: cuda when available; env ARL_TRAINER_DEVICE)")
    parser.add_argument("--log-level", default=os.environ.get("ARL_TRAINER_LOG", "INFO"), help="stderr log level (default INFO)")
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads")
    parser.add_argument("--version", action="store_true", help="print the version on stderr and exit")
    args = parser.parse_args(argv)

    frames_out = _claim_stdout()
    try:  # `kill -USR1 PID` dumps every thread's stack to stderr (diagnosing a hang)
        import faulthandler
        import signal

        faulthandler.register(signal.SIGUSR1, file=sys.stderr, all_threads=True)
    except (ImportError, AttributeError, ValueError):
        pass
    rank = os.environ.get("RANK", "0")
    logging.basicConfig(stream=sys.stderr, level=args.log_level.upper(), format=f"arl_trainer[{rank}] %(levelname)s: %(message)s")
    if args.version:
        print(f"arl_trainer {__version__}", file=sys.stderr)
        return 0
    problem = _check_torch()
    if problem:
        print(problem, file=sys.stderr)
        return 2

    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    from .distributed import init_from_env

    try:
        from .server import Server
        from .trainer import Trainer
    except ImportError as e:
        if e.name != "jsonschema":
            raise
        print(f"arl_trainer: {e}", file=sys.stderr)
        return 2

    dist = init_from_env(args.device)
    trainer = Trainer(dist)
    stdin = sys.stdin.buffer if dist.is_main else None
    try:
        code = Server(trainer, dist, stdin, frames_out if dist.is_main else None).serve()
    except BrokenPipeError:
        logging.getLogger("arl_trainer").error("the runtime closed the pipe")
        code = 1
    if dist.distributed:
        # Rank 0 hosts the rendezvous store: everyone leaves together, and nobody runs the process
        # group's destructors at interpreter exit (they can block on a store that is gone).
        import torch.distributed as tdist

        try:
            dist.barrier()
            tdist.destroy_process_group()
        except Exception:  # noqa: BLE001 - exiting anyway
            pass
        sys.stderr.flush()
        frames_out.flush()
        os._exit(code)
    return code


if __name__ == "__main__":
    sys.exit(main())
