// The asynchronous pipeline's schedule (run/pipeline.ts): which updates the snapshot is refreshed
// before and which batches have started by then, a function of the iteration alone; and the
// episode lanes (run/lanes.ts) the batches in flight share: never more at once than the plan's
// concurrency, handed over first come first served.
import { describe, expect, it } from "vitest";
import { EpisodeLanes } from "../../src/runtime/run/lanes.js";
import { launchedThrough, refreshesBefore } from "../../src/runtime/run/pipeline.js";

const plan = (max_staleness: number, in_flight_updates = false) => ({
  max_staleness,
  in_flight_updates,
  generation: "trainer" as const,
  max_policy_lag: null,
  past_max_lag: "drop" as const,
});

describe("the asynchronous pipeline's schedule", () => {
  it("one batch ahead: a snapshot before every update, the next batch started from it", () => {
    const iterations = Array.from({ length: 5 }, (_, i) => i + 1);
    expect(iterations.map((t) => refreshesBefore(plan(1), t))).toEqual([true, true, true, true, true]);
    expect(iterations.map((t) => launchedThrough(plan(1), t, 5))).toEqual([2, 3, 4, 5, 5]);
  });

  it("k ahead: a snapshot before updates 1, k+1, 2k+1, ..., and the k batches after each started from it", () => {
    const iterations = Array.from({ length: 9 }, (_, i) => i + 1);
    expect(iterations.map((t) => refreshesBefore(plan(3), t))).toEqual([
      true,
      false,
      false,
      true,
      false,
      false,
      true,
      false,
      false,
    ]);
    expect(iterations.map((t) => launchedThrough(plan(3), t, 9))).toEqual([4, 4, 4, 7, 7, 7, 9, 9, 9]);
    // Batch b's snapshot is the weights before the refresh r <= b - 1 that started it: b - 1 - r <= k - 1
    // updates later, trained at update b, so 1 to k updates old.
    for (let b = 2; b <= 9; b++) {
      const started = iterations.find((t) => launchedThrough(plan(3), t, 9) >= b)!;
      expect(refreshesBefore(plan(3), started)).toBe(true);
      expect(b - started).toBeGreaterThanOrEqual(1);
      expect(b - started).toBeLessThanOrEqual(3);
    }
  });

  it("in-flight updates: a snapshot before every update, batches started up to k ahead", () => {
    expect([1, 2, 3, 4].map((t) => refreshesBefore(plan(3, true), t))).toEqual([true, true, true, true]);
    expect([1, 2, 3, 4].map((t) => launchedThrough(plan(3, true), t, 5))).toEqual([4, 5, 5, 5]);
  });
});

describe("episode lanes", () => {
  it("runs at most `lanes` at once across callers, in arrival order", async () => {
    const lanes = new EpisodeLanes(2);
    let running = 0;
    let most = 0;
    const started: number[] = [];
    const releases: (() => void)[] = [];
    const job = (i: number) =>
      lanes.run(async () => {
        started.push(i);
        running++;
        most = Math.max(most, running);
        await new Promise<void>((r) => releases.push(r));
        running--;
        return i;
      });
    const all = [0, 1, 2, 3, 4].map(job);
    await new Promise((r) => setImmediate(r));
    expect(started).toEqual([0, 1]);
    // Freeing lane 1 hands it to the first waiter (2), not to a later one.
    releases[1]!();
    await new Promise((r) => setImmediate(r));
    expect(started).toEqual([0, 1, 2]);
    while (releases.length < 5) {
      for (const r of releases) r();
      await new Promise((r) => setImmediate(r));
    }
    for (const r of releases) r();
    expect(await Promise.all(all)).toEqual([0, 1, 2, 3, 4]);
    expect(most).toBe(2);
  });

  it("frees the lane of a failed episode", async () => {
    const lanes = new EpisodeLanes(1);
    await expect(lanes.run(() => Promise.reject(new Error("env error")))).rejects.toThrow("env error");
    expect(await lanes.run(() => Promise.resolve("next"))).toBe("next");
  });
});
