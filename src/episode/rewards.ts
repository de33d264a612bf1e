// Rewards per docs/semantics.md §2, from the plan's typed IR. Plain terms are evaluated once, at the
// end of the episode, on its final signals; potential terms shape every turn with
// gamma * Phi(h_{t+1}) - Phi(h_t), where Phi of a terminal state is 0 (a truncated episode's
// last state is not terminal, so its potential stays).
import { at, defined, last } from "../contracts/checked.js";
import type { SignalValue } from "../contracts/signals.js";
import type { PlanExpr } from "../plan/schema.js";

/** Where the signals of one moment of an episode come from. */
export interface SignalSource {
  /** outcome.* / state.* / env.*: the current env's signal. */
  env(name: string): SignalValue | undefined;
  /** <env name>.*: that env's signal, only while the episode is from that env (else 0). */
  namedEnv(env: string, name: string): SignalValue | undefined;
  episode(name: string): number | boolean | undefined;
  /** call.tool / call.env / call.args.X (plan names `name`, `env`, `args.X`): the call being checked (constraints only). */
  tool(name: string): SignalValue | undefined;
  /** The names of the env signals reported, for the message of one that is missing. */
  reported?(): readonly string[];
}

export class RewardEvaluationError extends Error {}

/**
 * The env did not report a signal a reward, constraint or eval.success reads, or reported it with
 * another type than declared: the env's fault, so that episode's env error, never the run's end.
 * The message says which signal and what the env reported instead.
 */
export class SignalError extends RewardEvaluationError {}

/** A condition read an argument the call being checked does not carry. */
class MissingCallArgumentError extends RewardEvaluationError {}

/** Compiled patterns of `matches(...)`, by source (checked when the spec was). */
const patterns = new Map<string, RegExp>();

function pattern(source: string): RegExp {
  let re = patterns.get(source);
  if (!re) {
    try {
      re = new RegExp(source);
    } catch (error) {
      throw new RewardEvaluationError(
        `invalid regular expression ${JSON.stringify(source)}: ${(error as Error).message}`,
      );
    }
    if (patterns.size > 1000) patterns.clear();
    patterns.set(source, re);
  }
  return re;
}

function toText(v: SignalValue, fn: string): string {
  if (typeof v !== "string") throw new RewardEvaluationError(`${fn}(...) tests strings, found ${JSON.stringify(v)}`);
  return v;
}

function toNumber(v: SignalValue): number {
  if (typeof v === "boolean") return v ? 1 : 0;
  if (typeof v === "number") return v;
  throw new RewardEvaluationError(`expected a number, found the string ${JSON.stringify(v)}`);
}

/** What is wrong with `v` as a value of a signal declared `type` (as agent outcomes are checked), or undefined. */
function typeProblem(v: SignalValue, type: Extract<PlanExpr, { op: "signal" }>["type"]): string | undefined {
  switch (type) {
    case "bool":
      return typeof v === "boolean" ? undefined : "a bool is true or false";
    case "number":
      return typeof v === "number" && Number.isFinite(v) ? undefined : "a number is a finite number";
    case "count":
      return typeof v === "number" && Number.isInteger(v) && v >= 0 ? undefined : "a count is a non-negative integer";
    case "string":
      return typeof v === "string" ? undefined : "a string is text";
  }
}

function truthy(v: SignalValue): boolean {
  return typeof v === "boolean" ? v : typeof v === "number" ? v !== 0 : v.length > 0;
}

