// The peer benchmark's own logic: ARL's side of the work is the work the section states (and that
// it hands TRL and the floor: PEER_WORK), its spec checks cleanly against its rows, and the ratio
// rows are the medians of steps 2..N against their goals.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { PEER_WORK, peerRows, peerSpec, sumRows } from "../../src/bench/peer.js";
import { Compiler } from "../../src/compiler.js";
import { lowerModel } from "../../src/plan/lower.js";

const dir = mkdtempSync(path.join(tmpdir(), "arl-peer-test-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("peer benchmark", () => {
  it("gives ARL the stated work: one on-policy single-turn step of PEER_WORK a step, scored by the number scorer", () => {
    writeFileSync(path.join(dir, "sums.jsonl"), sumRows(64));
    const file = path.join(dir, "peer.arl");
    // A model directory is not read at check time.
    writeFileSync(file, peerSpec(path.join(dir, "qwen3"), 6));
    const result = new Compiler().check(file);
    expect(result.diagnostics).toEqual([]);
    const plan = lowerModel(result.model!).plans[0]!.plan;
    expect(plan.algorithm.group_size).toBe(PEER_WORK.group);
    expect(plan.rollout.tasks_per_batch).toBe(PEER_WORK.prompts);
    expect(plan.policy.sampling).toMatchObject({
      temperature: PEER_WORK.temperature,
      top_p: 1,
      top_k: 0,
      max_new_tokens: PEER_WORK.maxNew,
    });
    expect(plan.algorithm.optimizer).toMatchObject({
      lr: PEER_WORK.lr,
      weight_decay: 0,
      grad_clip: PEER_WORK.gradClip,
    });
    expect(plan.algorithm.clip).toMatchObject({ low: PEER_WORK.clip, high: PEER_WORK.clip });
    expect(plan.algorithm).toMatchObject({ epochs: 1, minibatches: 1, reduction: { mode: "token_mean" } });
    expect(plan.algorithm.kl.coef).toBe(0);
    expect(plan.rollout.iterations).toBe(6);
  });

  it("holds out the last quarter of the rows, each a sum with its answer", () => {
    const rows = sumRows(8)
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { prompt: string; answer: number; split: string });
    expect(rows.map((r) => r.split)).toEqual(["train", "train", "train", "train", "train", "train", "test", "test"]);
    for (const r of rows) {
      const [, a, b] = /What is (\d+) \+ (\d+)\?/.exec(r.prompt)!;
      expect(r.answer).toBe(Number(a) + Number(b));
    }
  });

  it("compares the medians of steps 2..N (the first warms up) against the goals", () => {
    const arl = { seconds: [9, 1.2, 1.0, 1.4], cpuSeconds: [9, 2, 2, 2], commitSeconds: [5, 0.25, 0.5, 0.75] };
    const trl = { seconds: [9, 2, 2, 3], cpuSeconds: [9, 4, 4, 4], label: "1.16.0" };
    const floor = { seconds: [9, 1, 1, 1], cpuSeconds: [9, 1, 1, 1] };
    const rows = peerRows(arl, trl, floor);
    expect(rows.map((r) => r.name)).toEqual([
      "ARL: arl run, PyTorch trainer",
      "TRL 1.16.0 GRPOTrainer",
      "compute floor: plain PyTorch loop",
      "ARL / TRL",
      "ARL / floor",
    ]);
    expect(rows[0]).toMatchObject({ medianMs: 1200, minMs: 1000, maxMs: 1400, runs: 3 });
    expect(rows[0]!.note).toContain("CPU 2000 ms a step");
    expect(rows[0]!.note).toContain(
      "commit in the step's path (the checkpoint copied, the one before awaited, metrics, state) 500 ms",
    );
    expect(rows[3]).toMatchObject({ value: 0.6, met: true, goal: "<= 1" });
    expect(rows[3]!.note).toContain("in CPU time 0.50x");
    expect(rows[4]).toMatchObject({ met: true, goal: "<= 1.25" });
    expect(rows[4]!.value).toBeCloseTo(1.2);
    // Without TRL the section says why and keeps the floor's comparison.
    const without = peerRows(arl, "skipped: no TRL", floor);
    expect(without.map((r) => r.name)).toEqual([
      "ARL: arl run, PyTorch trainer",
      "TRL GRPOTrainer",
      "compute floor: plain PyTorch loop",
      "ARL / floor",
    ]);
    expect(without[1]!.note).toBe("skipped: no TRL");
  });
});
