// The typed expression IR over run-time signals that reward terms and constraint conditions
// lower to (the plan carries it, the runtime evaluates it), and the signals and functions an
// expression may name.

export type SignalNamespace = "outcome" | "state" | "episode" | "env" | "tool" | "named_env";
export type ExprType = "bool" | "number" | "string";

export type RewardExpr =
  | { readonly op: "const"; readonly value: number | string | boolean }
  | {
      readonly op: "signal";
      readonly namespace: SignalNamespace;
      /** For `named_env`, the env whose signal this is. */
      readonly env?: string;
      readonly name: string;
      readonly type: "bool" | "number" | "count" | "string";
      /** `outcome`: known at the end of the episode; `state`: after every step. */
      readonly timing: "outcome" | "state";
    }
  | {
      readonly op: "+" | "-" | "*" | "/" | "%" | "==" | "!=" | "<" | "<=" | ">" | ">=" | "and" | "or";
      readonly args: readonly [RewardExpr, RewardExpr];
    }
  | { readonly op: "neg" | "not"; readonly args: readonly [RewardExpr] }
  | { readonly op: "when"; readonly args: readonly [RewardExpr, RewardExpr] }
  | { readonly op: "min" | "max"; readonly args: readonly RewardExpr[] }
  | { readonly op: "abs"; readonly args: readonly [RewardExpr] }
  | { readonly op: "clip"; readonly args: readonly [RewardExpr, RewardExpr, RewardExpr] }
  /** String tests: `contains(s, part)`, `starts_with(s, prefix)`, `matches(s, "regex")`. */
  | { readonly op: StringTest; readonly args: readonly [RewardExpr, RewardExpr] };

export const stringTests = ["contains", "starts_with", "matches"] as const;
export type StringTest = (typeof stringTests)[number];

/** Functions an expression may call, with their arity and what they are for (completion, hover). */
export const expressionFunctions: Readonly<Record<string, { arity: readonly [number, number]; doc: string }>> = {
  min: { arity: [2, 8], doc: "The smallest of 2 to 8 numbers." },
  max: { arity: [2, 8], doc: "The largest of 2 to 8 numbers." },
  abs: { arity: [1, 1], doc: "The absolute value of a number." },
  clip: { arity: [3, 3], doc: "clip(x, low, high): x limited to [low, high]." },
  contains: { arity: [2, 2], doc: "contains(s, part): the string s contains part." },
  starts_with: { arity: [2, 2], doc: "starts_with(s, prefix): the string s begins with prefix." },
  matches: {
    arity: [2, 2],
    doc: 'matches(s, "regex"): the string s matches the regular expression (ECMA-262, a string literal, checked when the spec is).',
  },
};

export interface RewardTerm {
  /** `potential`: shaping `gamma * Phi(next) - Phi(current)`, with Phi(terminal) = 0. */
  readonly kind: "plain" | "potential";
  readonly expr: RewardExpr;
}

/** Signals the harness itself reports for every episode. */
export const episodeSignals: Readonly<
  Record<string, { type: "bool" | "count"; timing: "outcome" | "state"; doc: string }>
> = {
  turns: { type: "count", timing: "state", doc: "Model turns so far." },
  tool_calls: { type: "count", timing: "state", doc: "Tool calls so far." },
  invalid_calls: { type: "count", timing: "state", doc: "Tool calls rejected by argument validation so far." },
  tokens: { type: "count", timing: "state", doc: "Tokens generated so far." },
  aborted: { type: "bool", timing: "outcome", doc: "The episode exceeded the turn or response-length budget." },
  truncated: {
    type: "bool",
    timing: "outcome",
    doc: "Collection stopped early (a budget used as a collection limit).",
  },
  terminated: {
    type: "bool",
    timing: "outcome",
    doc: "The task itself ended (finish called, goal reached, or a budget the task rules define as terminal).",
  },
};

/**
 * The call a constraint judges, before it runs (constraint conditions only). `call.*` is the
 * written form; `tool.name` / `tool.env` / `tool.args.X` is the older spelling of the same
 * signals. Both lower to the plan's `tool` namespace (`name`, `env`, `args.X`).
 */
export const callSignals: Readonly<Record<string, { plan: string; doc: string }>> = {
  tool: { plan: "name", doc: "The name of the tool being called." },
  env: { plan: "env", doc: "The env that executes the call (empty for a tool declared outside any env)." },
  args: { plan: "args", doc: "call.args.NAME: an argument of the call, typed by the tool's parameter schema." },
};

/** Signals an expression reads, for lint rules. */
export function signalsOf(e: RewardExpr): Extract<RewardExpr, { op: "signal" }>[] {
  if (e.op === "signal") return [e];
  if (e.op === "const") return [];
  return e.args.flatMap(signalsOf);
}
