"""Running under torchrun: process groups, request broadcast, data-parallel wrapping.

Layout. Every rank starts `python3 -m arl_trainer`. Rank 0 alone reads requests from stdin and
writes responses to stdout; it broadcasts each request to the other ranks over a gloo "control"
group (pickled objects, CPU), every rank executes it, and the ranks' error states are gathered so
that rank 0 can report a failure on any rank. On several machines rank 0 must be local rank 0 of
node 0, whose stdin and stdout are the runtime's pipes: `arl run` starts torchrun with the static
rendezvous (--node_rank fixes the global ranks; c10d orders the nodes its own way) and tells each
node its rank in ARL_NODE_RANK, which `init_from_env` checks. Training collectives use the default group (nccl on
CUDA, gloo on CPU).

Exactness across ranks. The runtime sends the denominators of the whole optimizer step (global
token, sequence and group counts), so each rank's loss is its exact share of the whole-batch loss:
sum over its target tokens of w_i * term (losses.py). The whole-batch gradient is then the SUM of
the ranks' gradients, not their average. So:
  * DDP (torch < 2.4, or on CPU): a communication hook all-reduces gradient buckets with SUM and
    no division by the world size (`_sum_hook`).
  * FSDP2 `fully_shard` (torch >= 2.4 on CUDA): its reduce-scatter averages; the loss is multiplied
    by the world size before backward (`Dist.grad_scale`), which turns that average into the sum.
Scalar statistics (loss parts, token counts, ratio min/max) are all-reduced in float64.
Sequences are assigned to ranks by a deterministic greedy balance of their lengths; a rank with
fewer sequences than microbatches runs zero-weighted dummy microbatches so that every rank makes
the same collective calls.
"""
from __future__ import annotations

import contextlib
import datetime
import logging
import os
from collections.abc import Iterator
from typing import Any

import numpy as np
import torch
import torch.nn as nn

log = logging.getLogger("arl_trainer")


def torch_version() -> tuple[int, int]:
    parts = torch.__version__.split("+")[0].split(".")
    return int(parts[0]), int("".join(ch for ch in parts[1] if ch.isdigit()) or 0)


def _fully_shard():
    """fully_shard (FSDP2) where this torch has it (2.4+), else None."""
    if torch_version() < (2, 4):
        return None
    try:
        from torch.distributed.fsdp import fully_shard  # torch >= 2.6

        return fully_shard
    except ImportError:
        pass
    try:
        from torch.distributed._composable.fsdp import fully_shard  # torch 2.4, 2.5

        return fully_shard
    except ImportError:
        return None


def _sum_hook(process_group, bucket):  # no annotations: DDP checks them (and this module's are strings)
    """DDP communication hook: all-reduce SUM, no division by the world size."""
    import torch.distributed as dist

    tensor = bucket.buffer() if hasattr(bucket, "buffer") else bucket.get_tensor()
    fut = dist.all_reduce(tensor, group=process_group, async_op=True).get_future()
    return fut.then(lambda f: f.value()[0])


class Dist:
    """World of one or more ranks. With world_size 1 every collective is a no-op."""

    def __init__(
        self, world_size: int = 1, rank: int = 0, local_rank: int = 0, device: torch.device | None = None, ctrl_group: Any = None, strategy: str = "none"
    ) -> None:
        self.world_size = world_size
        self.rank = rank
        self.local_rank = local_rank
        self.device = device or torch.device("cpu")
        self.ctrl = ctrl_group
        self.strategy = strategy  # none | ddp | fsdp

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    @property
    def distributed(self) -> bool:
        return self.world_size > 1

    @property
    def grad_scale(self) -> float:
        return float(self.world_size) if self.strategy == "fsdp" else 1.0

    @property
    def all_ranks_infer(self) -> bool:
        """Whether inference (generate, logprobs, values) must run on every rank (sharded params)."""
        return self.strategy == "fsdp"

    # --- control plane ---------------------------------------------------------------------
    def broadcast_object(self, obj: Any) -> Any:
        if not self.distributed:
            return obj
        import torch.distributed as dist

        box = [obj]
        dist.broadcast_object_list(box, src=0, group=self.ctrl)
        return box[0]

    def all_gather_object(self, obj: Any) -> list[Any]:
        if not self.distributed:
            return [obj]
        import torch.distributed as dist

        out: list[Any] = [None] * self.world_size
        dist.all_gather_object(out, obj, group=self.ctrl)
        return out

    def barrier(self) -> None:
        if self.distributed:
            import torch.distributed as dist

            dist.barrier(group=self.ctrl)

    def all_reduce(self, values: np.ndarray, op: str = "sum") -> np.ndarray:
        """float64 all-reduce of a small vector (statistics), over the control group."""
        if not self.distributed:
            return values
        import torch.distributed as dist

        t = torch.as_tensor(np.asarray(values, dtype=np.float64)).clone()
        dist.all_reduce(t, op={"sum": dist.ReduceOp.SUM, "min": dist.ReduceOp.MIN, "max": dist.ReduceOp.MAX}[op], group=self.ctrl)
        return t.numpy()

    # --- data plane ------------------------------------------------------------------------
    def shard(self, lengths: np.ndarray) -> list[int]:
        """Sequence indices of this rank: longest first to the least-loaded rank (ties: lowest rank),
        returned in ascending order. Deterministic, identical on every rank."""
        if not self.distributed:
            return list(range(len(lengths)))
        load = [0] * self.world_size
        mine: list[int] = []
        for i in sorted(range(len(lengths)), key=lambda j: (-int(lengths[j]), j)):
            r = min(range(self.world_size), key=lambda q: (load[q], q))
            load[r] += int(lengths[i]) + 1
            if r == self.rank:
                mine.append(i)
        return sorted(mine)

    def wrap(self, module: nn.Module, layers: list[nn.Module] | None = None, trainable: bool = True) -> nn.Module:
        """Wraps a module for data-parallel training (returns the module to call for training)."""
        if self.strategy == "none":
            return module
        if self.strategy == "fsdp":
            fully_shard = _fully_shard()
            assert fully_shard is not None
            from torch.distributed.device_mesh import init_device_mesh

            mesh = init_device_mesh(self.device.type, (self.world_size,))
            for layer in layers or []:
                fully_shard(layer, mesh=mesh)
            fully_shard(module, mesh=mesh)
            return module
        if not trainable:
            return module
        import inspect

        from torch.nn.parallel import DistributedDataParallel as DDP

        # No buffer sync before each forward (the buffers, rotary tables, are the same on every
        # rank). torch 2.15 renamed broadcast_buffers to forward_sync_buffers (the old name warns).
        params = inspect.signature(DDP.__init__).parameters
        no_sync = {"forward_sync_buffers": False} if "forward_sync_buffers" in params else {"broadcast_buffers": False}
        ddp = DDP(module, device_ids=[self.device.index] if self.device.type == "cuda" else None, find_unused_parameters=False, **no_sync)
        ddp.register_comm_hook(None, _sum_hook)
        return ddp

    @contextlib.contextmanager
    def no_sync(self, *modules: nn.Module) -> Iterator[None]:
        """Skips the gradient all-reduce (DDP) for all but the last microbatch."""
        with contextlib.ExitStack() as stack:
            for m in modules:
                if hasattr(m, "no_sync") and callable(m.no_sync) and self.strategy == "ddp":
                    stack.enter_context(m.no_sync())
                elif self.strategy == "fsdp" and hasattr(m, "set_requires_gradient_sync"):
                    m.set_requires_gradient_sync(False)
                    stack.callback(m.set_requires_gradient_sync, True)
            yield


