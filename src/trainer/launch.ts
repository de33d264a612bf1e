// Which process serves a plan's trainer: the embedded CPU trainer for `backend: local`, the
// PyTorch trainer from runtime-gpu/ for `backend: torch` (under torchrun when the plan's update
// stage needs several processes), or a command the user names (any program speaking the
// trainer protocol).
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { Method } from "../contracts/trainer-protocol.js";
import type { Plan } from "../plan/schema.js";
import type { TrainerCommand } from "./protocol/client.js";
import { at } from "../contracts/checked.js";
import { pythonCandidates } from "../contracts/python.js";
import type { Rendezvous } from "./rendezvous.js";

const packageRoot = fileURLToPath(new URL("../../", import.meta.url));

export class TrainerUnavailable extends Error {}

/**
 * The trainer's command. A plan on several nodes needs `rendezvous` (this machine's node rank and
 * where the nodes meet): every node runs torchrun with the same endpoint and its own node rank.
 */
export function trainerCommand(plan: Plan, override?: readonly string[], rendezvous?: Rendezvous): TrainerCommand {
  if (override && override.length > 0) return { file: at(override, 0), args: override.slice(1) };
  const update = plan.stages.update;
  if (update.backend === "local") {
    const embedded = fileURLToPath(new URL("./embedded/main.js", import.meta.url));
    if (!existsSync(embedded)) {
      throw new TrainerUnavailable(
        `the embedded CPU trainer (backend local) is not built (${embedded} is missing); run 'npm run build', or name a trainer with --trainer-command`,
      );
    }
    return { file: process.execPath, args: [embedded] };
  }
  const env = { PYTHONPATH: [`${packageRoot}runtime-gpu`, process.env.PYTHONPATH].filter(Boolean).join(":") };
  if (update.launcher === "torchrun") {
    // torchrun is torch.distributed.run: started through the same Python, so it is the same torch.
    const nproc = `--nproc_per_node=${update.processes_per_node}`;
    if (update.nodes <= 1)
      return {
        file: pythonWithTorch(),
        args: ["-m", "torch.distributed.run", "--nnodes=1", nproc, "-m", "arl_trainer"],
        env,
      };
    if (!rendezvous) {
      throw new TrainerUnavailable(
        `resources.nodes is ${update.nodes}: the trainer's machines need a rendezvous; give arl run --node-rank R --rdzv-endpoint HOST:PORT on every machine, or run it under SLURM (srun), which sets SLURM_NODEID and SLURM_JOB_NODELIST`,
      );
    }
    // The static rendezvous, not c10d: c10d ignores --node_rank and orders the nodes itself, but
    // global rank 0 (the rank that serves the protocol) must be on node 0, whose trainer has the
    // runtime's pipes. The endpoint is node 0's address; ARL_NODE_RANK lets the trainer check.
    const rdzv = [
      `--nnodes=${update.nodes}`,
      `--node_rank=${rendezvous.nodeRank}`,
      "--rdzv_backend=static",
      `--rdzv_endpoint=${rendezvous.endpoint}`,
      `--rdzv_id=${rendezvous.id}`,
    ];
    return {
      file: pythonWithTorch(),
      args: ["-m", "torch.distributed.run", ...rdzv, nproc, "-m", "arl_trainer"],
      env: { ...env, ARL_NODE_RANK: String(rendezvous.nodeRank) },
      pool: { file: pythonWithTorch(), args: ["-m", "arl_trainer"], env },
    };
  }
  return { file: pythonWithTorch(), args: ["-m", "arl_trainer"], env };
}

/** Requests that load or write a whole model (a large checkpoint from a slow disk). */
const MODEL_METHODS: ReadonlySet<Method> = new Set<Method>([
  "handshake",
  "configure",
  "load",
  "save",
  "saved",
  "shutdown",
]);
const MODEL_DEADLINE_S = 900;
const REQUEST_DEADLINE_S = 300;
/** Added per sequence of the plan's training batch: a batch request's work grows with it. */
const PER_SEQUENCE_S = 1;

/**
 * How long a trainer request may take before the trainer is declared dead, in milliseconds:
 * generous defaults derived from the plan (model loads and saves 15 minutes; any other request
 * 5 minutes plus a second per sequence of the training batch), or `timeoutS` for every request
 * (`arl run --trainer-timeout`; a run option, not part of the plan or its hash).
 */
export function trainerDeadlines(plan: Plan, timeoutS?: number): (method: Method) => number {
  if (timeoutS !== undefined) return () => timeoutS * 1000;
  const sequences = plan.rollout.tasks_per_batch * plan.algorithm.group_size;
  const request = (REQUEST_DEADLINE_S + PER_SEQUENCE_S * sequences) * 1000;
  return (method) => (MODEL_METHODS.has(method) ? Math.max(MODEL_DEADLINE_S * 1000, request) : request);
}

let python: string | undefined;

/**
 * The first Python that can import torch: $ARL_PYTHON, then the repository's .venv (what
 * `npm test` and the README's set-up install from runtime-gpu/requirements.txt), then `python3`
 * on the PATH, then the system's /usr/bin/python3. When none can, `python3`: the trainer itself
 * then explains how to install PyTorch.
 */
export function pythonWithTorch(): string {
  if (python) return python;
  const candidates = pythonCandidates();
  python =
    candidates.find((c) => spawnSync(c, ["-c", "import torch"], { stdio: "ignore", timeout: 60_000 }).status === 0) ??
    candidates[0] ??
    "python3";
  return python;
}
