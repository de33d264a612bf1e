// A smallest runnable spec around one swe env (named `repo`), for the swe env's tests.

/** The spec with `env` (an `env repo ...` block) as its only env: one iteration of GRPO on builtin:tiny. */
export function sweSpec(env: string): string {
  return `
import "std/algorithms" as algo
import "std/envs/swe" as swe

experiment swe_check {
  seed: 0
  policy { model: "builtin:tiny", sampling { temperature: 1.0, max_new_tokens: 32 } }
  ${env}
  harness { tools: repo.tools, format: function_call, max_turns: 2, max_response_tokens: 32, on_budget: truncate }
  reward { resolved: outcome.resolved }
  algorithm extends algo.grpo { group_size: 4, kl { coef: 0.0 } }
  rollout { tasks_per_batch: 1, iterations: 1, concurrency: 4 }
  resources { backend: local }
  allow { self-inclusive-baseline: "a test of the env, not of the baseline" }
}
`;
}
