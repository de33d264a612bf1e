// Typed expressions over run-time signals: reward terms and constraint conditions. A name such
// as `outcome.tests_passed` must be a signal some env declares (`unknown-signal` otherwise);
// the result is a small typed IR that the plan carries and the runtime evaluates.
import type { Diagnostic } from "../diagnostics/diagnostic.js";
import { didYouMean } from "../diagnostics/suggest.js";
import type * as ast from "../language/ast.js";
import { dottedName } from "../language/ast.js";
import type { Signal } from "./schema/env.js";
import type { Origin, Value } from "./values.js";

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
  | { readonly op: "+" | "-" | "*" | "/" | "%" | "==" | "!=" | "<" | "<=" | ">" | ">=" | "and" | "or"; readonly args: readonly [RewardExpr, RewardExpr] }
  | { readonly op: "neg" | "not"; readonly args: readonly [RewardExpr] }
  | { readonly op: "when"; readonly args: readonly [RewardExpr, RewardExpr] }
  | { readonly op: "min" | "max"; readonly args: readonly RewardExpr[] }
  | { readonly op: "abs"; readonly args: readonly [RewardExpr] }
  | { readonly op: "clip"; readonly args: readonly [RewardExpr, RewardExpr, RewardExpr] };

export interface RewardTerm {
  /** `potential`: shaping `gamma * Phi(next) - Phi(current)`, with Phi(terminal) = 0. */
  readonly kind: "plain" | "potential";
  readonly expr: RewardExpr;
}

/** Signals the harness itself reports for every episode. */
export const episodeSignals: Readonly<Record<string, { type: "bool" | "count"; timing: "outcome" | "state"; doc: string }>> = {
  turns: { type: "count", timing: "state", doc: "Model turns so far." },
  tool_calls: { type: "count", timing: "state", doc: "Tool calls so far." },
  invalid_calls: { type: "count", timing: "state", doc: "Tool calls rejected by argument validation so far." },
  tokens: { type: "count", timing: "state", doc: "Tokens generated so far." },
  aborted: { type: "bool", timing: "outcome", doc: "The episode exceeded the turn or response-length budget." },
  truncated: { type: "bool", timing: "outcome", doc: "Collection stopped early (a budget used as a collection limit)." },
  terminated: { type: "bool", timing: "outcome", doc: "The task itself ended (finish called, goal reached, or a budget the task rules define as terminal)." },
};

const toolSignals: Readonly<Record<string, "string">> = { name: "string", env: "string" };

export interface SignalScope {
  /** Each env of the experiment and the signals it declares. */
  readonly envs: ReadonlyMap<string, Readonly<Record<string, Signal>>>;
  /** Whether `tool.*` may be used (constraint conditions). */
  readonly allowTool: boolean;
}

const arithmetic = new Set(["+", "-", "*", "/", "%"]);
const comparison = new Set(["==", "!=", "<", "<=", ">", ">="]);

export class ExpressionChecker {
  constructor(
    private readonly scope: SignalScope,
    private readonly diagnostics: Diagnostic[],
  ) {}

  /** A reward term: a number-valued expression, or `potential(expr)` at the top. */
  rewardTerm(name: string, value: Value): RewardTerm | undefined {
    if (value.kind === "call" && value.callee === "potential") {
      if (value.args.length !== 1 || value.named.size > 0) {
        this.error(value.origin, "invalid-call", "potential(...) takes one expression: the potential Phi of the current state");
        return undefined;
      }
      const expr = this.value(value.args[0]!, "number");
      return expr ? { kind: "potential", expr } : undefined;
    }
    const expr = this.value(value, "number");
    return expr ? { kind: "plain", expr } : undefined;
  }

  /** A constraint condition: `block(condition)` with a boolean condition. */
  condition(value: Value): RewardExpr | undefined {
    return this.value(value, "bool");
  }

