// Typed expressions over run-time signals: reward terms and constraint conditions are checked
// and typed into the IR of expression-ir.ts. A name such as `outcome.tests_passed` must be a
// signal some env declares (`unknown-signal` otherwise; resolved in signal-resolver.ts).
import type { Diagnostic } from "../diagnostics/diagnostic.js";
import { at } from "../contracts/checked.js";
import { didYouMean } from "../contracts/suggest.js";
import type * as ast from "../language/ast.js";
import { dottedName } from "../language/ast.js";
import {
  type ExprType,
  expressionFunctions,
  type RewardExpr,
  type RewardTerm,
  type StringTest,
  stringTests,
} from "./expression-ir.js";
import { expressionError, type SignalScope, SignalResolver, toolsAsserted } from "./signal-resolver.js";
import type { Origin, Value } from "./values.js";
import type { CompilerCode } from "../diagnostics/codes/index.js";

// The IR and the signal vocabulary live in expression-ir.ts; these names stay importable from here.
export {
  callSignals,
  episodeSignals,
  expressionFunctions,
  type RewardExpr,
  type RewardTerm,
  signalsOf,
} from "./expression-ir.js";

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

  private readonly signals: SignalResolver;

  constructor(
    scope: SignalScope,
    private readonly diagnostics: Diagnostic[],
  ) {
    this.signals = new SignalResolver(scope, diagnostics);
  }

  /** A reward term: a number-valued expression, or `potential(expr)` at the top. */
  rewardTerm(name: string, value: Value): RewardTerm | undefined {
    if (value.kind === "call" && value.callee === "potential") {
      if (value.args.length !== 1 || value.named.size > 0) {
        this.error(
          value.origin,
          "invalid-call",
          "potential(...) takes one expression: the potential Phi of the current state",
        );
        return undefined;
      }
      const expr = this.value(at(value.args, 0), "number");
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
        const expr = this.signals.resolve(v.path, v.origin, this.narrowed);
        return expr?.op === "signal" ? { expr, type: signalType(expr.type) } : undefined;
      }
      case "expression":
        return this.infer(v.expression, v.origin.file);
      case "call": {
        // A whole term or condition written as a call (`block(contains(...))`): its arguments are values.
        const operands = v.args.map((a): Operand => ({
          origin: a.origin,
          ...(a.kind === "scalar" && typeof a.value === "string" ? { literal: a.value } : {}),
          typed: () => this.typed(a),
        }));
        return this.call(v.callee, operands, v.named.size > 0, v.origin);
      }
      default:
        this.error(
          v.origin,
          "type-mismatch",
          `expected an expression over signals, found ${v.kind === "list" ? "a list" : "a block"}`,
        );
        return undefined;
    }
  }

  private expect(expr: RewardExpr, actual: ExprType, expected: ExprType, origin: Origin): RewardExpr | undefined {
    if (actual === expected || (expected === "number" && actual === "bool")) return expr;
    this.error(
      origin,
      "type-mismatch",
      `expected ${expected === "bool" ? "a condition (true/false)" : `a ${expected}`}, found a ${typeWord(actual)}`,
      expected === "bool"
        ? 'make it a test, e.g. `state.progress > 0.5` or `call.tool == "execute"`'
        : "a reward term is a number (a condition counts as 0 or 1)",
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
        const expr = this.signals.resolve(name.split("."), origin, this.narrowed);
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
            return this.mismatch(
              e,
              file,
              `'${op}' compares numbers, and ${left.type === "string" ? "the left" : "the right"} side is a string`,
              'compare strings with == or !=, or test them with contains(s, part), starts_with(s, prefix) or matches(s, "regex")',
            );
          }
          if ((left.type === "string") !== (right.type === "string"))
            return this.mismatch(
              e,
              file,
              `'${op}' compares a string with a ${typeWord(left.type === "string" ? right.type : left.type)}`,
              'compare a string with a string ("...")',
            );
          if (
            !ordered &&
            (!this.signals.knownCallValue(left.expr, e.right, file, this.narrowed) ||
              !this.signals.knownCallValue(right.expr, e.left, file, this.narrowed))
          )
            return undefined;
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
          return this.mismatch(
            e.condition,
            file,
            "'when' takes a condition (true/false)",
            "compare it, e.g. `x > 0`, or use a bool signal",
          );
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
        return this.call(
          callee,
          operands,
          e.args.some((a) => a.name),
          origin,
        );
      }
      case "List":
      case "Record":
        this.error(
          origin,
          "type-mismatch",
          `expected an expression over signals, found a ${e.kind === "List" ? "list" : "block"}`,
        );
        return undefined;
      case "Invalid":
        return undefined;
    }
  }

  /** A function call: min / max / abs / clip over numbers, the string tests over strings. */
  private call(
    callee: string | undefined,
    operands: readonly Operand[],
    hasNamed: boolean,
    origin: Origin,
  ): Typed | undefined {
    if (callee === "potential") {
      this.error(
        origin,
        "potential-not-top-level",
        "potential(...) must be a whole reward term, not part of an expression",
        "write it as its own term: `progress: potential(...)`",
      );
      return undefined;
    }
    const fn = callee ? expressionFunctions[callee] : undefined;
    if (!callee || !fn) {
      const names = Object.keys(expressionFunctions);
      this.error(
        origin,
        "unknown-function",
        `unknown function '${callee ?? "?"}' in an expression`,
        didYouMean(callee ?? "", [...names, "potential"]) ??
          `available: ${names.join(", ")}, and potential(...) as a whole reward term`,
      );
      return undefined;
    }
    const [least, most] = fn.arity;
    if (operands.length < least || operands.length > most || hasNamed) {
      this.error(
        origin,
        "invalid-call",
        `${callee}(...) takes ${least === most ? least : `${least} to ${most}`} positional arguments`,
        fn.doc,
      );
      return undefined;
    }
    const args: RewardExpr[] = [];
    if ((stringTests as readonly string[]).includes(callee)) {
      const [subject, test] = operands as [Operand, Operand];
      const s = subject.typed();
      if (!s) return undefined;
      if (s.type !== "string")
        return this.at(
          subject.origin,
          "type-mismatch",
          `${callee}(...) tests a string; its first argument is a ${typeWord(s.type)}`,
          `test a string signal or argument, e.g. ${callee}(call.args.path, "/etc")`,
        );
      if (callee === "matches") {
        if (test.literal === undefined) {
          return this.at(
            test.origin,
            "type-mismatch",
            "the pattern of matches(...) must be a string literal",
            'write the regular expression itself, e.g. matches(call.args.command, "^rm\\\\s")',
          );
        }
        const problem = regexProblem(test.literal);
        if (problem)
          return this.at(
            test.origin,
            "invalid-regex",
            `invalid regular expression ${JSON.stringify(test.literal)}: ${problem}`,
            'write an ECMA-262 regular expression; a backslash in a string is written \\\\ (e.g. "\\\\d+")',
          );
      }
      const t = test.typed();
      if (!t) return undefined;
      if (t.type !== "string")
        return this.at(
          test.origin,
          "type-mismatch",
          `the second argument of ${callee}(...) must be a string, found a ${typeWord(t.type)}`,
          'write it as a string: "..."',
        );
      return { expr: { op: callee as StringTest, args: [s.expr, t.expr] }, type: "bool" };
    }
    for (const a of operands) {
      const t = a.typed();
      if (!t) return undefined;
      if (t.type === "string")
        return this.at(
          a.origin,
          "type-mismatch",
          `${callee}(...) takes numbers`,
          "test strings with contains, starts_with or matches",
        );
      args.push(t.expr);
    }
    return { expr: { op: callee, args } as RewardExpr, type: "number" };
  }
  private at(origin: Origin, code: CompilerCode, message: string, hint?: string): undefined {
    this.error(origin, code, message, hint);
    return undefined;
  }

  private mismatch(e: ast.Expression, file: string, message: string, hint?: string): undefined {
    this.error({ file, range: e.range }, "type-mismatch", message, hint);
    return undefined;
  }
  private error(origin: Origin, code: CompilerCode, message: string, hint?: string): void {
    expressionError(this.diagnostics, origin, code, message, hint);
  }
}

/** Why a regular expression does not compile, if it does not. */
function regexProblem(pattern: string): string | undefined {
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
