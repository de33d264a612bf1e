// The table `arl run` ends with: one row per evaluation, the starting policy's first.
import { describe, expect, it } from "vitest";
import { runSummary } from "../../src/runtime/summary.js";

const time = { rollout_s: 1, reward_s: 0.5, update_s: 2, total_s: 4 };

describe("run summary", () => {
  it("lists the base policy's and the starting policy's evaluations, then each evaluation with its interval, then where the time went", () => {
    const table = runSummary([
      {
        iteration: 1,
        success: 0.25,
        reward: 0.25,
        eval_base: { "pass@1": 0, "pass@1_low": 0, "pass@1_high": 0 },
        eval_before_training: { "pass@1": 0.125, "pass@1_low": 0.05, "pass@1_high": 0.2 },
        time,
      },
      { iteration: 2, success: 0.5, reward: 0.5, eval: { "pass@1": 0.4, "pass@1_low": 0.3, "pass@1_high": 0.5 }, time },
    ]);
    expect(table.split("\n")).toEqual([
      "iteration      train success  reward  eval pass@1 [95% CI]",
      "-------------  -------------  ------  --------------------",
      "base (no SFT)  -              -       0.000 [0.000, 0.000]",
      "0 (start)      -              -       0.125 [0.050, 0.200]",
      "2              0.500          0.500   0.400 [0.300, 0.500]",
      "time: 8.0 s in iterations (rollout 2.0 s, rewards and advantages 1.0 s, updates 4.0 s)",
      "",
    ]);
  });

  it("counts the phases before iteration 1 (base eval, cold start, evaluation before training) in the run's time", () => {
    const first = { ...time, base_eval_s: 1, sft_s: 2.5, eval_before_s: 0.5, total_s: 8 };
    const lines = runSummary([
      { iteration: 1, success: 0.25, reward: 0.25, time: first },
      { iteration: 2, success: 0.5, reward: 0.5, time },
    ]).split("\n");
    expect(lines).toContain(
      "time: 12.0 s in all, 4.0 s before iteration 1 (base eval 1.0 s, cold start 2.5 s, evaluation before training 0.5 s); in iterations (rollout 2.0 s, rewards and advantages 1.0 s, updates 4.0 s)",
    );
  });

  it("shows the last iteration when nothing was evaluated, and says so when nothing ran", () => {
    expect(runSummary([{ iteration: 3, success: 1, reward: 2, time }]).split("\n")[2]).toBe(
      "3          1.000          2.000",
    );
    expect(runSummary([])).toBe("no iteration was completed\n");
  });

  it("ends with the watchdog's warnings: per code, the iterations it fired in and its latest message", () => {
    const noSignal = (n: number) => ({ code: "no-signal", message: `no learning signal for ${n} iterations in a row` });
    const lines = runSummary([
      {
        iteration: 1,
        success: 0,
        reward: 0,
        time,
        warnings: [{ code: "env-errors", message: "3 of 8 episodes ended in an env error" }],
      },
      { iteration: 2, success: 0, reward: 0, time },
      { iteration: 3, success: 0, reward: 0, time, warnings: [noSignal(3)] },
      { iteration: 4, success: 0, reward: 0, time, warnings: [noSignal(4)] },
    ]).split("\n");
    expect(lines.slice(-3)).toEqual([
      "WARNING [env-errors] in iteration 1: 3 of 8 episodes ended in an env error",
      "WARNING [no-signal] in iterations 3, 4: no learning signal for 4 iterations in a row",
      "",
    ]);
  });
});