  private value(v: Value, expected: ExprType): RewardExpr | undefined {
    switch (v.kind) {
      case "scalar":
        if (v.value === null) {
          this.error(v.origin, "type-mismatch", "expected an expression, found none");
          return undefined;
        }
        return this.expect({ op: "const", value: v.value }, typeOfConst(v.value), expected, v.origin);
      case "name":
        return this.signal(v.path, v.origin, expected);
      case "expression":
        return this.ast(v.expression, v.origin.file, expected);
      case "call": {
        if (v.callee === "potential") {
          this.error(v.origin, "potential-not-top-level", "potential(...) must be a whole reward term, not part of an expression", "write it as its own term: `progress: potential(...)`");
          return undefined;
        }
        this.error(v.origin, "unknown-function", `unknown function '${v.callee}' in an expression`, "available: min, max, abs, clip, and potential(...) as a whole reward term");
        return undefined;
      }
      default:
        this.error(v.origin, "type-mismatch", `expected an expression over signals, found ${v.kind === "list" ? "a list" : "a block"}`);
        return undefined;
    }
  }

  private ast(e: ast.Expression, file: string, expected: ExprType): RewardExpr | undefined {
    const typed = this.infer(e, file);
    if (!typed) return undefined;
    return this.expect(typed.expr, typed.type, expected, { file, range: e.range });
  }

  private expect(expr: RewardExpr, actual: ExprType, expected: ExprType, origin: Origin): RewardExpr | undefined {
    if (actual === expected || (expected === "number" && actual === "bool")) return expr;
    this.error(origin, "type-mismatch", `expected ${expected === "bool" ? "a condition (true/false)" : `a ${expected}`}, found a ${actual === "bool" ? "condition" : actual}`);
    return undefined;
  }

