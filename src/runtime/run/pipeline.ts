// The rollouts in flight under asynchronous rollout (rollout.async, docs/semantics.md §7). With
// max_staleness k the behaviour snapshot is taken just before update t when t - 1 is a multiple of
// k (every update under in_flight_updates), and then the batches up to t + k are started from it:
// each batch is trained 1 to k updates after the weights that start it. Which batches are started
// at which snapshot is a function of the iteration alone, so a resumed run restarts exactly the
// batches the uninterrupted one had in flight at that point, from the snapshot its checkpoint keeps.
import type { Plan } from "../../plan/schema.js";
import type { RunContext } from "./context.js";
import { collectRollout, type Rollout } from "./rollout.js";

type AsyncPlan = NonNullable<Plan["rollout"]["async"]>;

/** Whether the behaviour snapshot is refreshed just before the update of `iteration`. */
export function refreshesBefore(async: AsyncPlan, iteration: number): boolean {
  return async.in_flight_updates || (iteration - 1) % async.max_staleness === 0;
}

/** The last batch started once the update of `iteration` is about to begin (its snapshot taken). */
export function launchedThrough(async: AsyncPlan, iteration: number, iterations: number): number {
  const refreshed = async.in_flight_updates ? iteration : iteration - ((iteration - 1) % async.max_staleness);
  return Math.min(iterations, refreshed + async.max_staleness);
}

export class RolloutPipeline {
  private readonly inFlight = new Map<number, Promise<Rollout>>();
  private started: number;

  /** `started`: the last iteration whose rollout has begun (or was committed). */
  constructor(
    private readonly ctx: RunContext,
    started: number,
  ) {
    this.started = started;
  }

  /** Starts the rollouts of the iterations after the last one started, through `last`. */
  startThrough(last: number): void {
    for (let iteration = this.started + 1; iteration <= last; iteration++) {
      const rollout = collectRollout(this.ctx, iteration);
      // Awaited at its own iteration; until then a failure must not count as unhandled.
      rollout.catch(() => undefined);
      this.inFlight.set(iteration, rollout);
    }
    this.started = Math.max(this.started, last);
  }

  /** The rollout of `iteration` if it is in flight (taken out of the pipeline). */
  take(iteration: number): Promise<Rollout> | undefined {
    const rollout = this.inFlight.get(iteration);
    this.inFlight.delete(iteration);
    return rollout;
  }

  get size(): number {
    return this.inFlight.size;
  }

  /** Waits for every rollout in flight to end (its envs closed), failed or not. */
  async settle(): Promise<void> {
    await Promise.all([...this.inFlight.values()].map((r) => r.catch(() => undefined)));
  }
}
