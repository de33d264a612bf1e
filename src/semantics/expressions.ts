// Typed expressions over run-time signals: reward terms and constraint conditions. A name such
// as `outcome.tests_passed` must be a signal some env declares (`unknown-signal` otherwise);
// the result is a small typed IR that the plan carries and the runtime evaluates.
import type { Diagnostic } from "../diagnostics/diagnostic.js";
import { didYouMean } from "../diagnostics/suggest.js";
import type * as ast from "../language/ast.js";
import { dottedName } from "../language/ast.js";
import type { Signal } from "./schema/env.js";
import type { Tool } from "./schema/tool.js";
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
  matches: { arity: [2, 2], doc: 'matches(s, "regex"): the string s matches the regular expression (ECMA-262, a string literal, checked when the spec is).' },
};

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
const toolAliasSignals: Readonly<Record<string, string>> = { name: "tool", env: "env", args: "args" };

/** A tool of the experiment, as a constraint condition sees it. */
export interface ScopeTool {
  readonly name: string;
  readonly env: string | null;
  readonly definition: Tool;
}

export interface SignalScope {
  /** Each env of the experiment and the signals it declares. */
  readonly envs: ReadonlyMap<string, Readonly<Record<string, Signal>>>;
  /** Whether `call.*` (and its older spelling `tool.*`) may be used (constraint conditions). */
  readonly allowTool: boolean;
  /** The experiment's tools: `call.tool` names and `call.args.NAME` are checked against them. */
  readonly tools?: readonly ScopeTool[];
}

type Typed = { expr: RewardExpr; type: ExprType };

/** An argument of a function call, from the AST or from an evaluated value. */
interface Operand {
  readonly origin: Origin;
  /** The argument when it is written as a string literal (a regex must be one). */
  readonly literal?: string;
  typed(): Typed | undefined;
}

const arithmetic = new Set(["+", "-", "*", "/", "%"]);
const comparison = new Set(["==", "!=", "<", "<=", ">", ">="]);

