// The http env kind against the reference task server (runtime-gpu/reference_env_server.py,
// started as a child process on 127.0.0.1; test/helpers/reference-env-server.ts): full episodes,
// isolated sessions, and a run end to end through the orchestrator with the scripted trainer
// double and an injected step failure. Timeouts, retries and the classification of every failure
// kind are in http-failures.test.ts.
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { readBuffer } from "../../src/episode/buffer.js";
import { httpEnv } from "../../src/envs/adapters/http.js";
import { envKinds } from "../../src/envs/registry.js";
import { executePlan } from "../../src/runtime/orchestrator.js";
import { RunDirectory } from "../../src/runtime/run-dir.js";
import { splitTasks } from "../../src/plan/splits.js";
import { compilePlans, COUNTER_SIGNALS_AND_TOOLS } from "../helpers/plans.js";
import {
  call,
  instance,
  json,
  makeEnv,
  server,
  startServer,
  useReferenceServer,
} from "../helpers/reference-env-server.js";

const trainerScript = fileURLToPath(new URL("../doubles/scripted-trainer.mjs", import.meta.url));
const trainer = { file: process.execPath, args: [trainerScript] };

useReferenceServer();

describe("http env: episodes against the reference server", () => {
  it("is registered as the kind 'http'", () => {
    expect(envKinds.get("http")).toBe(httpEnv);
    expect(httpEnv.vocabulary(makeEnv())).toEqual([]);
  });

  it("plays a full episode to success: reset, steps, outcome, close", async () => {
    const env = await instance(2);
    const start = await env.reset();
    expect(start).toEqual({ text: "Call step 3 times.", signals: { progress: 0 } });
    expect(typeof env.sessionId).toBe("string");
    const noop = await env.step(call("noop"));
    expect(noop).toEqual({ text: "count 0", signals: { progress: 0 }, terminated: false });
    await env.step(call("step"));
    const second = await env.step(call("step"));
    expect(second.terminated).toBe(false);
    expect(second.signals.progress).toBeCloseTo(2 / 3);
    const last = await env.step(call("step"));
    expect(last).toEqual({ text: "count 3", signals: { progress: 1 }, terminated: true });
    expect(await env.outcome()).toEqual({ success: true, steps: 4 });
    // outcome is idempotent.
    expect(await env.outcome()).toEqual({ success: true, steps: 4 });
    const before = (await json(`${server.url}/stats`)).sessions as number;
    await env.close();
    expect(env.sessionId).toBeUndefined();
    expect((await json(`${server.url}/stats`)).sessions).toBe(before - 1);
    await env.close(); // a second close is a no-op
  });

  it("serves the 'reach' family (the default for task null) and a URL with a path prefix", async () => {
    const env = await instance(3, { task: null, url: `${server.url}/agentbench/reach/` });
    const start = await env.reset();
    expect(start.text).toBe("The value is 4. Make it exactly 8 with add (1, 2 or 3) and double.");
    expect(start.signals).toEqual({ value: 4, remaining: 4 });
    // A bad tool call is the policy's failure: an error observation, not an env error.
    const bad = await env.step(call("add", { amount: 9 }));
    expect(bad.text).toMatch(/^Error: add needs/);
    expect(bad.terminated).toBe(false);
    expect((await env.step(call("fly"))).text).toMatch(/^Error: unknown tool 'fly'/);
    expect(await env.step(call("double"))).toEqual({
      text: "The value is 8: the target.",
      signals: { value: 8, remaining: 0 },
      terminated: true,
    });
    expect(await env.outcome()).toEqual({ success: true, steps: 3 });
  });

  it("isolates concurrent sessions of the same task", async () => {
    const [a, b] = await Promise.all([instance(2), instance(2)]);
    await Promise.all([a.reset(), b.reset()]);
    expect(a.sessionId).not.toBe(b.sessionId);
    // Concurrent sessions (each one's own steps in order, as the harness sends them): a steps
    // three times while b steps once.
    const [aSteps, bSteps] = await Promise.all([
      (async () => [await a.step(call("step")), await a.step(call("step")), await a.step(call("step"))])(),
      (async () => [await b.step(call("step"))])(),
    ]);
    expect(aSteps.map((r) => r.text)).toEqual(["count 1", "count 2", "count 3"]);
    expect(aSteps.map((r) => r.terminated)).toEqual([false, false, true]);
    expect(bSteps.map((r) => [r.text, r.terminated])).toEqual([["count 1", false]]);
    expect(await a.outcome()).toEqual({ success: true, steps: 3 });
    expect(await b.outcome()).toEqual({ success: false, steps: 1 });
    const c = await instance(2);
    await c.reset();
    expect(await c.outcome()).toEqual({ success: false, steps: 0 });
  });

  it("runs many episodes in parallel without mixing them up", async () => {
    const envs = await Promise.all(Array.from({ length: 12 }, (_, i) => instance(i % 3)));
    await Promise.all(envs.map((e) => e.reset()));
    const outcomes = await Promise.all(
      envs.map(async (e, i) => {
        for (let s = 0; s < i % 3; s++) await e.step(call("step"));
        return e.outcome();
      }),
    );
    // Task t needs 1 + t % 3 steps; episode i took i % 3 (< goal), so none succeeded.
    expect(outcomes).toEqual(envs.map((_, i) => ({ success: false, steps: i % 3 })));
  });
});

