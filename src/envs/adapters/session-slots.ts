// How many episodes may be open at once on one server (an OpenEnv server's max_concurrent_envs,
// an AgentRL worker's concurrency): one queue per server, shared by every env that names it, so
// that a full server is waited for instead of refusing episodes as env errors.

class Slots {
  private used = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private limit: number) {}

  /** The server's limit as last learned (a lower one takes effect as slots free up). */
  setLimit(limit: number): void {
    this.limit = limit;
    this.wake();
  }

  private wake(): void {
    while (this.used < this.limit && this.waiting.length > 0) {
      this.used++;
      this.waiting.shift()?.();
    }
  }

  /** Waits for a free slot; the returned function frees it (a second call does nothing). */
  async acquire(): Promise<() => void> {
    if (this.used < this.limit) this.used++;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    let freed = false;
    return () => {
      if (freed) return;
      freed = true;
      this.used--;
      this.wake();
    };
  }
}

const byServer = new Map<string, Slots>();

/** The slots of the server at `key` (its URL), made with `limit` on first use. */
export function serverSlots(key: string, limit: number): Slots {
  let slots = byServer.get(key);
  if (!slots) {
    slots = new Slots(limit);
    byServer.set(key, slots);
  }
  return slots;
}
