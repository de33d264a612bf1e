// The asynchronous-rollout bench's env server (src/bench/paced-env.ts), driven by the http env
// kind itself: it speaks that kind's wire format, plays the counter task, and paces each
// episode's reset and steps by a heavy-tailed factor drawn from the episode's seed.
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { httpEnv, type HttpEnv } from "../../src/envs/adapters/http.js";

const server = fileURLToPath(new URL("../../dist/bench/paced-env.js", import.meta.url));
let child: ChildProcess;
let url = "";

beforeAll(async () => {
  // Steps 20 ms and resets 40 ms, times a pace ~ Pareto(1.5) capped at 4.
  child = spawn(process.execPath, [server, "20", "40", "1.5", "4"], { stdio: ["ignore", "pipe", "inherit"] });
  const port = await new Promise<string>((resolve) =>
    createInterface({ input: child.stdout! }).once("line", (l) => resolve(l.replace(/^port /, ""))),
  );
  url = `http://127.0.0.1:${port}`;
});
afterAll(() => {
  child.kill();
});

const env = (): HttpEnv => ({
  kind: "http",
  description: null,
  version: "1",
  tasks: 30,
  split: { train: 1, valid: 0, test: 0 },
  weight: 1,
  signals: {},
  optimal_steps: null,
  budget_is_task_rule: false,
  reward_range: [0, 1],
  timeout_s: 5,
  retries: 0,
  task: null,
  url,
  max_response_bytes: 1024 * 1024,
});

const call = (name: string) => ({ name, arguments: {} });

/** Plays task `task` with seed `seed` to its end; the reset's and one step's wall times. */
async function play(task: number, seed: number): Promise<{ resetMs: number; stepMs: number; success: unknown }> {
  const instance = await httpEnv.create(env(), task, seed);
  try {
    let t = Date.now();
    const start = await instance.reset();
    const resetMs = Date.now() - t;
    expect(start.text).toBe(`Call step ${1 + (task % 3)} times.`);
    t = Date.now();
    await instance.step(call("noop"));
    const stepMs = Date.now() - t;
    let done = false;
    for (let i = 0; i < 3 && !done; i++) done = (await instance.step(call("step"))).terminated;
    expect(done).toBe(true);
    return { resetMs, stepMs, success: (await instance.outcome()).success };
  } finally {
    await instance.close();
  }
}

describe("the async bench's paced env server", () => {
  it("plays the counter task over the http env kind, each episode paced by at least its base times and at most the cap", async () => {
    const episodes = await Promise.all([0, 1, 2, 3, 4, 5].map((task) => play(task, 100 + task)));
    for (const e of episodes) {
      expect(e.success).toBe(true);
      expect(e.resetMs).toBeGreaterThanOrEqual(39);
      expect(e.stepMs).toBeGreaterThanOrEqual(19);
      // The pace never passes the cap (4): 160 ms, with room for a loaded machine.
      expect(e.resetMs).toBeLessThan(160 + 1000);
    }
  });
});
