// Small helpers shared by the rules: number formatting and the facts several rules ask about.
import type { RewardExpr } from "../semantics/expressions.js";
import type { ExperimentConfig } from "../semantics/schema/experiment.js";

/** At most `decimals` decimals, trailing zeros dropped: 0.75, 0.875, 0.9, 0.667. */
export function formatNumber(x: number, decimals = 3): string {
  return String(Number(x.toFixed(decimals)));
}

/** Advantages computed relative to the other samples of the group (mean/LOO baseline or std). */
export function isGroupRelative(config: ExperimentConfig): boolean {
  const a = config.algorithm.advantage;
  return a.estimator === "group" && (a.baseline !== "none" || a.normalize === "std");
}

/** `'a'`, `'a' and 'b'`, `'a', 'b' and 'c'`. */
export function quoteList(items: readonly string[]): string {
  const q = items.map((i) => `'${i}'`);
  return q.length <= 1 ? (q[0] ?? "") : `${q.slice(0, -1).join(", ")} and ${q[q.length - 1]}`;
}

/** A signal as the user would write it. */
export function signalName(s: Extract<RewardExpr, { op: "signal" }>): string {
  return s.namespace === "named_env" ? `${s.env}.${s.name}` : `${s.namespace}.${s.name}`;
}

/**
 * The declarations of the signal an expression reads, across the envs it can come from:
 * `outcome.x`, `state.x` and `env.x` from every env (each episode comes from one of them),
 * `NAME.x` from env NAME only.
 */
export function signalDeclarations(config: ExperimentConfig, s: Extract<RewardExpr, { op: "signal" }>) {
  const envs =
    s.namespace === "named_env"
      ? s.env
        ? [s.env]
        : []
      : s.namespace === "episode" || s.namespace === "tool"
        ? []
        : Object.keys(config.env);
  return envs.flatMap((env) => {
    const declared = config.env[env]?.signals[s.name];
    return declared ? [{ env, signal: declared }] : [];
  });
}
