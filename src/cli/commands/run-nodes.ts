// `arl run` on a machine of a multi-node plan: which rendezvous it joins (flags, else the
// cluster's environment), and what a machine other than node 0 does: it starts its share of the
// trainer processes, which join node 0's through the rendezvous, and waits for them. The runtime,
// the environments and the run directory live on node 0 only.
import { spawn } from "node:child_process";
import type { Plan } from "../../plan/schema.js";
import { resolveRendezvous, RendezvousError, type Rendezvous } from "../../trainer/rendezvous.js";
import { trainerCommand, TrainerUnavailable } from "../../trainer/launch.js";
import { ExitCode, UsageError, type CliIO } from "../io.js";

export interface RendezvousOptions {
  readonly "node-rank"?: string | undefined;
  readonly "rdzv-endpoint"?: string | undefined;
  readonly "rdzv-id"?: string | undefined;
}

/**
 * The rendezvous of `plan` on this machine; undefined when the plan runs on one machine, the
 * trainer is the user's own command, or nothing names one (then a plan on several nodes is
 * refused: planRefusals with rendezvous false).
 */
export function planRendezvous(
  plan: Plan,
  flags: RendezvousOptions,
  io: CliIO,
  ownTrainer: boolean,
): Rendezvous | undefined {
  const update = plan.stages.update;
  if (!ownTrainer || update.launcher !== "torchrun") {
    if (flags["node-rank"] !== undefined || flags["rdzv-endpoint"] !== undefined) {
      throw new UsageError(
        `--node-rank and --rdzv-endpoint start the plan's torchrun trainer on several machines; ${ownTrainer ? `${plan.experiment}/${plan.variant} does not run under torchrun (resources.backend torch with nodes above 1)` : "--trainer-command names the trainer instead"}`,
      );
    }
    return undefined;
  }
  try {
    return resolveRendezvous(
      update.nodes,
      { nodeRank: flags["node-rank"], endpoint: flags["rdzv-endpoint"], id: flags["rdzv-id"] },
      io.env,
      `arl-${plan.hash.slice(7, 19)}`,
    );
  } catch (error) {
    if (error instanceof RendezvousError) throw new UsageError(error.message);
    throw error;
  }
}

/** The log line that says which node this is and where it meets the others. */
export function nodeLine(plan: Plan, r: Rendezvous): string {
  const per = plan.stages.update.processes_per_node;
  return `node ${r.nodeRank} of ${r.nodes} (rendezvous ${r.endpoint}, id ${r.id}, from ${r.source}): ${per} trainer process${per === 1 ? "" : "es"} on this machine`;
}

/**
 * Node R > 0: the trainer workers of each plan in turn, no runtime. Their stderr is this
 * command's; their stdout stays empty (only rank 0, on node 0, speaks the protocol).
 */
export async function runWorkerNode(
  jobs: readonly { plan: Plan; rendezvous: Rendezvous }[],
  io: CliIO,
): Promise<number> {
  for (const { plan, rendezvous } of jobs) {
    let command;
    try {
      command = trainerCommand(plan, undefined, rendezvous);
    } catch (error) {
      if (!(error instanceof TrainerUnavailable)) throw error;
      io.stderr(`arl run: ${error.message}\n`);
      return ExitCode.errors;
    }
    io.stdout(`run ${plan.experiment}/${plan.variant} (${plan.hash.slice(7, 19)}): ${nodeLine(plan, rendezvous)}\n`);
    io.stdout(
      `arl run: this machine only runs trainer workers; the runtime and the run directory are on node 0. Waiting for the trainer to finish (node 0 ends it).\n`,
    );
    const code = await new Promise<number>((resolve) => {
      const child = spawn(command.file, [...command.args], {
        env: { ...process.env, ...command.env },
        stdio: ["ignore", "ignore", "pipe"],
      });
      child.stderr.setEncoding("utf8");
      child.stderr.on("data", (text: string) => io.stderr(text));
      child.on("error", (error) => {
        io.stderr(`arl run: cannot start the trainer workers (${command.file}): ${error.message}\n`);
        resolve(ExitCode.errors);
      });
      child.on("close", (status, signal) => resolve(status ?? (signal ? 128 : ExitCode.errors)));
    });
    if (code !== 0) {
      io.stderr(`arl run: the trainer workers of node ${rendezvous.nodeRank} exited with status ${code}\n`);
      return ExitCode.errors;
    }
    io.stdout(`node ${rendezvous.nodeRank}: the trainer workers of ${plan.experiment}/${plan.variant} finished\n`);
  }
  return ExitCode.ok;
}
