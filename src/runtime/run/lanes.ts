// The rollout's episode lanes: rollout.concurrency episodes at once over every batch in flight.
// Under asynchronous rollout several batches roll out together (rollout.async.max_staleness);
// they share the plan's lanes, first come first served, so a lane that a short episode frees is
// taken by the next batch's episode instead of idling behind the batch's slowest one, and the
// plan's limit on env processes and connections holds however many batches are in flight.

export class EpisodeLanes {
  private free: number;
  private readonly waiting: (() => void)[] = [];

  constructor(lanes: number) {
    this.free = lanes;
  }

  /** Runs `work` in a lane, waiting (in arrival order) for one to be free. */
  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.free > 0) this.free--;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    try {
      return await work();
    } finally {
      const next = this.waiting.shift();
      // The lane passes straight to the first waiter; none waiting: it is free again.
      if (next) next();
      else this.free++;
    }
  }
}
