"""One `arl run` per node for a plan on several nodes, as the entrypoint of its Ray job.

`arl submit --scheduler ray` makes this the entrypoint of a plan with resources.nodes above 1
(docs/distributed.md, "Sweeps on a Ray cluster"): it reserves one bundle per node (the node's
GPUs and CPUs) in a STRICT_SPREAD placement group, starts an actor in each bundle, and has each
actor run `arl run` on its node: node 0 resumes the run directory, the others start trainer
workers from its plan.json. The rendezvous is in their environment, which
src/trainer/rendezvous.ts reads as Ray's: ARL_RAY_NODE_RANK, ARL_RAY_NNODES (the world size in
nodes), MASTER_ADDR and MASTER_PORT (node 0's address and a port free on it), ARL_RAY_JOB_ID (the
rendezvous id). One node that fails ends the others (srun --kill-on-bad-exit's behaviour); the
job's stop (SIGTERM) reaches every node's `arl run`, which keeps what it committed.

Run with the Python that runs Ray on the cluster. Not verified on a cluster of several nodes.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import signal
import socket
import subprocess
import sys

import ray
from ray.util.placement_group import placement_group, remove_placement_group
from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    # The actor's worker may be killed (its job stopped, its node lost): its arl run goes with it.
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


@ray.remote(num_cpus=0)
class Node:
    """One node's `arl run`, in its bundle (CUDA_VISIBLE_DEVICES is the bundle's GPUs)."""

    def __init__(self) -> None:
        self.process: subprocess.Popen[bytes] | None = None

    def address(self) -> tuple[str, int]:
        with socket.socket() as s:
            s.bind(("", 0))
            return ray.util.get_node_ip_address(), s.getsockname()[1]

    def run(self, argv: list[str], env: dict[str, str]) -> int:
        self.process = subprocess.Popen(argv, env={**os.environ, **env}, preexec_fn=_die_with_parent)
        return self.process.wait()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--nodes", type=int, required=True)
    parser.add_argument("--gpus-per-node", type=float, default=0)
    parser.add_argument("--cpus-per-node", type=float, default=1)
    parser.add_argument("--job", required=True, help="the Ray job's submission id: the rendezvous id")
    parser.add_argument("--run", required=True, help="the run directory node 0 resumes")
    parser.add_argument("arl", nargs=argparse.REMAINDER, help="-- then the command that is `arl run` on the nodes")
    args = parser.parse_args()
    arl = args.arl[1:] if args.arl[:1] == ["--"] else args.arl

    ray.init(address="auto")
    bundle = {"CPU": args.cpus_per_node, **({"GPU": args.gpus_per_node} if args.gpus_per_node > 0 else {})}
    # ARL_RAY_PLACEMENT=PACK puts every bundle on one node: for trying the launcher on one machine.
    strategy = os.environ.get("ARL_RAY_PLACEMENT", "STRICT_SPREAD")
    group = placement_group([bundle] * args.nodes, strategy=strategy)
    ray.get(group.ready())
    nodes = [
        Node.options(
            num_cpus=args.cpus_per_node,
            num_gpus=args.gpus_per_node,
            scheduling_strategy=PlacementGroupSchedulingStrategy(placement_group=group, placement_group_bundle_index=i),
        ).remote()
        for i in range(args.nodes)
    ]
    host, port = ray.get(nodes[0].address.remote())

    def stop(*_: object) -> None:
        ray.get([n.stop.remote() for n in nodes])

    signal.signal(signal.SIGTERM, lambda *_: (stop(), sys.exit(143)))
    base = {"MASTER_ADDR": host, "MASTER_PORT": str(port), "ARL_RAY_NNODES": str(args.nodes), "ARL_RAY_JOB_ID": args.job}
    print(f"arl ray_nodes: {args.nodes} nodes, rendezvous {host}:{port}, placement {strategy}", flush=True)
    runs = {
        n.run.remote([*arl, "--resume", args.run] if rank == 0 else [*arl, os.path.join(args.run, "plan.json")], {**base, "ARL_RAY_NODE_RANK": str(rank)}): rank
        for rank, n in enumerate(nodes)
    }
    status = 0
    pending = list(runs)
    while pending:
        done, pending = ray.wait(pending, num_returns=1)
        code = ray.get(done[0])
        if code != 0 and status == 0:
            # One node failed: end the others, as srun --kill-on-bad-exit does; node 0's status wins below.
            print(f"arl ray_nodes: node {runs[done[0]]} exited with {code}; stopping the others", flush=True)
            status = code
            stop()
        if runs[done[0]] == 0:
            status = code or status
    remove_placement_group(group)
    return status


if __name__ == "__main__":
    sys.exit(main())