describe("http env: a run end to end", () => {
  const spec = (url: string) => `
experiment http_counting {
  seed: 3
  policy { model: "builtin:tiny" }
  env counter {
    kind: http
    url: "${url}"
    task: "counter"
    tasks: 4
    split { train: 0.5, test: 0.5 }
    timeout_s: 5
    retries: 1
${COUNTER_SIGNALS_AND_TOOLS}
  }
  harness { max_turns: 4 }
  reward { success: outcome.success }
  algorithm {
    group_size: 4
    advantage { baseline: leave_one_out }
  }
  rollout { tasks_per_batch: 3, iterations: 4, concurrency: 6 }
  eval { every: 2, tasks: 2, k: [1] }
}
`;

  it("trains through the orchestrator, writes metrics and counts env errors of an injected step failure", async () => {
    // The task ids of the train split do not depend on the URL: pick one of them to fail (the
    // second: the first batch draws the first alone, and a first batch of nothing but env errors
    // would fail the run).
    const [probe] = compilePlans(spec("http://127.0.0.1:8000"));
    const train = splitTasks("counter", probe!.envs.counter!, "train");
    expect(train.length).toBe(2);
    const failing = train[1]!;
    const own = await startServer(["--fault", `${failing}=step_500`]);
    try {
      const [plan] = compilePlans(spec(own.url));
      expect(plan!.envs.counter).toMatchObject({
        kind: "http",
        url: own.url,
        task: "counter",
        timeout_s: 5,
        retries: 1,
      });
      const out = mkdtempSync(path.join(tmpdir(), "arl-http-runs-"));
      const runDir = RunDirectory.create(out, plan!);
      const summary = await executePlan({ plan: plan!, runDir, trainer, envs: envKinds, log: () => undefined });
      expect(summary.iterations).toBe(4);
      for (const f of ["plan.json", "manifest.json", "metrics.jsonl", "buffer.arlbuf", "state.json"])
        expect(existsSync(path.join(runDir.dir, f)), f).toBe(true);
      const metrics = runDir.readMetrics();
      expect(metrics.map((m) => m.iteration)).toEqual([1, 2, 3, 4]);
      for (const m of metrics) {
        for (const key of ["success", "reward", "env_errors", "end_reasons", "tool_calls", "tokens"])
          expect(m, key).toHaveProperty(key);
        expect((m.end_reasons as Record<string, number>).env_error).toBe(m.env_errors);
      }
      const envErrors = metrics.reduce((s, m) => s + (m.env_errors as number), 0);
      // Every episode of the failing task is an env error (its first step answers 500) ...
      expect(envErrors).toBeGreaterThan(0);
      expect(envErrors % 4).toBe(0); // whole groups of 4
      const stats = await json(`${own.url}/stats`);
      const failingStats = stats.by_index[String(failing)] as Record<string, number>;
      expect(failingStats.step).toBe(envErrors); // one step each, never retried
      // ... and the other tasks' episodes played normally; every session was closed.
      expect(stats.sessions).toBe(0);
      expect(stats.requests.close).toBe(stats.requests.reset);
      const { records } = readBuffer(runDir.bufferPath);
      expect(records.length).toBeGreaterThan(0);
      // The buffer keeps every episode; the env errors are exactly the failing task's.
      const errored = records.filter((r) => r.end === "env_error");
      expect(errored.length).toBe(envErrors);
      expect(errored.every((r) => r.task === failing)).toBe(true);
      expect(
        records
          .filter((r) => r.task !== failing)
          .every((r) => r.end === "finished" || r.end === "truncated" || r.end === "aborted"),
      ).toBe(true);
      expect(metrics.some((m) => (m.success as number) > 0)).toBe(true);
    } finally {
      expect(await own.stop()).toBe(0);
    }
  });
});
