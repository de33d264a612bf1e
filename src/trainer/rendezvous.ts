// Where the machines of a multi-node trainer meet: node 0's HOST:PORT (torchrun's rendezvous
// store, which node 0 hosts), this machine's node rank, and the rendezvous id. Taken from `arl run`'s flags, else from what a
// cluster sets in the environment (SLURM; Ray, through arl submit's launcher runtime-gpu/ray_nodes.py;
// torchrun-style MASTER_ADDR/MASTER_PORT/NODE_RANK).

export interface Rendezvous {
  /** This machine's node: 0 runs the runtime and serves the protocol; others only run trainer workers. */
  readonly nodeRank: number;
  readonly nodes: number;
  /** HOST:PORT of node 0, where torchrun's rendezvous store listens (the static rendezvous). */
  readonly endpoint: string;
  /** torchrun's --rdzv_id: the nodes of one job give the same id. */
  readonly id: string;
  /** Where it came from, for the log line (flags, SLURM, environment). */
  readonly source: string;
}

export interface RendezvousFlags {
  readonly nodeRank?: string;
  readonly endpoint?: string;
  readonly id?: string;
}

export class RendezvousError extends Error {}

/** torchrun's default master port. */
const DEFAULT_PORT = 29500;

/**
 * The rendezvous of a plan on `nodes` machines, or undefined when nothing names one (then a plan
 * on several nodes cannot run). Flags win over the environment, SLURM over MASTER_ADDR. `defaultId`
 * (derived from the plan's hash) keeps machines started on different plans from joining each other.
 */
export function resolveRendezvous(
  nodes: number,
  flags: RendezvousFlags,
  env: Readonly<Record<string, string | undefined>>,
  defaultId: string,
): Rendezvous | undefined {
  const given = flags.nodeRank !== undefined || flags.endpoint !== undefined;
  if (given) {
    if (flags.nodeRank === undefined || flags.endpoint === undefined)
      throw new RendezvousError(
        "--node-rank and --rdzv-endpoint go together: give both (every machine the same --rdzv-endpoint HOST:PORT, each its own --node-rank)",
      );
    return checked(
      nodes,
      flags.nodeRank,
      flags.endpoint,
      flags.id ?? env.SLURM_JOB_ID ?? defaultId,
      "flags",
      "--node-rank",
      "--rdzv-endpoint",
    );
  }
  if (nodes <= 1) return undefined;
  if (env.SLURM_NODEID !== undefined && env.SLURM_JOB_NODELIST !== undefined) {
    if (env.SLURM_NNODES !== undefined && Number(env.SLURM_NNODES) !== nodes) {
      throw new RendezvousError(
        `the SLURM job has ${env.SLURM_NNODES} nodes (SLURM_NNODES) but the plan's resources.nodes is ${nodes}; allocate ${nodes} nodes (sbatch --nodes ${nodes}) or change resources.nodes`,
      );
    }
    const host = env.MASTER_ADDR ?? firstHost(env.SLURM_JOB_NODELIST);
    return checked(
      nodes,
      env.SLURM_NODEID,
      `${host}:${env.MASTER_PORT ?? DEFAULT_PORT}`,
      flags.id ?? (env.SLURM_JOB_ID ? `slurm-${env.SLURM_JOB_ID}` : defaultId),
      "SLURM",
      "SLURM_NODEID",
      "MASTER_ADDR/SLURM_JOB_NODELIST",
    );
  }
  // Ray sets no rank of its own: arl submit's launcher (runtime-gpu/ray_nodes.py) starts one arl run per node of its placement group with these.
  if (env.ARL_RAY_NODE_RANK !== undefined) {
    if (env.ARL_RAY_NNODES !== undefined && Number(env.ARL_RAY_NNODES) !== nodes) {
      throw new RendezvousError(
        `the Ray job has ${env.ARL_RAY_NNODES} nodes (ARL_RAY_NNODES) but the plan's resources.nodes is ${nodes}; submit the plan again with arl submit --scheduler ray, which reserves resources.nodes nodes`,
      );
    }
    if (env.MASTER_ADDR === undefined)
      throw new RendezvousError(
        "ARL_RAY_NODE_RANK is set but MASTER_ADDR is not: the Ray launcher (runtime-gpu/ray_nodes.py) sets both, node 0's address in MASTER_ADDR",
      );
    return checked(
      nodes,
      env.ARL_RAY_NODE_RANK,
      `${env.MASTER_ADDR}:${env.MASTER_PORT ?? DEFAULT_PORT}`,
      flags.id ?? (env.ARL_RAY_JOB_ID ? `ray-${env.ARL_RAY_JOB_ID}` : defaultId),
      "Ray",
      "ARL_RAY_NODE_RANK",
      "MASTER_ADDR/MASTER_PORT",
    );
  }
  if (env.MASTER_ADDR !== undefined && env.NODE_RANK !== undefined) {
    return checked(
      nodes,
      env.NODE_RANK,
      `${env.MASTER_ADDR}:${env.MASTER_PORT ?? DEFAULT_PORT}`,
      flags.id ?? defaultId,
      "environment",
      "NODE_RANK",
      "MASTER_ADDR/MASTER_PORT",
    );
  }
  return undefined;
}

function checked(
  nodes: number,
  rankText: string,
  endpoint: string,
  id: string,
  source: string,
  rankName: string,
  endpointName: string,
): Rendezvous {
  const nodeRank = Number(rankText);
  if (nodes <= 1)
    throw new RendezvousError(
      `${rankName} names a rendezvous, but the plan's resources.nodes is 1: leave the rendezvous out, or raise resources.nodes`,
    );
  if (!Number.isInteger(nodeRank) || nodeRank < 0 || nodeRank >= nodes) {
    throw new RendezvousError(
      `${rankName} must be a whole number from 0 to ${nodes - 1} (the plan has resources.nodes ${nodes}), not '${rankText}'`,
    );
  }
  const match = /^(\[[0-9a-fA-F:]+\]|[^\s:[\]]+):(\d+)$/.exec(endpoint);
  const port = match ? Number(match[2]) : NaN;
  if (!match || !(port >= 1 && port <= 65535)) {
    throw new RendezvousError(
      `${endpointName} must be HOST:PORT with a port from 1 to 65535 (e.g. node001:${DEFAULT_PORT}), not '${endpoint}'`,
    );
  }
  if (!/^[A-Za-z0-9_.-]{1,128}$/.test(id))
    throw new RendezvousError(`the rendezvous id must be 1 to 128 letters, digits, '.', '_' or '-', not '${id}'`);
  return { nodeRank, nodes, endpoint, id, source };
}

/**
 * The first host of a SLURM hostlist: "gpu[007-009,012],login1" is gpu007. SLURM puts the batch
 * script on that node (node 0), where `arl run` starts the runtime.
 */
export function firstHost(nodelist: string): string {
  const first = /^([^,[]*)(?:\[([^\]]*)\])?([^,]*)/.exec(nodelist.trim());
  if (!first || first[1] === undefined || (first[1] === "" && first[2] === undefined))
    throw new RendezvousError(`SLURM_JOB_NODELIST '${nodelist}' names no host; set MASTER_ADDR to node 0's address`);
  const range = first[2]?.split(",")[0]?.split("-")[0] ?? "";
  return `${first[1]}${range}${first[2] !== undefined ? (first[3] ?? "") : ""}`;
}
