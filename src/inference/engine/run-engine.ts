// The inference engine of one run (resources.rollout.engine vllm or sglang): its servers (the
// pool, and the processes when the runtime launched them), the policy that samples through them,
// the weight sync, and what each metrics line reports of them.
import type { EnginePolicy } from "./engine-policy.js";
import type { LaunchedServers } from "./launch.js";
import type { EnginePool, PoolCounts } from "./pool.js";
import type { WeightSync } from "./weight-sync.js";

/** The metrics line's `engine` (docs/engines.md, "Metrics"). */
export interface EngineMetrics {
  /** Generations asked of the servers since the previous line. */
  readonly requests: number;
  /** Attempts that repeated a failed one (on another server where there was one), since the previous line. */
  readonly retries: number;
  /** Servers taken out so far in this process (a resume starts or connects them all again). */
  readonly failed_servers: number;
  /** Seconds spent saving and loading weights for the servers since the previous line. */
  readonly sync_s: number;
  /** The policy version the servers serve when the line is written. */
  readonly version: number | null;
  /** The largest mean |engine - trainer| log-prob of the sync probes since the previous line; null: no probe ran. */
  readonly probe_gap: number | null;
}

export class RunEngine {
  private reported: PoolCounts = { requests: 0, retries: 0, failedServers: 0 };

  constructor(
    readonly pool: EnginePool,
    readonly policy: EnginePolicy,
    readonly weights: WeightSync,
    readonly launched: LaunchedServers | undefined,
  ) {}

  /** The line's counts since the previous line. */
  takeMetrics(): EngineMetrics {
    const now = this.pool.counts;
    const before = this.reported;
    this.reported = now;
    return {
      requests: now.requests - before.requests,
      retries: now.retries - before.retries,
      failed_servers: now.failedServers,
      sync_s: this.weights.takeSeconds(),
      version: this.weights.version,
      probe_gap: this.weights.takeProbeGap(),
    };
  }
}
