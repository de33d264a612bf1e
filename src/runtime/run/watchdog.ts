// The watchdog (rollout.watchdog): after each iteration, warnings that a run is not learning or
// its episodes are not what the spec meant. Pure functions over what the iteration's metrics
// line and episodes say, so a resumed run reads its streak back from metrics.jsonl.
import type { Plan } from "../../plan/schema.js";
import type { EndReason } from "../../episode/buffer.js";

export type WatchdogSettings = Plan["rollout"]["watchdog"];

/** What a metrics line says about the iteration's signal (metrics.jsonl keeps these fields). */
export interface SignalOfIteration {
  readonly iteration: number;
  readonly effective_group_ratio: number;
  /** Groups (of those the update saw) whose rewards were not all equal, a fraction. */
  readonly varied_group_ratio: number;
  readonly grad_norm: number;
}

/** One episode of the iteration as the watchdog reads it. */
export interface WatchedEpisode {
  readonly reward: number;
  readonly success: boolean;
  readonly end: EndReason;
  readonly turns: number;
  /** An env error's message (not in the buffer: the warning is where it is seen). */
  readonly error?: string;
}

export type WatchdogCode = "no-signal" | "truncated-first-turn" | "env-errors";

export interface WatchdogWarning {
  readonly code: WatchdogCode;
  readonly message: string;
}

export interface WatchdogVerdict {
  readonly warnings: readonly WatchdogWarning[];
  /** on_no_signal is `stop` and the no-signal warning fired: the run ends after this commit. */
  readonly stop: boolean;
}

/** The signal fields of metrics.jsonl's lines (a resumed run's streak starts from them). */
export function signalsOfMetrics(lines: readonly Record<string, unknown>[]): SignalOfIteration[] {
  const num = (x: unknown) => (typeof x === "number" ? x : Number.NaN);
  return lines.map((l) => ({
    iteration: num(l.iteration),
    effective_group_ratio: num(l.effective_group_ratio),
    varied_group_ratio: num(l.varied_group_ratio),
    grad_norm: num(l.grad_norm),
  }));
}

/**
 * An iteration with no learning signal: every group's rewards were all equal (without a baseline
 * a constant reward still gives advantages, but they rank nothing), no group had a non-zero
 * advantage, or the update's gradient was 0. A field a line lacks (NaN) is no verdict.
 */
function hasNoSignal(m: SignalOfIteration): boolean {
  return m.varied_group_ratio === 0 || m.effective_group_ratio === 0 || m.grad_norm === 0;
}

/** How many iterations up to and including `current` in a row had no signal (`previous` in iteration order). */
export function noSignalStreak(previous: readonly SignalOfIteration[], current: SignalOfIteration): number {
  if (!hasNoSignal(current)) return 0;
  let streak = 1;
  for (let i = previous.length - 1; i >= 0; i--) {
    const m = previous[i];
    if (!m || !hasNoSignal(m) || m.iteration !== current.iteration - streak) break;
    streak++;
  }
  return streak;
}

const share = (n: number, total: number) => `${n} of ${total}`;

/** The first env error's message, shortened: what the env said when it failed. */
function firstError(episodes: readonly WatchedEpisode[]): string {
  const message = episodes.find((e) => e.end === "env_error" && e.error)?.error;
  if (!message) return "";
  const line = message.replace(/\s+/g, " ").trim();
  return `; the first error: ${JSON.stringify(line.length > 200 ? `${line.slice(0, 200)}...` : line)}`;
}

/** Why every episode ended the same abnormal way, for the end reasons other than env_error. */
const SAME_END: Record<"truncated" | "aborted", string> = {
  truncated:
    "a budget cuts every episode (harness.max_turns, max_total_tokens, max_response_tokens or policy.sampling.max_new_tokens)",
  aborted:
    "a budget ends every episode (harness.max_turns, max_total_tokens or max_response_tokens, on_budget: terminate)",
};

/**
 * The likely cause of no signal, read from the iteration's episodes: what success and the
 * rewards did (env errors aside: they get no reward), then, when every episode ended the same
 * abnormal way, that too.
 */
