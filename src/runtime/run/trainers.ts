// The trainer processes of one run: the policy's, and the pool models' once cross-policy sampling
// has started them. Whatever phase fails, every process that was started is stopped.
import type { TrainerClient } from "../../trainer/protocol/client.js";
import type { PoolTrainers } from "../cross-policy.js";

export class RunTrainers {
  private poolTrainers: PoolTrainers | undefined;

  constructor(readonly main: TrainerClient) {}

  get pool(): PoolTrainers | undefined {
    return this.poolTrainers;
  }

  /** Takes over the pool's trainers as soon as they run, so that a later failure stops them too. */
  adoptPool(pool: PoolTrainers): void {
    this.poolTrainers = pool;
  }

  /** Kills every process at once (a failure, or the user stopping the run at once). */
  async kill(): Promise<void> {
    await Promise.all([this.main.kill(), this.poolTrainers?.kill()]);
  }

  /**
   * Orderly end of a run: the pool's trainers first, then the policy's. Returns how the policy's
   * trainer ended, for the run log: a Ctrl-C must have reached the runtime alone.
   */
  async shutdown(): Promise<string> {
    await this.poolTrainers?.shutdown();
    await this.main.shutdown();
    const exit = this.main.exit;
    const how = exit?.signal ? `was killed by ${exit.signal}` : exit ? `exited with status ${exit.code}` : "is still running";
    return `trainer (pid ${this.main.pid ?? "?"}) shut down: it ${how}`;
  }
}
