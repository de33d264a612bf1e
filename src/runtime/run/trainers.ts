// The processes of one run: the policy's trainer, its generation replica
// (rollout.async.generation: replica), the pool models' trainers once cross-policy sampling has
// started them, and the inference servers the runtime launched (engine vllm or sglang with
// launch: true). Whatever phase fails, every process that was started is stopped.
import type { TrainerClient } from "../../trainer/protocol/client.js";
import type { PoolTrainers } from "../../episode/cross-policy.js";
import type { LaunchedServers } from "../../inference/engine/launch.js";
import type { GenerationReplica } from "./replica.js";

export class RunTrainers {
  private poolTrainers: PoolTrainers | undefined;
  private engineServers: LaunchedServers | undefined;
  private generationReplica: GenerationReplica | undefined;

  constructor(readonly main: TrainerClient) {}

  get pool(): PoolTrainers | undefined {
    return this.poolTrainers;
  }

  /** Takes over the pool's trainers as soon as they run, so that a later failure stops them too. */
  adoptPool(pool: PoolTrainers): void {
    this.poolTrainers = pool;
  }

  get replica(): GenerationReplica | undefined {
    return this.generationReplica;
  }

  /** Takes over the generation replica as soon as it runs. */
  adoptReplica(replica: GenerationReplica): void {
    this.generationReplica = replica;
  }

  /** Takes over the launched inference servers as soon as they run. */
  adoptEngineServers(servers: LaunchedServers): void {
    this.engineServers = servers;
  }

  /** Kills every process at once (a failure, or the user stopping the run at once). */
  async kill(): Promise<void> {
    this.engineServers?.kill();
    await Promise.all([this.main.kill(), this.generationReplica?.kill(), this.poolTrainers?.kill()]);
  }

  /**
   * Orderly end of a run: the inference servers, the pool's trainers, the replica, then the policy's. Returns how the policy's
   * trainer ended, for the run log: a Ctrl-C must have reached the runtime alone.
   */
  async shutdown(): Promise<string> {
    await this.engineServers?.stop();
    await this.poolTrainers?.shutdown();
    await this.generationReplica?.shutdown();
    await this.main.shutdown();
    const exit = this.main.exit;
    const how = exit?.signal
      ? `was killed by ${exit.signal}`
      : exit
        ? `exited with status ${exit.code}`
        : "is still running";
    return `trainer (pid ${this.main.pid ?? "?"}) shut down: it ${how}`;
  }
}
