// The generation replica (rollout.async.generation: replica, docs/semantics.md §7): a second
// process of the trainer's own command, configured like the trainer, that generates the training
// batches from its behaviour slot while the trainer trains. A trainer answers one request at a
// time, so without it no episode can generate during a train step; with it, generation and the
// update run side by side (on another core, or another device).
//
// The replica is given the trainer's weights wherever the trainer takes its behaviour snapshot:
// the trainer saves its policy alone (save's policy_only) into RUN/replica/, the replica loads
// them and snapshots them into its behaviour slot. The replica answers in request order, so the
// load falls between two of its generate requests: an episode in flight continues with the new
// weights at its next request (in-flight updates), and each token's version is the one the
// replica reports. Without in-flight updates every batch started from the previous snapshot has
// been trained before the next one is taken, so each batch is sampled by one snapshot as before.
// On resume the replica loads the committed checkpoint, whose behaviour slot is the snapshot the
// batches in flight were started from.
import { availableParallelism } from "node:os";
import path from "node:path";
import type { Plan } from "../../plan/schema.js";
import { TrainerClient, TrainerError, type TrainerCommand } from "../../trainer/protocol/client.js";
import { TrainerPolicy } from "../../episode/policy.js";

/**
 * The trainer's command with half this machine's CPU threads when a replica shares the machine:
 * two processes that each spin a thread per core (PyTorch's OpenMP pool) slow each other's steps
 * many times over. A thread count the user set (OMP_NUM_THREADS) is kept; a trainer on one thread
 * (the embedded one) is not changed by it. Like any run's thread count it is outside the plan: it
 * can move the last bits of a float sum, not what the plan means.
 */
export function shareCpuThreads(plan: Plan, command: TrainerCommand): TrainerCommand {
  if (
    !GenerationReplica.wanted(plan) ||
    process.env.OMP_NUM_THREADS !== undefined ||
    command.env?.OMP_NUM_THREADS !== undefined
  )
    return command;
  return {
    ...command,
    env: { ...command.env, OMP_NUM_THREADS: String(Math.max(1, Math.floor(availableParallelism() / 2))) },
  };
}

export class GenerationReplica {
  /** The replica's load of the latest snapshot, until it has answered, and of the one before. */
  private syncing: Promise<void> = Promise.resolve();
  private previous: Promise<void> = Promise.resolve();
  private syncs = 0;
  /** What generates the training batches: the replica's behaviour slot. */
  readonly policy: TrainerPolicy;

  private constructor(
    readonly client: TrainerClient,
    private readonly syncDir: string,
  ) {
    this.policy = new TrainerPolicy(client, "behaviour");
  }

  /** Whether the plan asks for a replica. */
  static wanted(plan: Plan): boolean {
    return plan.rollout.async?.generation === "replica";
  }

  /**
   * Starts and configures the replica (`configure`: the trainer's own configure, so that its
   * tokenizer, shape and vocabulary are the trainer's), loading `checkpoint` when the run resumes.
   * Nothing is left running when this fails.
   */
  static async start(
    command: TrainerCommand,
    runtimeVersion: string,
    runDir: string,
    configure: (client: TrainerClient) => Promise<unknown>,
    checkpoint: string | null,
    halt?: AbortSignal,
  ): Promise<GenerationReplica> {
    const client = await TrainerClient.start(command, runtimeVersion, halt).catch(
      (e: Error & { stderrTail?: string[] }) => {
        throw new TrainerError(
          `could not start the generation replica (rollout.async.generation: replica): ${e.message}`,
          "died",
          e.stderrTail ?? [],
        );
      },
    );
    try {
      await configure(client);
      if (checkpoint) await client.request("load", { path: checkpoint });
    } catch (error) {
      await client.kill();
      const e = error as TrainerError;
      throw new TrainerError(`the generation replica: ${e.message}`, e.code ?? "died", e.stderrTail ?? []);
    }
    return new GenerationReplica(client, path.join(runDir, "replica"));
  }

  /**
   * Hands the replica the trainer's current weights (the snapshot just taken). The trainer's save
   * is awaited, since the trainer's next request changes the weights. The replica's load and
   * snapshot are sent together, so no generate request falls between them, and queued behind the
   * generate requests already sent; they are awaited at a later sync or at `settle`. Syncs write
   * two folders in turn, so the trainer never rewrites the one the replica may still be reading.
   */
  async sync(trainer: TrainerClient): Promise<void> {
    const dir = path.join(this.syncDir, String(this.syncs++ % 2));
    await this.previous;
    await trainer.request("save", { path: dir, policy_only: true });
    const loaded = this.client.request("load", { path: dir });
    const snapshot = this.client.request("snapshot", {});
    this.previous = this.syncing;
    this.syncing = Promise.all([loaded, snapshot]).then(() => undefined);
    // Awaited later; until then a failure must not count as unhandled.
    this.syncing.catch(() => undefined);
  }

  /** Waits for the last sync to be loaded; rethrows its failure. */
  settle(): Promise<void> {
    return this.syncing;
  }

  shutdown(): Promise<void> {
    return this.client.shutdown();
  }

  kill(): Promise<void> {
    return this.client.kill();
  }
}