export function evaluate(e: PlanExpr, source: SignalSource): SignalValue {
  switch (e.op) {
    case "const":
      return e.value;
    case "signal": {
      let v: SignalValue | undefined;
      if (e.namespace === "episode") v = source.episode(e.name);
      else if (e.namespace === "tool") v = source.tool(e.name);
      else if (e.namespace === "named_env")
        v = source.namedEnv(defined(e.env, `the env of the signal 'named_env.${e.name}'`), e.name);
      else v = source.env(e.name);
      if (v === undefined) {
        if (e.namespace === "named_env") return 0;
        if (e.namespace === "tool")
          throw new MissingCallArgumentError(
            `the call has no ${e.name.startsWith("args.") ? `argument '${e.name.slice(5)}'` : `'${e.name}'`}`,
          );
        if (e.namespace === "episode") throw new RewardEvaluationError(`the harness has no episode signal '${e.name}'`);
        const reported = source.reported?.();
        const received =
          reported === undefined
            ? ""
            : ` (it reported ${reported.length > 0 ? reported.map((n) => `'${n}'`).join(", ") : "no signal"})`;
        throw new SignalError(`did not report the signal '${e.namespace}.${e.name}'${received}`);
      }
      if (e.namespace !== "episode" && e.namespace !== "tool") {
        const problem = typeProblem(v, e.type);
        const name = e.namespace === "named_env" ? `${e.env ?? "?"}.${e.name}` : `${e.namespace}.${e.name}`;
        if (problem)
          throw new SignalError(
            `reported the signal '${name}' as ${JSON.stringify(v)}, but it is declared ${e.type} (${problem})`,
          );
      }
      return v;
    }
    case "neg":
      return -toNumber(evaluate(e.args[0], source));
    case "not":
      return !truthy(evaluate(e.args[0], source));
    case "abs":
      return Math.abs(toNumber(evaluate(e.args[0], source)));
    case "min":
      // A fold, not a spread: a call may have more arguments than a spread can pass.
      return e.args.reduce((m, a) => Math.min(m, toNumber(evaluate(a, source))), Number.POSITIVE_INFINITY);
    case "max":
      return e.args.reduce((m, a) => Math.max(m, toNumber(evaluate(a, source))), Number.NEGATIVE_INFINITY);
    case "clip": {
      const [x, lo, hi] = e.args.map((a) => toNumber(evaluate(a, source))) as [number, number, number];
      return Math.min(hi, Math.max(lo, x));
    }
    case "and":
      return truthy(evaluate(e.args[0], source)) && truthy(evaluate(e.args[1], source));
    case "or":
      return truthy(evaluate(e.args[0], source)) || truthy(evaluate(e.args[1], source));
    case "when":
      return truthy(evaluate(e.args[1], source)) ? toNumber(evaluate(e.args[0], source)) : 0;
    case "contains":
    case "starts_with":
    case "matches": {
      const text = toText(evaluate(e.args[0], source), e.op);
      const test = toText(evaluate(e.args[1], source), e.op);
      return e.op === "contains"
        ? text.includes(test)
        : e.op === "starts_with"
          ? text.startsWith(test)
          : pattern(test).test(text);
    }
    case "==":
    case "!=": {
      const a = evaluate(e.args[0], source);
      const b = evaluate(e.args[1], source);
      const equal = typeof a === "string" || typeof b === "string" ? a === b : toNumber(a) === toNumber(b);
      return e.op === "==" ? equal : !equal;
    }
    default: {
      const a = toNumber(evaluate(e.args[0], source));
      const b = toNumber(evaluate(e.args[1], source));
      switch (e.op) {
        case "+":
          return a + b;
        case "-":
          return a - b;
        case "*":
          return a * b;
        case "/":
          if (b === 0) throw new RewardEvaluationError("division by zero in a reward term");
          return a / b;
        case "%":
          return a % b;
        case "<":
          return a < b;
        case "<=":
          return a <= b;
        case ">":
          return a > b;
        case ">=":
          return a >= b;
      }
    }
  }
  throw new RewardEvaluationError(`unknown operator in a reward expression`);
}

/** Whether a condition holds on the signals: true, a number other than 0, a non-empty string. */
export function holds(condition: PlanExpr, source: SignalSource): boolean {
  return truthy(evaluate(condition, source));
}

/**
 * Whether a constraint refuses a call. A condition that reads an argument the call does not
 * carry (`call.args.path` of a call to a tool without `path`) does not apply to that call.
 */
export function constraintBlocks(condition: PlanExpr, source: SignalSource): boolean {
  try {
    return holds(condition, source);
  } catch (error) {
    if (error instanceof MissingCallArgumentError) return false;
    throw error;
  }
}

function evaluateNumber(e: PlanExpr, source: SignalSource): number {
  const v = evaluate(e, source);
  const n = toNumber(v);
  if (!Number.isFinite(n)) throw new RewardEvaluationError("a reward term evaluated to a non-finite number");
  return n;
}

export interface RewardTermPlan {
  readonly kind: "plain" | "potential";
  readonly expr: PlanExpr;
}

export interface EpisodeRewards {
  /** Each term's total over the episode. */
  readonly terms: Record<string, number>;
  /** Reward placed at the end of each turn (index = turn), the sum of all terms. */
  readonly perTurn: number[];
  readonly total: number;
}

/**
 * Rewards of one finished episode. `states[t]` are the signals before turn t (states[0] after
 * reset) and `states[turns]` after the last turn; `final` adds the outcome signals.
 */
export function episodeRewards(
  terms: Readonly<Record<string, RewardTermPlan>>,
  states: readonly SignalSource[],
  final: SignalSource,
  terminated: boolean,
  gamma: number,
): EpisodeRewards {
  const turns = Math.max(0, states.length - 1);
  const perTurn = new Array<number>(Math.max(1, turns)).fill(0);
  const totals: Record<string, number> = {};
  for (const [name, term] of Object.entries(terms)) {
    if (term.kind === "plain") {
      const value = evaluateNumber(term.expr, final);
      perTurn[perTurn.length - 1] = last(perTurn) + value;
      totals[name] = value;
      continue;
    }
    let sum = 0;
    for (let t = 0; t < turns; t++) {
      const isLast = t === turns - 1;
      const next = isLast && terminated ? 0 : evaluateNumber(term.expr, at(states, t + 1));
      const shaped = gamma * next - evaluateNumber(term.expr, at(states, t));
      perTurn[t] = at(perTurn, t) + shaped;
      sum += shaped;
    }
    totals[name] = sum;
  }
  const total = perTurn.reduce((a, b) => a + b, 0);
  return { terms: totals, perTurn, total };
}
