// The watchdog as pure functions: the no-signal streak, the cause it reads from the episodes,
// and the end-reason warnings with their counts.
import { describe, expect, it } from "vitest";
import {
  likelyCause,
  noSignalStreak,
  signalsOfMetrics,
  watchIteration,
  type SignalOfIteration,
  type WatchedEpisode,
} from "../../src/runtime/run/watchdog.js";

const settings = { no_signal_iterations: 3, on_no_signal: "warn" as const, max_env_error_fraction: 0.2 };
const flat = (iteration: number): SignalOfIteration => ({
  iteration,
  effective_group_ratio: 0,
  varied_group_ratio: 0,
  grad_norm: 0,
});
const live = (iteration: number): SignalOfIteration => ({
  iteration,
  effective_group_ratio: 0.5,
  varied_group_ratio: 0.5,
  grad_norm: 0.3,
});
const episode = (o: Partial<WatchedEpisode> = {}): WatchedEpisode => ({
  reward: 0,
  success: false,
  end: "finished",
  turns: 2,
  ...o,
});
const many = (n: number, o: Partial<WatchedEpisode> = {}) => Array.from({ length: n }, () => episode(o));

describe("no-signal streak", () => {
  it("counts consecutive iterations whose group ratios or gradient norm is 0, back to the last one with signal", () => {
    expect(noSignalStreak([], flat(1))).toBe(1);
    expect(noSignalStreak([flat(1), flat(2)], flat(3))).toBe(3);
    expect(noSignalStreak([flat(1), live(2), flat(3)], flat(4))).toBe(2);
    expect(noSignalStreak([flat(1), flat(2)], live(3))).toBe(0);
    // A zero gradient norm alone is no signal; so is a zero effective ratio with a KL-only
    // gradient, and all-equal rewards that a baseline-free advantage still turns into a gradient.
    const zeroGrad = { iteration: 1, effective_group_ratio: 0.5, varied_group_ratio: 0.5, grad_norm: 0 };
    const klOnly = { iteration: 2, effective_group_ratio: 0, varied_group_ratio: 0, grad_norm: 0.1 };
    const constantReward = { iteration: 3, effective_group_ratio: 1, varied_group_ratio: 0, grad_norm: 0.02 };
    expect(noSignalStreak([zeroGrad, klOnly], constantReward)).toBe(3);
    // A line written before varied_group_ratio existed reads as NaN: no verdict from that field.
    expect(
      noSignalStreak([], { iteration: 1, effective_group_ratio: 0.5, varied_group_ratio: Number.NaN, grad_norm: 0.1 }),
    ).toBe(0);
  });

  it("reads the streak of a resumed run from metrics.jsonl's lines", () => {
    const lines = [
      { iteration: 1, effective_group_ratio: 0, varied_group_ratio: 0, grad_norm: 0, success: 0 },
      { iteration: 2, effective_group_ratio: 0, varied_group_ratio: 0, grad_norm: 0 },
    ];
    expect(signalsOfMetrics(lines)).toEqual([flat(1), flat(2)]);
    expect(noSignalStreak(signalsOfMetrics(lines), flat(3))).toBe(3);
  });
});

