// Both histories end to end with the embedded builtin:tiny trainer: exact writes one buffer
// record per episode, rerender one per model call (its step, its own context, the generated ids
// with their version and log-probs), and both train.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { envKinds } from "../../src/envs/registry.js";
import type { Plan } from "../../src/plan/schema.js";
import { readBuffer, Role } from "../../src/episode/buffer.js";
import { executePlan } from "../../src/runtime/orchestrator.js";
import { RunDirectory } from "../../src/runtime/run-dir.js";
import { compilePlans, countingExperiment, scriptedTrainerScript } from "../helpers/plans.js";

const repo = fileURLToPath(new URL("../..", import.meta.url));
const embedded = { file: process.execPath, args: [path.join(repo, "dist", "trainer", "embedded", "main.js")] };

function plan(history: "exact" | "rerender"): Plan {
  const spec = countingExperiment({
    name: "history",
    seed: 4,
    rollout: "iterations: 2",
    evaluation: "eval { every: 10, tasks: 2, k: [1] }",
    extra: "policy.sampling.max_new_tokens: 6",
  })
    .replace('model: "builtin:tiny"', 'model: "builtin:tiny?hidden=16&embed=8&key=8"')
    .replace("harness { max_turns: 4 }", `harness { max_turns: 4, context { history: ${history} } }`);
  return compilePlans(spec)[0]!;
}

async function run(
  p: Plan,
  trainer: typeof embedded & { env?: Record<string, string> } = embedded,
): Promise<{ runDir: RunDirectory; logs: string[] }> {
  const runDir = RunDirectory.create(mkdtempSync(path.join(tmpdir(), "arl-history-")), p);
  const logs: string[] = [];
  await executePlan({ plan: p, runDir, trainer, envs: envKinds, log: (l) => logs.push(l) });
  return { runDir, logs };
}

describe("harness.context history with the embedded trainer", () => {
  it("exact: one record per episode, its generated tokens as sampled", async () => {
    const { runDir, logs } = await run(plan("exact"));
    const metrics = runDir.readMetrics();
    expect(metrics.map((m) => m.iteration)).toEqual([1, 2]);
    expect(metrics[1]!.policy_version).toBeGreaterThan(0);
    const { records } = readBuffer(runDir.bufferPath);
    expect(records).toHaveLength(2 * 3 * 4);
    expect(records.every((r) => r.step === undefined)).toBe(true);
    // The embedded template is prefix-preserving: no note about the history.
    expect(logs.some((l) => l.includes("not prefix-preserving"))).toBe(false);
  }, 120_000);

  it("rerender: one record per model call with its step and context, and the update trains on them", async () => {
    const { runDir } = await run(plan("rerender"));
    const metrics = runDir.readMetrics();
    expect(metrics.map((m) => m.iteration)).toEqual([1, 2]);
    expect(metrics[1]!.policy_version).toBeGreaterThan(0);
    const { records } = readBuffer(runDir.bufferPath);
    const episodes = new Map<string, typeof records>();
    for (const r of records) {
      const key = `${r.iteration}:${r.group}:${r.sample}`;
      episodes.set(key, [...(episodes.get(key) ?? []), r]);
    }
    expect(episodes.size).toBe(2 * 3 * 4);
    for (const calls of episodes.values()) {
      // One record per policy call of the episode, in order, each with its own context.
      expect(calls.map((r) => r.step)).toEqual(calls.map((_, i) => i));
      expect(calls.length).toBe(calls[0]!.turns);
      for (const r of calls) {
        const generated = [...r.roles].flatMap((role, k) => (role === Role.generated ? [k] : []));
        expect(generated.length).toBeGreaterThan(0);
        // The generated ids close the record; nothing before them is a generated token.
        expect(generated[0]! + generated.length).toBe(r.ids.length);
        for (const k of generated) expect(r.versions[k]).toBe(r.iteration - 1);
        expect(r.reward).toBe(calls[0]!.reward);
      }
    }
  }, 120_000);

  it("notes at run start when the trainer's template is not prefix-preserving and the history is exact", async () => {
    const rewriting = {
      file: process.execPath,
      args: [scriptedTrainerScript],
      env: {
        DOUBLE_TEMPLATE: JSON.stringify({
          prefix_preserving: false,
          renders_tools: false,
          tool_call_format: "hermes",
          tool_role: "tool",
        }),
      },
    };
    const exact = await run({ ...plan("exact"), rollout: { ...plan("exact").rollout, iterations: 1 } }, rewriting);
    expect(exact.logs.filter((l) => l.includes("is not prefix-preserving"))).toHaveLength(1);
    expect(exact.logs.find((l) => l.includes("is not prefix-preserving"))).toContain(
      "history: rerender trains on the re-rendered contexts",
    );
    const rerender = await run(
      { ...plan("rerender"), rollout: { ...plan("rerender").rollout, iterations: 1 } },
      rewriting,
    );
    expect(rerender.logs.some((l) => l.includes("is not prefix-preserving"))).toBe(false);
  });

  it("generates with every end-of-turn id configure reports (stop_ids)", async () => {
    const stopping = { file: process.execPath, args: [scriptedTrainerScript], env: { DOUBLE_STOP_IDS: "[0, 7]" } };
    const { runDir } = await run({ ...plan("exact"), rollout: { ...plan("exact").rollout, iterations: 1 } }, stopping);
    // The double ends each turn with the last stop id it was sent: 7 only if the runtime sent configure's list.
    for (const r of readBuffer(runDir.bufferPath).records) {
      const ends = [...r.roles].flatMap((role, k) =>
        role === Role.generated && r.roles[k + 1] !== Role.generated ? [r.ids[k]] : [],
      );
      expect(ends.length).toBeGreaterThan(0);
      expect(new Set(ends)).toEqual(new Set([7]));
    }
  });
});