export class ExpressionChecker {
  /** The tools `call.tool == "..."` conditions around the current subexpression restrict the call to. */
  private narrowed: readonly string[] | undefined;

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
    const typed = this.typed(v);
    return typed ? this.expect(typed.expr, typed.type, expected, v.origin) : undefined;
  }

  private typed(v: Value): Typed | undefined {
    switch (v.kind) {
      case "scalar":
        if (v.value === null) {
          this.error(v.origin, "type-mismatch", "expected an expression, found none");
          return undefined;
        }
        return { expr: { op: "const", value: v.value }, type: typeOfConst(v.value) };
      case "name": {
        const expr = this.signal(v.path, v.origin);
        return expr?.op === "signal" ? { expr, type: signalType(expr.type) } : undefined;
      }
      case "expression":
        return this.infer(v.expression, v.origin.file);
      case "call": {
        // A whole term or condition written as a call (`block(contains(...))`): its arguments are values.
        const operands = v.args.map((a): Operand => ({ origin: a.origin, ...(a.kind === "scalar" && typeof a.value === "string" ? { literal: a.value } : {}), typed: () => this.typed(a) }));
        return this.call(v.callee, operands, v.named.size > 0, v.origin);
      }
      default:
        this.error(v.origin, "type-mismatch", `expected an expression over signals, found ${v.kind === "list" ? "a list" : "a block"}`);
        return undefined;
    }
  }

  private expect(expr: RewardExpr, actual: ExprType, expected: ExprType, origin: Origin): RewardExpr | undefined {
    if (actual === expected || (expected === "number" && actual === "bool")) return expr;
    this.error(
      origin,
      "type-mismatch",
      `expected ${expected === "bool" ? "a condition (true/false)" : `a ${expected}`}, found a ${typeWord(actual)}`,
      expected === "bool" ? 'make it a test, e.g. `state.progress > 0.5` or `call.tool == "execute"`' : "a reward term is a number (a condition counts as 0 or 1)",
    );
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
        const op = e.operator;
        // `call.tool == "write" and call.args.path ...`: the arguments are those of 'write'.
        const narrowed = op === "and" || op === "or" ? toolsAsserted(e) : undefined;
        const outer = this.narrowed;
        if (narrowed) this.narrowed = narrowed;
        let left: Typed | undefined;
        let right: Typed | undefined;
        try {
          left = this.infer(e.left, file);
          right = this.infer(e.right, file);
        } finally {
          this.narrowed = outer;
        }
        if (!left || !right) return undefined;
        if (arithmetic.has(op)) {
          if (left.type === "string") return this.mismatch(e.left, file, `'${op}' takes numbers`);
          if (right.type === "string") return this.mismatch(e.right, file, `'${op}' takes numbers`);
          return { expr: { op: op as "+", args: [left.expr, right.expr] }, type: "number" };
        }
        if (comparison.has(op)) {
          const ordered = op !== "==" && op !== "!=";
          if (ordered && (left.type === "string" || right.type === "string")) {
            return this.mismatch(e, file, `'${op}' compares numbers, and ${left.type === "string" ? "the left" : "the right"} side is a string`, "compare strings with == or !=, or test them with contains(s, part), starts_with(s, prefix) or matches(s, \"regex\")");
          }
          if ((left.type === "string") !== (right.type === "string")) return this.mismatch(e, file, `'${op}' compares a string with a ${typeWord(left.type === "string" ? right.type : left.type)}`, "compare a string with a string (\"...\")");
          if (!ordered && (!this.knownCallValue(left.expr, e.right, file) || !this.knownCallValue(right.expr, e.left, file))) return undefined;
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
        const operands = e.args.map((a): Operand => ({
          origin: { file, range: a.value.range },
          ...(a.value.kind === "String" ? { literal: a.value.value } : {}),
          typed: () => this.infer(a.value, file),
        }));
        return this.call(callee, operands, e.args.some((a) => a.name), origin);
      }
      case "List":
      case "Record":
        this.error(origin, "type-mismatch", `expected an expression over signals, found a ${e.kind === "List" ? "list" : "block"}`);
        return undefined;
      case "Invalid":
        return undefined;
    }
  }

  /** A function call: min / max / abs / clip over numbers, the string tests over strings. */
  private call(callee: string | undefined, operands: readonly Operand[], hasNamed: boolean, origin: Origin): Typed | undefined {
    if (callee === "potential") {
      this.error(origin, "potential-not-top-level", "potential(...) must be a whole reward term, not part of an expression", "write it as its own term: `progress: potential(...)`");
      return undefined;
    }
    const fn = callee ? expressionFunctions[callee] : undefined;
    if (!callee || !fn) {
      const names = Object.keys(expressionFunctions);
      this.error(origin, "unknown-function", `unknown function '${callee ?? "?"}' in an expression`, didYouMean(callee ?? "", [...names, "potential"]) ?? `available: ${names.join(", ")}, and potential(...) as a whole reward term`);
      return undefined;
    }
    const [least, most] = fn.arity;
    if (operands.length < least || operands.length > most || hasNamed) {
      this.error(origin, "invalid-call", `${callee}(...) takes ${least === most ? least : `${least} to ${most}`} positional arguments`, fn.doc);
      return undefined;
    }
    const args: RewardExpr[] = [];
    if ((stringTests as readonly string[]).includes(callee)) {
      const [subject, test] = operands as [Operand, Operand];
      const s = subject.typed();
      if (!s) return undefined;
      if (s.type !== "string") return this.at(subject.origin, "type-mismatch", `${callee}(...) tests a string; its first argument is a ${typeWord(s.type)}`, `test a string signal or argument, e.g. ${callee}(call.args.path, "/etc")`);
      if (callee === "matches" && test.literal === undefined) {
        return this.at(test.origin, "type-mismatch", "the pattern of matches(...) must be a string literal", 'write the regular expression itself, e.g. matches(call.args.command, "^rm\\\\s")');
      }
      if (callee === "matches") {
        const problem = regexProblem(test.literal!);
        if (problem) return this.at(test.origin, "invalid-regex", `invalid regular expression ${JSON.stringify(test.literal)}: ${problem}`, "write an ECMA-262 regular expression; a backslash in a string is written \\\\ (e.g. \"\\\\d+\")");
      }
      const t = test.typed();
      if (!t) return undefined;
      if (t.type !== "string") return this.at(test.origin, "type-mismatch", `the second argument of ${callee}(...) must be a string, found a ${typeWord(t.type)}`, 'write it as a string: "..."');
      return { expr: { op: callee as StringTest, args: [s.expr, t.expr] }, type: "bool" };
    }
    for (const a of operands) {
      const t = a.typed();
      if (!t) return undefined;
      if (t.type === "string") return this.at(a.origin, "type-mismatch", `${callee}(...) takes numbers`, "test strings with contains, starts_with or matches");
      args.push(t.expr);
    }
    return { expr: { op: callee, args } as RewardExpr, type: "number" };
  }

  /**
   * `call.tool == "X"` names a tool of the experiment, `call.env == "X"` an env of the
   * experiment: a misspelt name would make the constraint silently never apply.
   */
  private knownCallValue(side: RewardExpr, other: ast.Expression, file: string): boolean {
    if (side.op !== "signal" || side.namespace !== "tool" || !this.scope.tools) return true;
    const origin: Origin = { file, range: other.range };
    if (side.name.startsWith("args.") && (other.kind === "String" || other.kind === "Number" || other.kind === "Boolean")) {
      // An argument with an enum can only take those values: another one means the test never holds.
      const name = side.name.slice("args.".length);
      const params = this.scope.tools.filter((t) => !this.narrowed || this.narrowed.includes(t.name)).flatMap((t) => t.definition.parameters[name] ?? []);
      const allowed = params.every((p) => p.enum !== undefined) ? [...new Set(params.flatMap((p) => p.enum!))] : undefined;
      if (params.length > 0 && allowed && !allowed.includes(other.value)) {
        const shown = allowed.map((v) => JSON.stringify(v));
        this.error(origin, "impossible-argument-value", `call.args.${name} is one of ${shown.join(", ")}, never ${JSON.stringify(other.value)}: this test never holds`, didYouMean(String(other.value), allowed.map(String)) ?? `its values: ${shown.join(", ")}`);
        return false;
      }
      return true;
    }
    if (other.kind !== "String") return true;
    const written = other.value;
    if (side.name === "name" && !this.scope.tools.some((t) => t.name === written)) {
      const names = this.scope.tools.map((t) => t.name);
      this.error(origin, "unknown-tool", `the experiment has no tool '${written}'`, didYouMean(written, names) ?? (names.length ? `its tools: ${[...new Set(names)].join(", ")}` : "the experiment declares no tools"));
      return false;
    }
    if (side.name === "env" && written !== "" && !this.scope.envs.has(written)) {
      const names = [...this.scope.envs.keys()];
      this.error(origin, "unknown-env", `the experiment has no env '${written}'`, didYouMean(written, names) ?? `its envs: ${names.join(", ")}`);
      return false;
    }
    return true;
  }

  /** `call.args.NAME`: typed by the parameter schema of the tools the call can be. */
  private callArgument(name: string, written: string, origin: Origin): RewardExpr | undefined {
    const tools = this.scope.tools;
    if (!tools) return { op: "signal", namespace: "tool", name: `args.${name}`, type: "string", timing: "state" };
    const candidates = this.narrowed ? tools.filter((t) => this.narrowed!.includes(t.name)) : tools;
    const which = this.narrowed ? `tool ${this.narrowed.map((n) => `'${n}'`).join(" or ")}` : "tool of the experiment";
    const having = candidates.filter((t) => Object.hasOwn(t.definition.parameters, name));
    if (having.length === 0) {
      const known = [...new Set(candidates.flatMap((t) => Object.keys(t.definition.parameters)))];
      this.error(origin, "unknown-argument", `'${written}': no ${which} takes an argument '${name}'`, didYouMean(name, known) ?? (known.length ? `arguments: ${known.join(", ")}` : `${this.narrowed ? this.narrowed.map((n) => `'${n}'`).join(" and ") : "the experiment's tools"} take${this.narrowed?.length === 1 ? "s" : ""} no arguments`));
      return undefined;
    }
    const types = new Set(having.map((t) => t.definition.parameters[name]!.type));
    const nested = [...types].find((t) => t === "array" || t === "object");
    if (nested) {
      this.error(origin, "type-mismatch", `'${written}' is ${nested === "array" ? "a list" : "an object"}; a condition tests string, number and boolean arguments`);
      return undefined;
    }
    const exprTypes = new Set([...types].map((t) => (t === "boolean" ? "bool" : t === "string" ? "string" : "number") as "bool" | "string" | "number"));
    if (exprTypes.size > 1) {
      const byTool = having.map((t) => `${t.name}: ${t.definition.parameters[name]!.type}`).join(", ");
      this.error(origin, "type-mismatch", `'${written}' has a different type in different tools (${byTool})`, `name the tool first: call.tool == "${having[0]!.name}" and ${written} ...`);
      return undefined;
    }
    return { op: "signal", namespace: "tool", name: `args.${name}`, type: [...exprTypes][0]!, timing: "state" };
  }

  private at(origin: Origin, code: string, message: string, hint?: string): undefined {
    this.error(origin, code, message, hint);
    return undefined;
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
    const namespaces = ["outcome", "state", "episode", "env", ...(this.scope.allowTool ? ["call"] : []), ...envNames];
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
    } else if (ns === "call" || ns === "tool") {
      if (!this.scope.allowTool) return unknown(`'${ns}.*' is the call a constraint judges: it can only be used in constraints`, [], "a reward reads what the env and the harness report: outcome.*, state.*, episode.*");
      // `tool.name` is the older spelling of `call.tool`.
      const field = ns === "tool" ? toolAliasSignals[rest[0]!] : callSignals[rest[0]!] ? rest[0] : undefined;
      const fields = ns === "tool" ? Object.keys(toolAliasSignals) : Object.keys(callSignals);
      const usage = ns === "tool" ? "tool.name, tool.env or tool.args.NAME" : "call.tool, call.env or call.args.NAME";
      if (field === "args" && rest.length === 2) expr = this.callArgument(rest[1]!, path.join("."), origin);
      else if (field === "args") return unknown(`'${path.join(".")}': write ${ns}.args.NAME, one top-level argument of the call`, []);
      else if (field && rest.length === 1) expr = { op: "signal", namespace: "tool", name: callSignals[field]!.plan, type: "string", timing: "state" };
      else return unknown(`'${path.join(".")}' is not known; use ${usage}`, fields);
      if (!expr) return undefined;
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
    if (this.scope.allowTool && expr.op === "signal" && expr.timing === "outcome") {
      // The gate runs before each call, mid-episode: an outcome is not known yet.
      this.error(
        origin,
        "outcome-in-constraint",
        `'${path.join(".")}' is known only when the episode has ended, but a constraint is judged before each call`,
        "judge the call itself (call.tool, call.args.NAME) or a signal the env reports after every step (state.*); score outcomes in the reward",
      );
      return undefined;
    }
    if (expected && expr.op === "signal") return this.expect(expr, signalType(expr.type), expected, origin);
    return expr;
  }

  private error(origin: Origin, code: string, message: string, hint?: string): void {
    this.diagnostics.push({ code, severity: "error", message, file: origin.file, range: origin.range, ...(hint ? { hint } : {}) });
  }
}

