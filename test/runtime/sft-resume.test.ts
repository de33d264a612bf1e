// An interrupted cold start resumes to the result of one that never stopped: the embedded
// trainer (real weights and AdamW state in its checkpoints) runs a cold start of 2 epochs of 2
// steps with a checkpoint after every step; the run is stopped at once (its trainer killed) as
// epoch 1 ends, before step 2's checkpoint, so the resumed cold start continues mid-epoch from
// step 1 with that step's summed loss carried over; that one is asked to stop (Ctrl-C) and stops
// at its next checkpoint; the next resume finishes the cold start (its optimizer reset before
// checkpoint 0, rollout.sft.optimizer fresh) and is killed right after, and the last one runs RL. Its metrics lines (timings
// aside), the cold start's losses and the final checkpoint's bytes equal the uninterrupted run's.
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { envKinds } from "../../src/envs/registry.js";
import { executePlan, RunError } from "../../src/runtime/orchestrator.js";
import { RunDirectory } from "../../src/runtime/run-dir.js";
import { compilePlans, embeddedTrainer } from "../helpers/plans.js";

const spec = `
import "std/envs/rooms" as rooms

experiment cold_start {
  seed: 5
  policy { model: "builtin:tiny", sampling { max_new_tokens: 8 } }
  env quest extends rooms.world { tasks: 20 }
  harness { tools: quest.tools, format: text_action, max_turns: 2 }
  reward { success: outcome.success }
  algorithm { group_size: 2, advantage { baseline: leave_one_out } }
  rollout { tasks_per_batch: 1, iterations: 1, sft { demos: 4, epochs: 2, batch: 2, checkpoint_every: 1 } }
  eval { every: 1, tasks: 1, samples_per_task: 1, k: [1], before_training: false, base: true }
}
`;

const withoutTimes = (lines: Record<string, unknown>[]) => lines.map(({ time: _time, ...rest }) => rest);
const bytes = (dir: string, file: string) => readFileSync(path.join(dir, "checkpoints", "iteration-00001", file));

describe("an interrupted cold start", () => {
  it("resumes from its last checkpoint to the losses, metrics and weights of an uninterrupted run", async () => {
    const [plan] = compilePlans(spec);
    const reference = RunDirectory.create(mkdtempSync(path.join(tmpdir(), "arl-sft-ref-")), plan!);
    await executePlan({
      plan: plan!,
      runDir: reference,
      trainer: embeddedTrainer,
      envs: envKinds,
      log: () => undefined,
    });

    const runDir = RunDirectory.create(mkdtempSync(path.join(tmpdir(), "arl-sft-cut-")), plan!);
    const halt = new AbortController();
    const logs: string[] = [];
    // Stopped at once when epoch 1 ends (after step 2, before its checkpoint): step 1's is the last committed.
    const log = (line: string) => {
      logs.push(line);
      if (line.startsWith("sft epoch 1/2")) halt.abort();
    };
    const error = await executePlan({
      plan: plan!,
      runDir,
      trainer: embeddedTrainer,
      envs: envKinds,
      log,
      halt: halt.signal,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RunError);
    expect((error as RunError).halted).toBe(true);
    const cut = runDir.readState();
    expect(cut).toMatchObject({ sftDone: false, iteration: 0, sftProgress: { step: 1, epochs: [] } });
    expect(cut.sftProgress!.targets).toBeGreaterThan(0);
    expect(path.basename(cut.checkpoint!)).toBe("sft-step-000001");
    // The base evaluation was committed with the first checkpoint and is not repeated.
    expect(cut.baseEval).toBeDefined();

    // Resumed, then asked to stop (Ctrl-C) as epoch 1 ends: it stops at the next checkpoint, step 2's.
    const stop = new AbortController();
    const stoppedLogs: string[] = [];
    const stopLog = (line: string) => {
      stoppedLogs.push(line);
      if (line.startsWith("sft epoch 1/2")) stop.abort();
    };
    const stopped = await executePlan({
      plan: plan!,
      runDir,
      trainer: embeddedTrainer,
      envs: envKinds,
      log: stopLog,
      stop: stop.signal,
    });
    expect(stopped).toMatchObject({ iterations: 0, stopped: true, stoppedAt: "the cold start's step 2" });
    expect(stoppedLogs).toContain(`resumed the cold start after its step 1 from ${cut.checkpoint}`);
    expect(stoppedLogs).toContain("sft: resuming after step 1 of 4 (epoch 1/2)");
    expect(stoppedLogs.find((l) => l.startsWith("trainer (pid"))).toMatch(/exited with status 0$/);
    expect(runDir.readState()).toMatchObject({ sftDone: false, sftProgress: { step: 2, nll: 0, targets: 0 } });
    expect(runDir.readState().sftProgress!.epochs).toHaveLength(1);

    // Resumed again, and stopped at once (trainer killed) as soon as checkpoint 0 is committed: the
    // optimizer was reset before it (rollout.sft.optimizer fresh), so RL resumes from the reset state.
    const resumedLogs: string[] = [];
    const afterSft = new AbortController();
    const killed = await executePlan({
      plan: plan!,
      runDir,
      trainer: embeddedTrainer,
      envs: envKinds,
      log: (l) => {
        resumedLogs.push(l);
        if (l.startsWith("sft: trained on")) afterSft.abort();
      },
      halt: afterSft.signal,
    }).catch((e: unknown) => e);
    expect((killed as RunError).halted).toBe(true);
    expect(runDir.readState()).toMatchObject({ sftDone: true, iteration: 0 });
    expect(path.basename(runDir.readState().checkpoint!)).toBe("iteration-00000");
    expect(resumedLogs).toContain("sft: resuming after step 2 of 4 (epoch 2/2)");
    expect(resumedLogs.filter((l) => l.startsWith("sft epoch")).map((l) => l.slice(0, 12))).toEqual(["sft epoch 2/"]);
    expect(resumedLogs.some((l) => l.startsWith("base eval"))).toBe(false);

    const summary = await executePlan({
      plan: plan!,
      runDir,
      trainer: embeddedTrainer,
      envs: envKinds,
      log: () => undefined,
    });
    expect(summary.iterations).toBe(1);
    expect(withoutTimes(runDir.readMetrics())).toEqual(withoutTimes(reference.readMetrics()));
    expect(runDir.readState().sft).toEqual(reference.readState().sft);
    for (const file of ["model.safetensors", "optimizer.safetensors"])
      expect(bytes(runDir.dir, file).equals(bytes(reference.dir, file)), file).toBe(true);
    // Only the final checkpoint is left; the cold start's own were replaced as it went.
    expect(existsSync(cut.checkpoint!)).toBe(false);
    // The report's wall time counts the phases before iteration 1.
    const [first] = runDir.readMetrics();
    const time = first!.time as { sft_s: number; base_eval_s: number; total_s: number };
    expect(time.sft_s).toBeGreaterThan(0);
    expect(time.base_eval_s).toBeGreaterThan(0);
    expect(time.total_s).toBeGreaterThanOrEqual(time.sft_s + time.base_eval_s);
  }, 120_000);
});
