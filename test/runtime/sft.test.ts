// The supervised cold start: walkthroughs replayed through the harness (same token layout as
// RL episodes), trained on through the protocol before the first iteration, then checkpointed.
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { envKinds } from "../../src/envs/registry.js";
import { executePlan } from "../../src/runtime/orchestrator.js";
import { RunDirectory } from "../../src/runtime/run-dir.js";
import { TrainerClient } from "../../src/trainer/protocol/client.js";
import { compilePlans, scriptedTrainerScript } from "../helpers/plans.js";

const spec = `
import "std/envs/rooms" as rooms

experiment cold_start {
  policy { model: "builtin:tiny" }
  env quest extends rooms.world { tasks: 20 }
  harness { tools: quest.tools, format: text_action, max_turns: 6 }
  reward { success: outcome.success }
  algorithm { group_size: 2, advantage { baseline: leave_one_out } }
  rollout { tasks_per_batch: 2, iterations: 1, sft { demos: 3, epochs: 2 } }
  eval { every: 1, tasks: 2, before_training: false }
}
`;

describe("SFT cold start", () => {
  afterEach(() => vi.restoreAllMocks());

  /** The methods the run sends that change the optimizer or save it, in order (train_step, reset_optimizer, save). */
  async function optimizerRequests(sft: string): Promise<string[]> {
    const sent: string[] = [];
    // eslint-disable-next-line @typescript-eslint/unbound-method -- called back with .call(this) on the spied instance
    const request = TrainerClient.prototype.request;
    vi.spyOn(TrainerClient.prototype, "request").mockImplementation(function (this: TrainerClient, method, params) {
      if (method === "train_step" || method === "reset_optimizer" || method === "save") sent.push(method);
      return request.call(this, method, params);
    });
    const [plan] = compilePlans(spec.replace("sft { demos: 3, epochs: 2 }", sft));
    const runDir = RunDirectory.create(mkdtempSync(path.join(tmpdir(), "arl-sft-")), plan!);
    try {
      await executePlan({
        plan: plan!,
        runDir,
        trainer: { file: process.execPath, args: [scriptedTrainerScript] },
        envs: envKinds,
        log: () => undefined,
      });
    } finally {
      vi.restoreAllMocks();
    }
    return sent;
  }

  it("resets the optimizer once (optimizer fresh, the default), after the last SFT step and before checkpoint 0 and the first RL step; never with continue", async () => {
    // SFT step 1 and its end-of-epoch checkpoint, step 2, the reset, checkpoint 0 (the last epoch's), then RL's step and its checkpoint.
    expect(await optimizerRequests("sft { demos: 3, epochs: 2 }")).toEqual([
      "train_step",
      "save",
      "train_step",
      "reset_optimizer",
      "save",
      "train_step",
      "save",
    ]);
    expect(await optimizerRequests("sft { demos: 3, epochs: 2, optimizer: continue }")).toEqual([
      "train_step",
      "save",
      "train_step",
      "save",
      "train_step",
      "save",
    ]);
  }, 120_000);

  it("refuses optimizer fresh with a trainer without reset_optimizer, before training anything", async () => {
    const [plan] = compilePlans(spec);
    const runDir = RunDirectory.create(mkdtempSync(path.join(tmpdir(), "arl-sft-")), plan!);
    const logs: string[] = [];
    const trainer = { file: process.execPath, args: [scriptedTrainerScript], env: { DOUBLE_NO_RESET_OPTIMIZER: "1" } };
    await expect(
      executePlan({ plan: plan!, runDir, trainer, envs: envKinds, log: (l) => logs.push(l) }),
    ).rejects.toThrow(/rollout\.sft\.optimizer fresh .*reset_optimizer.*set rollout\.sft\.optimizer: continue/);
    expect(logs.some((l) => l.startsWith("sft epoch"))).toBe(false);
    const [continued] = compilePlans(
      spec.replace("sft { demos: 3, epochs: 2 }", "sft { demos: 3, epochs: 2, optimizer: continue }"),
    );
    const continuedDir = RunDirectory.create(mkdtempSync(path.join(tmpdir(), "arl-sft-")), continued!);
    expect(
      (await executePlan({ plan: continued!, runDir: continuedDir, trainer, envs: envKinds, log: () => undefined }))
        .iterations,
    ).toBe(1);
  }, 120_000);

  it("replays walkthroughs, trains on them for each epoch, then runs RL from the saved policy", async () => {
    const [plan] = compilePlans(spec);
    const runDir = RunDirectory.create(mkdtempSync(path.join(tmpdir(), "arl-sft-")), plan!);
    const logs: string[] = [];
    const summary = await executePlan({
      plan: plan!,
      runDir,
      trainer: { file: process.execPath, args: [scriptedTrainerScript] },
      envs: envKinds,
      log: (l) => logs.push(l),
    });
    expect(summary.iterations).toBe(1);
    expect(logs.filter((l) => l.startsWith("sft epoch")).length).toBe(2);
    expect(logs.find((l) => l.startsWith("sft epoch 1/2"))).toMatch(
      /3 demos in 1 step, negative log-likelihood [\d.]+ per token/,
    );
    expect(logs).toContain("sft: trained on 3 walkthroughs");
    expect(runDir.readState()).toMatchObject({ iteration: 1, sftDone: true });
  }, 120_000);

  it("evaluates the base policy before the cold start (eval.base) and reports it with iteration 1", async () => {
    const [plan] = compilePlans(spec.replace("before_training: false", "before_training: true, base: true"));
    const runDir = RunDirectory.create(mkdtempSync(path.join(tmpdir(), "arl-sft-")), plan!);
    const logs: string[] = [];
    await executePlan({
      plan: plan!,
      runDir,
      trainer: { file: process.execPath, args: [scriptedTrainerScript] },
      envs: envKinds,
      log: (l) => logs.push(l),
    });
    const mean = (file: string) => {
      const rows = readFileSync(file, "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as Record<string, number>);
      return rows.reduce((s, r) => s + r["pass@1"]!, 0) / rows.length;
    };
    const [first] = runDir.readMetrics();
    expect((first!.eval_base as Record<string, number>)["pass@1"]).toBeCloseTo(mean(runDir.evalPath("base")), 12);
    expect((first!.eval_before_training as Record<string, number>)["pass@1"]).toBeCloseTo(mean(runDir.evalPath(0)), 12);
    // The cold start still ran after the base evaluation.
    expect(logs.findIndex((l) => l.startsWith("sft epoch 1/"))).toBeGreaterThan(-1);
  }, 120_000);

  it("takes several optimizer steps per epoch with sft.batch, every demo once per epoch, without a log-probs pass when the trainer takes the on-policy step", async () => {
    const [plan] = compilePlans(spec.replace("sft { demos: 3, epochs: 2 }", "sft { demos: 5, epochs: 2, batch: 2 }"));
    const runDir = RunDirectory.create(mkdtempSync(path.join(tmpdir(), "arl-sft-")), plan!);
    const log = path.join(mkdtempSync(path.join(tmpdir(), "arl-sft-log-")), "train.jsonl");
    const logs: string[] = [];
    const trainer = {
      file: process.execPath,
      args: [scriptedTrainerScript],
      env: { DOUBLE_TRAIN_LOG: log, DOUBLE_ON_POLICY: "1" },
    };
    await executePlan({ plan: plan!, runDir, trainer, envs: envKinds, log: (l) => logs.push(l) });
    // The NLL the trainer reported with each step (the double's 0.25), not one of a logprobs pass.
    expect(logs.filter((l) => l.startsWith("sft epoch"))).toEqual([
      "sft epoch 1/2: 5 demos in 3 steps, negative log-likelihood 0.2500 per token",
      "sft epoch 2/2: 5 demos in 3 steps, negative log-likelihood 0.2500 per token",
    ]);
    const lines = readFileSync(log, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { ids?: number[][]; old_logprobs?: string | null; logprobs?: number });
    // No logprobs request before the RL iteration; its single on-policy step (one epoch of one
    // minibatch) takes old_logprobs null too (src/runtime/update/on-policy.ts).
    const firstLogprobs = lines.findIndex((l) => l.logprobs !== undefined);
    expect(firstLogprobs === -1 || firstLogprobs >= 6).toBe(true);
    const steps = lines.filter((l) => l.ids !== undefined) as { ids: number[][]; old_logprobs: string | null }[];
    expect(steps.map((s) => s.old_logprobs)).toEqual([null, null, null, null, null, null, null]);
    // 2 epochs x (2 + 2 + 1 demos), then the RL iteration's step.
    expect(steps.slice(0, 6).map((s) => s.ids.length)).toEqual([2, 2, 1, 2, 2, 1]);
    // Each epoch sees every demo once.
    const key = (ids: number[]) => ids.join(",");
    const epoch1 = steps
      .slice(0, 3)
      .flatMap((s) => s.ids.map(key))
      .sort();
    const epoch2 = steps
      .slice(3, 6)
      .flatMap((s) => s.ids.map(key))
      .sort();
    expect(new Set(epoch1).size).toBe(5);
    expect(epoch2).toEqual(epoch1);
  }, 120_000);

  it("refuses sft.lr with a trainer that cannot take a per-step rate, before training anything", async () => {
    const [plan] = compilePlans(spec.replace("sft { demos: 3, epochs: 2 }", "sft { demos: 3, epochs: 2, lr: 1e-2 }"));
    const runDir = RunDirectory.create(mkdtempSync(path.join(tmpdir(), "arl-sft-")), plan!);
    const logs: string[] = [];
    await expect(
      executePlan({
        plan: plan!,
        runDir,
        trainer: { file: process.execPath, args: [scriptedTrainerScript] },
        envs: envKinds,
        log: (l) => logs.push(l),
      }),
    ).rejects.toThrow(/rollout\.sft\.lr needs a trainer that takes a per-step learning rate \(capabilities\.step_lr\)/);
    expect(logs.some((l) => l.startsWith("sft epoch"))).toBe(false);
  }, 120_000);
});