/** The tool names an `and`/`or` of `call.tool == "X"` tests restricts the call to, if it does. */
function toolsAsserted(e: ast.Expression): string[] | undefined {
  if (e.kind !== "Binary") return undefined;
  if (e.operator === "==") {
    const named = (side: ast.Expression) => {
      const n = side.kind === "Member" ? dottedName(side) : undefined;
      return n === "call.tool" || n === "tool.name";
    };
    if (named(e.left) && e.right.kind === "String") return [e.right.value];
    if (named(e.right) && e.left.kind === "String") return [e.left.value];
    return undefined;
  }
  if (e.operator !== "and" && e.operator !== "or") return undefined;
  const left = toolsAsserted(e.left);
  const right = toolsAsserted(e.right);
  if (e.operator === "or") return left && right ? [...new Set([...left, ...right])] : undefined;
  return left && right ? left.filter((n) => right.includes(n)) : (left ?? right);
}

/** Why a regular expression does not compile, if it does not. */
export function regexProblem(pattern: string): string | undefined {
  try {
    new RegExp(pattern);
    return undefined;
  } catch (error) {
    return (error as Error).message.replace(/^Invalid regular expression: /, "");
  }
}

/** A type as messages name it. */
function typeWord(t: ExprType): string {
  return t === "bool" ? "condition" : t;
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
