// Token-level GAE (PPO; docs/semantics.md §3): delta_t = r_t + gamma*V(next) - V(t),
// A_t = sum_l (gamma*lambda)^l delta_{t+l}. At the end V(next) is 0 if the episode terminated
// and the bootstrap V(h_T) if collection truncated it.
import { assertFinite } from "./stats.js";

export type EpisodeEnd = "terminated" | "truncated";

export interface GaeInput {
  /** Reward per step (per generated token; the turn's reward sits on its last token). */
  readonly rewards: readonly number[];
  /** V(h_t) per step. */
  readonly values: readonly number[];
  readonly gamma: number;
  readonly lambda: number;
  readonly end: EpisodeEnd;
  /** V(h_T), the value after the last step; required when truncated, unused when terminated. */
  readonly bootstrapValue?: number;
}

export interface GaeResult {
  readonly advantages: number[];
  /** A + V: the critic's regression targets. */
  readonly returns: number[];
}

export function gae(input: GaeInput): GaeResult {
  const { rewards, values, gamma, lambda, end } = input;
  const T = rewards.length;
  if (values.length !== T) throw new RangeError(`gae: ${T} rewards but ${values.length} values`);
  assertFinite(rewards, "rewards");
  assertFinite(values, "values");
  if (!(gamma >= 0 && gamma <= 1)) throw new RangeError(`gae: gamma must be in [0, 1], got ${gamma}`);
  if (!(lambda >= 0 && lambda <= 1)) throw new RangeError(`gae: lambda must be in [0, 1], got ${lambda}`);
  let last: number;
  if (end === "terminated") last = 0;
  else if (end === "truncated") {
    if (input.bootstrapValue === undefined || !Number.isFinite(input.bootstrapValue))
      throw new RangeError("gae: a truncated episode needs a finite bootstrap value V(h_T)");
    last = input.bootstrapValue;
  } else throw new RangeError(`gae: end must be 'terminated' or 'truncated', got '${String(end)}'`);

  const advantages = new Array<number>(T).fill(0);
  let next = 0;
  for (let t = T - 1; t >= 0; t--) {
    const vNext = t === T - 1 ? last : (values[t + 1] as number);
    const delta = (rewards[t] as number) + gamma * vNext - (values[t] as number);
    next = delta + gamma * lambda * next;
    advantages[t] = next;
  }
  return { advantages, returns: advantages.map((a, t) => a + (values[t] as number)) };
}

/**
 * GAE over one trajectory's tokens where only generated tokens (mask 1) are steps: observation
 * tokens carry no action and are skipped, so V(next) of a turn's last token is the value at the
 * next generated token. Non-target positions get advantage 0 and return 0.
 */
export function maskedGae(input: GaeInput & { readonly mask: readonly number[] }): GaeResult {
  const { mask } = input;
  if (mask.length !== input.rewards.length)
    throw new RangeError(`maskedGae: ${input.rewards.length} rewards but ${mask.length} mask entries`);
  const steps: number[] = [];
  mask.forEach((m, k) => {
    if (m !== 0 && m !== 1) throw new RangeError(`maskedGae: mask[${k}] must be 0 or 1`);
    if (m === 1) steps.push(k);
    else if (input.rewards[k] !== 0)
      throw new RangeError(
        `maskedGae: reward at position ${k}, which is not a generated token (rewards sit on a turn's last generated token)`,
      );
  });
  if (input.values.length !== mask.length)
    throw new RangeError(`maskedGae: ${mask.length} positions but ${input.values.length} values`);
  const inner = gae({
    ...input,
    rewards: steps.map((k) => input.rewards[k] as number),
    values: steps.map((k) => input.values[k] as number),
  });
  const advantages = new Array<number>(mask.length).fill(0);
  const returns = new Array<number>(mask.length).fill(0);
  steps.forEach((k, j) => {
    advantages[k] = inner.advantages[j] as number;
    returns[k] = inner.returns[j] as number;
  });
  return { advantages, returns };
}
