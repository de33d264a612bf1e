// The supervised cold start: walkthroughs replayed through the harness (same token layout as
// RL episodes), trained on through the protocol before the first iteration, then checkpointed.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { envKinds } from "../../src/envs/registry.js";
import { executePlan } from "../../src/runtime/orchestrator.js";
import { RunDirectory } from "../../src/runtime/run-dir.js";
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
  it("replays walkthroughs, trains on them for each epoch, then runs RL from the saved policy", async () => {
    const [plan] = compilePlans(spec);
    const runDir = RunDirectory.create(mkdtempSync(path.join(tmpdir(), "arl-sft-")), plan!);
    const logs: string[] = [];
    const summary = await executePlan({ plan: plan!, runDir, trainer: { file: process.execPath, args: [scriptedTrainerScript] }, envs: envKinds, log: (l) => logs.push(l) });
    expect(summary.iterations).toBe(1);
    expect(logs.filter((l) => l.startsWith("sft epoch")).length).toBe(2);
    expect(logs.find((l) => l.startsWith("sft epoch 1/2"))).toMatch(/3 demos, negative log-likelihood [\d.]+ per token/);
    expect(logs).toContain("sft: trained on 3 walkthroughs");
    expect(runDir.readState()).toMatchObject({ iteration: 1, sftDone: true });
  }, 120_000);
});
