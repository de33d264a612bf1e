// What the preflight checks read (docs/semantics.md §11): the first training batch as the update
// will send it, one entry per trained sequence, and the shape of every check's result. The
// checks themselves are pure functions over these (logprobs.ts, boundaries.ts, signs.ts).

export type PreflightCheckName = "logprobs_reproduce" | "boundaries" | "signs";

/** One trained sequence of the first batch: an episode, or one model call of it (history: rerender). */
export interface PreflightSequence {
  readonly ids: Int32Array;
  readonly roles: Uint8Array;
  /** The update's loss mask (update.ts lossMask under the plan's mask.loss). */
  readonly lossMask: Uint8Array;
  /** The log-probs reported when the tokens were sampled (0 where not generated). */
  readonly sampled: Float32Array;
  /** The update's advantage of each token. */
  readonly advantages: Float32Array;
  /** The group label (iteration:group) the update compares this sequence in. */
  readonly group: string;
  /** The env of its task (task normalisation is per env). */
  readonly env: string;
  /** The task it played, `env/task`: one per group. */
  readonly task: string;
  readonly reward: number;
  /** Where to find it in the run: env, task and sample. */
  readonly label: string;
}

export type PreflightStatus = "passed" | "failed" | "off";

export interface PreflightCheckResult {
  readonly check: PreflightCheckName;
  readonly status: PreflightStatus;
  /** One line with the numbers the check measured. */
  readonly summary: string;
  /** What failed, one entry per fault found (the first few of each kind). */
  readonly failures: readonly string[];
  /** What usually causes this failure (only when it failed). */
  readonly hint?: string;
  /** The measured numbers, for preflight.json and the report. */
  readonly numbers: Readonly<Record<string, number | string | boolean | null>>;
}

/** preflight.json: what ran on which batch, and each check's verdict. */
export interface PreflightReport {
  readonly passed: boolean;
  readonly iteration: number;
  readonly sequences: number;
  readonly targets: number;
  readonly checks: readonly PreflightCheckResult[];
}

/** A check the plan turned off: listed, so the report says it did not run. */
export function offCheck(check: PreflightCheckName): PreflightCheckResult {
  return { check, status: "off", summary: `off (rollout.preflight.${check}: false)`, failures: [], numbers: {} };
}

/** At most `n` of `items`, then how many more there were. */
export function firstFew(items: readonly string[], n = 3): string[] {
  return items.length <= n ? [...items] : [...items.slice(0, n), `... and ${items.length - n} more`];
}

/** A number short enough for a message: 3 significant digits, exponent form when tiny. */
export function short(x: number): string {
  if (x === 0) return "0";
  return Math.abs(x) < 1e-3 || Math.abs(x) >= 1e5 ? x.toExponential(2) : Number(x.toPrecision(3)).toString();
}