  /** Infers the type of an AST expression; reports and returns undefined on error. */
  private infer(e: ast.Expression, file: string): { expr: RewardExpr; type: ExprType } | undefined {
    const origin: Origin = { file, range: e.range };
    switch (e.kind) {
      case "Number":
        return { expr: { op: "const", value: e.value }, type: "number" };
      case "String":
        return { expr: { op: "const", value: e.value }, type: "string" };
      case "Boolean":
        return { expr: { op: "const", value: e.value }, type: "bool" };
      case "None":
        this.error(origin, "type-mismatch", "none has no value in an expression");
        return undefined;
      case "Identifier":
      case "Member": {
        const name = dottedName(e);
        if (name === undefined) {
          this.error(origin, "type-mismatch", "expected a signal name such as outcome.success");
          return undefined;
        }
        const expr = this.signal(name.split("."), origin);
        return expr?.op === "signal" ? { expr, type: signalType(expr.type) } : undefined;
      }
      case "Unary": {
        const operand = this.infer(e.operand, file);
        if (!operand) return undefined;
        if (e.operator === "not") {
          if (operand.type !== "bool") return this.mismatch(e.operand, file, "'not' takes a condition");
          return { expr: { op: "not", args: [operand.expr] }, type: "bool" };
        }
        if (operand.type === "string") return this.mismatch(e.operand, file, `'${e.operator}' takes a number`);
        return { expr: e.operator === "-" ? { op: "neg", args: [operand.expr] } : operand.expr, type: "number" };
      }
      case "Binary": {
        const left = this.infer(e.left, file);
        const right = this.infer(e.right, file);
        if (!left || !right) return undefined;
        const op = e.operator;
        if (arithmetic.has(op)) {
          if (left.type === "string") return this.mismatch(e.left, file, `'${op}' takes numbers`);
          if (right.type === "string") return this.mismatch(e.right, file, `'${op}' takes numbers`);
          return { expr: { op: op as "+", args: [left.expr, right.expr] }, type: "number" };
        }
        if (comparison.has(op)) {
          const ordered = op !== "==" && op !== "!=";
          if (ordered && (left.type === "string" || right.type === "string")) return this.mismatch(e, file, `'${op}' compares numbers`);
          if ((left.type === "string") !== (right.type === "string")) return this.mismatch(e, file, `'${op}' compares a string with a number`);
          return { expr: { op: op as "==", args: [left.expr, right.expr] }, type: "bool" };
        }
        // and / or
        if (left.type !== "bool") return this.mismatch(e.left, file, `'${op}' takes conditions`);
        if (right.type !== "bool") return this.mismatch(e.right, file, `'${op}' takes conditions`);
        return { expr: { op: op as "and", args: [left.expr, right.expr] }, type: "bool" };
      }
      case "When": {
        const value = this.infer(e.value, file);
        const cond = this.infer(e.condition, file);
        if (!value || !cond) return undefined;
        if (cond.type !== "bool") {
          return this.mismatch(e.condition, file, "'when' takes a condition (true/false)", "compare it, e.g. `x > 0`, or use a bool signal");
        }
        if (value.type === "string") return this.mismatch(e.value, file, "the value before 'when' must be a number");
        return { expr: { op: "when", args: [value.expr, cond.expr] }, type: "number" };
      }
      case "Call": {
        const callee = dottedName(e.callee);
        const arity: Record<string, [number, number]> = { min: [2, 8], max: [2, 8], abs: [1, 1], clip: [3, 3] };
        if (callee === "potential") {
          this.error(origin, "potential-not-top-level", "potential(...) must be a whole reward term, not part of an expression", "write it as its own term: `progress: potential(...)`");
          return undefined;
        }
        const limits = callee ? arity[callee] : undefined;
        if (!callee || !limits) {
          this.error(origin, "unknown-function", `unknown function '${callee ?? "?"}' in an expression`, "available: min, max, abs, clip, and potential(...) as a whole reward term");
          return undefined;
        }
        if (e.args.length < limits[0] || e.args.length > limits[1] || e.args.some((a) => a.name)) {
          this.error(origin, "invalid-call", `${callee}(...) takes ${limits[0] === limits[1] ? limits[0] : `${limits[0]} to ${limits[1]}`} positional arguments`);
          return undefined;
        }
        const args: RewardExpr[] = [];
        for (const a of e.args) {
          const t = this.infer(a.value, file);
          if (!t) return undefined;
          if (t.type === "string") return this.mismatch(a.value, file, `${callee}(...) takes numbers`);
          args.push(t.expr);
        }
        return { expr: { op: callee, args } as RewardExpr, type: "number" };
      }
      case "List":
      case "Record":
        this.error(origin, "type-mismatch", `expected an expression over signals, found a ${e.kind === "List" ? "list" : "block"}`);
        return undefined;
      case "Invalid":
        return undefined;
    }
  }

  private mismatch(e: ast.Expression, file: string, message: string, hint?: string): undefined {
    this.error({ file, range: e.range }, "type-mismatch", message, hint);
    return undefined;
  }