def choose_device(preference: str | None = None, local_rank: int = 0) -> torch.device:
    pref = (preference or os.environ.get("ARL_TRAINER_DEVICE") or "auto").lower()
    if pref == "cpu":
        return torch.device("cpu")
    if pref in ("auto", "cuda"):
        if torch.cuda.is_available():
            torch.cuda.set_device(local_rank % torch.cuda.device_count())
            return torch.device("cuda", local_rank % torch.cuda.device_count())
        if pref == "cuda":
            raise RuntimeError("device cuda was asked for, but torch.cuda.is_available() is False")
        return torch.device("cpu")
    raise ValueError(f"unknown device '{pref}' (auto, cpu, cuda)")


def choose_strategy(device: torch.device, world_size: int) -> str:
    want = os.environ.get("ARL_TRAINER_PARALLEL", "auto").lower()
    if world_size <= 1 and want != "fsdp":
        return "none"
    if want == "ddp":
        return "ddp"
    if want == "fsdp" or (want == "auto" and device.type == "cuda"):
        if _fully_shard() is not None:
            return "fsdp"
        if want == "fsdp":
            raise RuntimeError(f"FSDP2 fully_shard needs torch >= 2.4 (this is {torch.__version__})")
    return "ddp"


def init_from_env(device_preference: str | None = None) -> Dist:
    """Single process, or the torchrun world described by RANK/WORLD_SIZE/LOCAL_RANK. Under torchrun
    with ARL_TRAINER_PARALLEL=fsdp a world of one is sharded too (the FSDP2 path on one GPU)."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    fsdp_alone = world == 1 and "RANK" in os.environ and os.environ.get("ARL_TRAINER_PARALLEL", "").lower() == "fsdp"
    if world <= 1 and not fsdp_alone:
        return Dist(device=choose_device(device_preference))
    import torch.distributed as dist

    rank = int(os.environ["RANK"])
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    check_serving_rank(rank, local_rank, os.environ.get("ARL_NODE_RANK"))
    device = choose_device(device_preference, local_rank)
    backend = "nccl" if device.type == "cuda" else "gloo"
    timeout = datetime.timedelta(seconds=float(os.environ.get("ARL_TRAINER_TIMEOUT_S", "1800")))
    dist.init_process_group(backend=backend, timeout=timeout)
    ctrl = dist.new_group(backend="gloo", timeout=timeout) if backend != "gloo" else dist.group.WORLD
    strategy = choose_strategy(device, world)
    log.info("rank %d/%d on %s, backend %s, strategy %s", rank, world, device, backend, strategy)
    return Dist(world, rank, local_rank, device, ctrl, strategy)


def check_serving_rank(rank: int, local_rank: int, node_rank: str | None) -> None:
    """Local rank 0 of node 0 holds the runtime's pipes, so it must be the rank that serves (0)."""
    if node_rank is None or local_rank != 0:
        return
    on_node0 = int(node_rank) == 0
    if on_node0 != (rank == 0):
        raise RuntimeError(
            f"this process is local rank 0 of node {node_rank} but global rank {rank}: the protocol is served by rank 0, "
            "which must run on node 0 (the runtime's machine); start torchrun with --rdzv_backend static and --node_rank "
            "(arl run does), not a rendezvous that orders the nodes itself (c10d)"
        )


def init_for_test(rank: int, world_size: int, init_method: str, strategy: str = "ddp") -> Dist:
    """A gloo CPU world for tests (torch.multiprocessing.spawn)."""
    import torch.distributed as dist

    dist.init_process_group("gloo", init_method=init_method, rank=rank, world_size=world_size)
    return Dist(world_size, rank, rank, torch.device("cpu"), dist.group.WORLD, strategy)