describe("watchIteration", () => {
  it("warns from the Nth iteration without signal on, and asks to stop only under on_no_signal: stop", () => {
    const episodes = many(8);
    expect(watchIteration(settings, [flat(1)], flat(2), episodes)).toEqual({ warnings: [], stop: false });
    const third = watchIteration(settings, [flat(1), flat(2)], flat(3), episodes);
    expect(third.stop).toBe(false);
    expect(third.warnings).toEqual([
      {
        code: "no-signal",
        message:
          "no learning signal for 3 iterations in a row (groups with differing rewards 0.000, effective group ratio 0.000, gradient norm 0.00): success never fired (0 of 8 episodes) and every episode got the same reward (0): the task is too hard for the policy, or the success signal never fires",
      },
    ]);
    expect(watchIteration({ ...settings, on_no_signal: "stop" }, [flat(1), flat(2)], flat(3), episodes).stop).toBe(
      true,
    );
    expect(watchIteration({ ...settings, on_no_signal: "stop" }, [flat(1), flat(2)], live(3), episodes)).toEqual({
      warnings: [],
      stop: false,
    });
  });

  it("warns when every episode was truncated at its first turn, with the count", () => {
    const cut = many(6, { end: "truncated", turns: 1 });
    expect(watchIteration(settings, [], live(1), cut).warnings.map((w) => [w.code, w.message.slice(0, 50)])).toEqual([
      ["truncated-first-turn", "every episode (6) was truncated at its first turn:"],
    ]);
    // One episode that got past its first turn is no such warning.
    expect(
      watchIteration(settings, [], live(1), [...cut.slice(1), episode({ end: "truncated", turns: 3 })]).warnings,
    ).toEqual([]);
  });

  it("warns when env errors exceed the threshold, with the counts, and not at it", () => {
    const three = [
      ...many(3, { end: "env_error", error: "the env process exited (code 3)\n  before replying" }),
      ...many(7),
    ];
    expect(watchIteration(settings, [], live(1), three).warnings).toEqual([
      {
        code: "env-errors",
        message:
          '3 of 10 episodes ended in an env error (30%, above rollout.watchdog.max_env_error_fraction 0.2): the env is failing its episodes, and they teach the policy nothing; the first error: "the env process exited (code 3) before replying"',
      },
    ]);
    expect(watchIteration(settings, [], live(1), [...many(2, { end: "env_error" }), ...many(8)]).warnings).toEqual([]);
  });
});

describe("likely cause", () => {
  it("names the one way every episode ended, after what success and the rewards did", () => {
    expect(likelyCause(many(4, { end: "truncated", turns: 4 }), flat(1))).toBe(
      "success never fired (0 of 4 episodes) and every episode got the same reward (0): the task is too hard for the policy, or the success signal never fires; every episode ended 'truncated' (4): a budget cuts every episode (harness.max_turns, max_total_tokens, max_response_tokens or policy.sampling.max_new_tokens)",
    );
    expect(likelyCause(many(4, { end: "aborted", success: true }), flat(1))).toMatch(
      /^success always fired .*; every episode ended 'aborted' \(4\): a budget ends every episode/,
    );
    // An env that fails every episode is the cause by itself: there is no outcome to read.
    expect(likelyCause(many(4, { end: "env_error", error: "reset failed" }), flat(1))).toBe(
      "every episode ended 'env_error' (4): the env fails every episode; the first error: \"reset failed\"",
    );
  });

  it("tells a task too hard from one too easy by whether success fired", () => {
    expect(likelyCause([...many(3), episode({ end: "truncated", reward: -1 })], flat(1))).toMatch(
      /^success never fired \(0 of 4 episodes\): the task is too hard/,
    );
    expect(likelyCause(many(4, { success: true, reward: 1 }), flat(1))).toBe(
      "success always fired (4 of 4 episodes) and every episode got the same reward (1): the task is too easy for the policy",
    );
    // Env errors are not counted among the played episodes.
    expect(likelyCause([...many(3, { success: true }), episode({ end: "env_error" })], flat(1))).toMatch(
      /^success always fired \(3 of 3 episodes\)/,
    );
  });

  it("tells a reward that ignores the outcome from tasks that are all-or-nothing within their group", () => {
    const mixed = [episode({ success: true, reward: 0.5 }), episode({ reward: 0.5 })];
    expect(likelyCause(mixed, flat(1))).toBe(
      "every episode got the same reward (0.5) although success fired in 1 of 2 episodes: the reward does not depend on what the agent did",
    );
    const allOrNothing = [episode({ success: true, reward: 1 }), episode({ reward: 0 })];
    expect(likelyCause(allOrNothing, flat(1))).toMatch(
      /^success fired in 1 of 2 episodes, but each task's group got equal rewards/,
    );
    expect(
      likelyCause(allOrNothing, { iteration: 1, effective_group_ratio: 0.5, varied_group_ratio: 0.5, grad_norm: 0 }),
    ).toMatch(/gradient norm is 0: no token of the batch is a training target/);
    expect(likelyCause([], flat(1))).toBe("the iteration played no episodes");
  });
});