  /** Resolves a signal name in the namespaces of RL-SEMANTICS §2. */
  private signal(path: readonly string[], origin: Origin, expected?: ExprType): RewardExpr | undefined {
    const [ns, ...rest] = path;
    const name = rest.join(".");
    const envNames = [...this.scope.envs.keys()];
    const namespaces = ["outcome", "state", "episode", "env", ...(this.scope.allowTool ? ["tool"] : []), ...envNames];
    const unknown = (message: string, candidates: string[], hint?: string) => {
      this.error(origin, "unknown-signal", message, didYouMean(path[path.length - 1] ?? "", candidates) ?? hint);
      return undefined;
    };
    if (ns === undefined || rest.length === 0) {
      return unknown(`'${path.join(".")}' is not a signal`, namespaces.map((n) => `${n}.`), `signals are written namespace.name: ${namespaces.map((n) => `${n}.*`).join(", ")}`);
    }
    let expr: RewardExpr | undefined;
    if (ns === "episode") {
      const s = episodeSignals[name];
      if (!s) return unknown(`'episode.${name}' is not a signal the harness reports`, Object.keys(episodeSignals), `episode signals: ${Object.keys(episodeSignals).join(", ")}`);
      expr = { op: "signal", namespace: "episode", name, type: s.type, timing: s.timing };
    } else if (ns === "tool") {
      if (!this.scope.allowTool) return unknown("'tool.*' can only be used in constraints", []);
      if (rest[0] === "args" && rest.length >= 2) expr = { op: "signal", namespace: "tool", name, type: "string", timing: "state" };
      else if (toolSignals[name]) expr = { op: "signal", namespace: "tool", name, type: "string", timing: "state" };
      else return unknown(`'tool.${name}' is not known; use tool.name, tool.env or tool.args.NAME`, Object.keys(toolSignals));
    } else if (ns === "outcome" || ns === "state" || ns === "env") {
      // The signal must be declared by every env of the experiment (each episode comes from one of them).
      const declared = [...this.scope.envs].map(([env, signals]) => ({ env, signal: signals[name] }));
      const missing = declared.filter((d) => !d.signal || (ns !== "env" && d.signal.scope !== ns));
      if (declared.length === 0) return unknown(`'${path.join(".")}' needs an env that declares it, and the experiment has none`, []);
      if (missing.length > 0) {
        const all = new Set<string>();
        for (const [, signals] of this.scope.envs) for (const [k, s] of Object.entries(signals)) if (ns === "env" || s.scope === ns) all.add(k);
        const which = missing.map((m) => m.env).join(", ");
        const otherScope = missing.find((m) => m.signal && m.signal.scope !== ns);
        const message = otherScope
          ? `'${path.join(".")}': env '${otherScope.env}' declares '${name}' as a ${otherScope.signal!.scope} signal; write ${otherScope.signal!.scope}.${name}`
          : `'${path.join(".")}' is not a signal of env ${which}`;
        return unknown(message, [...all], all.size > 0 ? `${ns} signals: ${[...all].join(", ")}` : undefined);
      }
      const first = declared[0]!.signal!;
      // Known after every step if any env reports it per step: the order of envs must not matter.
      const timing = declared.some((d) => d.signal!.scope === "state") ? "state" : "outcome";
      expr = { op: "signal", namespace: ns, name, type: first.type, timing };
    } else if (this.scope.envs.has(ns)) {
      const signals = this.scope.envs.get(ns)!;
      const s = signals[name];
      if (!s) return unknown(`env '${ns}' declares no signal '${name}'`, Object.keys(signals), Object.keys(signals).length ? `its signals: ${Object.keys(signals).join(", ")}` : undefined);
      expr = { op: "signal", namespace: "named_env", env: ns, name, type: s.type, timing: s.scope };
    } else {
      return unknown(`unknown signal namespace '${ns}'`, namespaces, `namespaces: ${namespaces.join(", ")}`);
    }
    if (expected && expr.op === "signal") return this.expect(expr, signalType(expr.type), expected, origin);
    return expr;
  }

  private error(origin: Origin, code: string, message: string, hint?: string): void {
    this.diagnostics.push({ code, severity: "error", message, file: origin.file, range: origin.range, ...(hint ? { hint } : {}) });
  }
}

function typeOfConst(v: number | string | boolean): ExprType {
  return typeof v === "number" ? "number" : typeof v === "boolean" ? "bool" : "string";
}

function signalType(t: "bool" | "number" | "count" | "string"): ExprType {
  return t === "bool" ? "bool" : t === "string" ? "string" : "number";
}

/** Signals an expression reads, for lint rules. */
export function signalsOf(e: RewardExpr): Extract<RewardExpr, { op: "signal" }>[] {
  if (e.op === "signal") return [e];
  if (e.op === "const") return [];
  return e.args.flatMap(signalsOf);
}
