// The peer benchmark's own logic: ARL's side of the work is the work the section states (and that
// it hands TRL and the floor: PEER_WORK, the same reward file), its spec checks cleanly against its
// rows, the ratio rows are the medians of the per-round ratios against their goals, a ratio is
// refused when a side's rewards did not vary, and CPU time counts a side's whole process tree.
import { spawn } from "node:child_process";
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { PEER_WORK, peerRows, peerSpec, sumRows, treeCpuSeconds, type Steps } from "../../src/bench/peer.js";
import { Compiler } from "../../src/compiler.js";
import { lowerModel } from "../../src/plan/lower.js";
import { skipTitle } from "../helpers/skip-reporter.js";

const dir = mkdtempSync(path.join(tmpdir(), "arl-peer-test-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A run of `seconds` a step whose every group's rewards varied. */
const run = (seconds: number[], cpu: number[], extra: Partial<Steps> = {}): Steps => ({
  seconds,
  cpuSeconds: cpu,
  varied: seconds.map(() => 1),
  gradNorm: seconds.map(() => 0.5),
  ...extra,
});

describe("peer benchmark", () => {
  it("gives ARL the stated work: one on-policy single-turn step of PEER_WORK a step, scored by the shared reward file", () => {
    writeFileSync(path.join(dir, "sums.jsonl"), sumRows(64));
    copyFileSync(
      path.join(import.meta.dirname, "../../runtime-gpu/bench/peer_reward.py"),
      path.join(dir, "peer_reward.py"),
    );
    const file = path.join(dir, "peer.arl");
    // A model directory is not read at check time.
    writeFileSync(file, peerSpec(path.join(dir, "qwen3"), 6));
    const result = new Compiler().check(file);
    expect(result.diagnostics).toEqual([]);
    const plan = lowerModel(result.model!).plans[0]!.plan;
    expect(PEER_WORK.prompts * PEER_WORK.group * PEER_WORK.maxNew).toBeGreaterThanOrEqual(1024);
    expect(plan.algorithm.group_size).toBe(PEER_WORK.group);
    expect(plan.rollout.tasks_per_batch).toBe(PEER_WORK.prompts);
    expect(plan.policy.sampling).toMatchObject({
      temperature: PEER_WORK.temperature,
      top_p: 1,
      top_k: 0,
      max_new_tokens: PEER_WORK.maxNew,
    });
    expect(plan.policy.dtype).toBe("float32");
    expect(plan.algorithm.optimizer).toMatchObject({
      lr: PEER_WORK.lr,
      weight_decay: 0,
      grad_clip: PEER_WORK.gradClip,
    });
    expect(plan.algorithm.clip).toMatchObject({ low: PEER_WORK.clip, high: PEER_WORK.clip });
    expect(plan.algorithm).toMatchObject({ epochs: 1, minibatches: 1, reduction: { mode: "token_mean" } });
    expect(plan.algorithm.kl.coef).toBe(0);
    expect(plan.rollout.iterations).toBe(6);
    const env = plan.envs.sums as { scorer: string; verifier: { path: string } | null; function: string };
    expect(env).toMatchObject({ scorer: "verl", function: "compute_score" });
    expect(env.verifier?.path).toBe("peer_reward.py");
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

  it("takes each ratio as the median over rounds of the same round's medians of steps 2..N", () => {
    // Round 2 ran on a loaded machine: every side is slower, and the per-round ratio hardly moves.
    const arl = [
      run([9, 1.2, 1.0, 1.4], [9, 2, 2, 2], { commitSeconds: [5, 0.25, 0.5, 0.75] }),
      run([9, 2.4, 2.0, 2.8], [9, 2, 2, 2]),
      run([9, 1.1, 1.1, 1.1], [9, 2, 2, 2]),
    ];
    const trl = [run([9, 2, 2, 3], [9, 4, 4, 4]), run([9, 4, 4, 6], [9, 4, 4, 4]), run([9, 2, 2, 2], [9, 4, 4, 4])].map(
      (s) => ({ ...s, label: "1.16.0" }),
    );
    const floor = [run([9, 1, 1, 1], [9, 1, 1, 1]), run([9, 2, 2, 2], [9, 1, 1, 1]), run([9, 1, 1, 1], [9, 1, 1, 1])];
    const rows = peerRows({ arl, trl, trlDefaults: trl, floor });
    expect(rows.map((r) => r.name)).toEqual([
      "ARL: arl run, PyTorch trainer",
      "TRL 1.16.0 GRPOTrainer, float32, no gradient checkpointing",
      "TRL 1.16.0 GRPOTrainer, its defaults",
      "compute floor: plain PyTorch loop",
      "ARL / TRL",
      "ARL / TRL, CPU time",
      "ARL / TRL with its defaults",
      "ARL / TRL with its defaults, CPU time",
      "ARL / floor",
      "ARL / floor, CPU time",
    ]);
    expect(rows[0]).toMatchObject({ runs: 9, minMs: 1000, maxMs: 2800 });
    expect(rows[0]!.note).toContain("CPU 2000 ms a step (process tree)");
    expect(rows[0]!.note).toContain(
      "commit in the step's path (the checkpoint copied, the one before awaited, metrics, state) 500 ms",
    );
    // Per round: 1.2/2, 2.4/4, 1.1/2.
    expect(rows[4]).toMatchObject({ goal: "<= 0.5", met: false, runs: 3, spreadOf: "round" });
    expect(rows[4]!.value).toBeCloseTo(0.6);
    expect(rows[4]!.spread).toMatchObject({ min: 0.55, max: 0.6 });
    expect(rows[5]!.value).toBeCloseTo(0.5);
    expect(rows[6]!.goal).toBeUndefined();
    expect(rows[8]).toMatchObject({ goal: "<= 1.1", met: false });
    expect(rows[8]!.value).toBeCloseTo(1.2);
    // Without TRL the section says why and keeps the floor's comparison.
    const without = peerRows({ arl, trl: "skipped: no TRL", trlDefaults: "skipped: no TRL", floor });
    expect(without.map((r) => r.name)).toEqual([
      "ARL: arl run, PyTorch trainer",
      "TRL GRPOTrainer",
      "TRL GRPOTrainer, its defaults",
      "compute floor: plain PyTorch loop",
      "ARL / floor",
      "ARL / floor, CPU time",
    ]);
    expect(without[1]!.note).toBe("skipped: no TRL");
  });

  it("refuses a ratio when a side's rewards were all equal in a group, or its verifier failed", () => {
    const ok = [run([9, 1, 1], [9, 1, 1])];
    const flat = [run([9, 1, 1], [9, 1, 1], { varied: [1, 1, 0.75], gradNorm: [0.5, 0.5, 0.5] })];
    const rows = peerRows({ arl: ok, trl: flat, trlDefaults: ok, floor: ok });
    const refused = rows.find((r) => r.name === "ARL / TRL")!;
    expect(refused.value).toBeUndefined();
    expect(refused.note).toBe(
      "refused: TRL's runs were not the same work: in step 3 of round 1 the rewards of 25% of the groups were all equal (advantages 0)",
    );
    expect(rows.find((r) => r.name === "ARL / TRL, CPU time")).toBeUndefined();
    expect(rows.find((r) => r.name === "ARL / floor")!.value).toBeCloseTo(1);
    // ARL's own runs: every ratio is refused.
    const failed = peerRows({
      arl: [run([9, 1, 1], [9, 1, 1], { envErrors: 2 })],
      trl: ok,
      trlDefaults: ok,
      floor: ok,
    });
    for (const name of ["ARL / TRL", "ARL / TRL with its defaults", "ARL / floor"]) {
      expect(failed.find((r) => r.name === name)!.note).toBe(
        "refused: ARL's runs were not the same work: 2 episodes of round 1 ended in an env error",
      );
    }
  });

  it.runIf(process.platform === "linux")(
    skipTitle(
      "counts the CPU time of the whole process tree, grandchildren that ended included",
      !(process.platform === "linux"),
      "needs Linux: the process tree is read from /proc",
    ),
    async () => {
      // sh runs a node that burns 0.5 s of CPU and ends (sh waits for it), then becomes a sleep:
      // the tree under sh has used 0.5 s only if the grandchild's time is counted.
      const burn = "const t = process.cpuUsage(); while (process.cpuUsage(t).user < 5e5);";
      const child = spawn(
        "sh",
        ["-c", `${JSON.stringify(process.execPath)} -e ${JSON.stringify(burn)}; exec sleep 30`],
        { stdio: "ignore" },
      );
      try {
        let used = 0;
        for (let i = 0; i < 400 && used < 0.5; i++) {
          await new Promise((r) => setTimeout(r, 50));
          used = treeCpuSeconds(child.pid) ?? 0;
        }
        expect(used).toBeGreaterThanOrEqual(0.5);
      } finally {
        child.kill();
      }
    },
  );
});