export function likelyCause(episodes: readonly WatchedEpisode[], m: SignalOfIteration): string {
  const total = episodes.length;
  if (total === 0) return "the iteration played no episodes";
  const ends = new Set(episodes.map((e) => e.end));
  const onlyEnd = ends.size === 1 ? [...ends][0] : undefined;
  if (onlyEnd === "env_error")
    return `every episode ended 'env_error' (${total}): the env fails every episode${firstError(episodes)}`;
  const sameEnd =
    onlyEnd === "truncated" || onlyEnd === "aborted"
      ? `; every episode ended '${onlyEnd}' (${total}): ${SAME_END[onlyEnd]}`
      : "";
  return `${outcomeCause(
    episodes.filter((e) => e.end !== "env_error"),
    m,
  )}${sameEnd}`;
}

/** What success and the rewards of the played episodes (at least one) say about the missing signal. */
function outcomeCause(played: readonly WatchedEpisode[], m: SignalOfIteration): string {
  const successes = played.filter((e) => e.success).length;
  const rewards = [...new Set(played.map((e) => e.reward))];
  const sameReward = rewards.length === 1 ? `every episode got the same reward (${rewards.join("")})` : undefined;
  const also = sameReward ? ` and ${sameReward}` : "";
  if (successes === 0)
    return `success never fired (0 of ${played.length} episodes)${also}: the task is too hard for the policy, or the success signal never fires`;
  if (successes === played.length)
    return `success always fired (${played.length} of ${played.length} episodes)${also}: the task is too easy for the policy`;
  if (sameReward)
    return `${sameReward} although success fired in ${share(successes, played.length)} episodes: the reward does not depend on what the agent did`;
  if (m.varied_group_ratio > 0 && m.effective_group_ratio > 0)
    return "groups had differing rewards but the gradient norm is 0: no token of the batch is a training target (mask), or the learning rate is 0";
  return `success fired in ${share(successes, played.length)} episodes, but each task's group got equal rewards: every task is all-or-nothing for the policy; raise policy.sampling.temperature or algorithm.group_size`;
}

/** The warnings of `current` given the iterations committed before it (`previous`, metrics.jsonl order). */
export function watchIteration(
  settings: WatchdogSettings,
  previous: readonly SignalOfIteration[],
  current: SignalOfIteration,
  episodes: readonly WatchedEpisode[],
): WatchdogVerdict {
  const warnings: WatchdogWarning[] = [];
  const streak = noSignalStreak(previous, current);
  const noSignal = streak >= settings.no_signal_iterations;
  if (noSignal) {
    const what = `groups with differing rewards ${current.varied_group_ratio.toFixed(3)}, effective group ratio ${current.effective_group_ratio.toFixed(3)}, gradient norm ${current.grad_norm.toPrecision(3)}`;
    warnings.push({
      code: "no-signal",
      message: `no learning signal for ${streak} iterations in a row (${what}): ${likelyCause(episodes, current)}`,
    });
  }
  const total = episodes.length;
  const cutAtFirst = episodes.filter((e) => e.end === "truncated" && e.turns <= 1).length;
  if (total > 0 && cutAtFirst === total) {
    warnings.push({
      code: "truncated-first-turn",
      message: `every episode (${total}) was truncated at its first turn: the first response never fits harness.max_response_tokens / policy.sampling.max_new_tokens, or harness.max_turns is 1`,
    });
  }
  const envErrors = episodes.filter((e) => e.end === "env_error").length;
  if (total > 0 && envErrors / total > settings.max_env_error_fraction) {
    warnings.push({
      code: "env-errors",
      message: `${share(envErrors, total)} episodes ended in an env error (${((100 * envErrors) / total).toFixed(0)}%, above rollout.watchdog.max_env_error_fraction ${settings.max_env_error_fraction}): the env is failing its episodes, and they teach the policy nothing${firstError(episodes)}`,
    });
  }
  return { warnings, stop: noSignal && settings.on_no_signal === "stop" };
}
