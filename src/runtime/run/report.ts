// After each committed iteration: the progress callback (a live status line in `arl run`) and
// one log line with its success, reward, tokens and evaluation.
import type { EvalSummary, RunContext } from "./context.js";
import type { IterationMetrics } from "./metrics.js";

/** When the iterations of this invocation began, for the seconds per iteration (a resumed run counts only its own). */
export interface RunPace {
  readonly started: number;
  readonly firstIteration: number;
}

/**
 * Reports committed `metrics`; `rolloutSeconds` is its rollout's own wall time, `evaluation` its
 * evaluation if it had one, `firstEnvError` what the first env error said (a timed-out env names
 * the request it did not answer).
 */
export function reportIteration(
  ctx: RunContext,
  metrics: IterationMetrics,
  rolloutSeconds: number,
  pace: RunPace,
  evaluation: EvalSummary | undefined,
  firstEnvError?: string,
): void {
  const { plan } = ctx;
  const { iteration } = metrics;
  const elapsed = (Date.now() - pace.started) / 1000;
  ctx.progress?.({
    iteration,
    iterations: plan.rollout.iterations,
    success: metrics.success,
    reward: metrics.reward,
    tokensPerSecond: metrics.tokens / Math.max(1e-9, rolloutSeconds),
    secondsPerIteration: elapsed / Math.max(1, iteration - pace.firstIteration + 1),
  });
  ctx.log(
    `iteration ${iteration}/${plan.rollout.iterations}: success ${metrics.success.toFixed(3)}, reward ${metrics.reward.toFixed(3)}, ${metrics.tokens} tokens` +
      (metrics.lag_drops ? `, ${metrics.lag_drops} samples dropped for policy lag` : "") +
      (metrics.env_errors
        ? `, ${metrics.env_errors} env error${metrics.env_errors === 1 ? "" : "s"}${firstEnvError ? ` (first: ${firstEnvError})` : ""}`
        : "") +
      (evaluation ? `, eval ${evalText(evaluation)}` : ""),
  );
  for (const w of metrics.warnings ?? []) ctx.log(`WARNING [${w.code}] iteration ${iteration}: ${w.message}`);
}

/** pass@k of an evaluation; none when no task had k episodes its env played (every one an env error). */
function evalText(evaluation: EvalSummary): string {
  const shown = Object.entries(evaluation).filter(([k]) => !k.includes("_"));
  return shown.length > 0
    ? shown.map(([k, v]) => `${k} ${v.toFixed(3)}`).join(" ")
    : "none (its episodes ended in env errors)";
}
