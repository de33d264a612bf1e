// Precedence climbing: a flat `operand (operator operand)*` sequence from the CST becomes a tree
// of binary, `when` and `not` expressions.
import type { CstNode, IToken } from "chevrotain";
import type * as ast from "./ast.js";
import { binaryPrecedence, precedence } from "./ast.js";
import { at } from "../contracts/checked.js";
import type { Range } from "../contracts/source-range.js";

/** What the climber needs from the AST builder: operands, ranges and error reports. */
export interface OperandSource {
  notTokens(n: CstNode): IToken[];
  operandValue(n: CstNode): ast.Expression;
  rangeOf(start: number, end: number): Range;
  syntaxError(tok: IToken, message: string, hint: string): void;
  anchor<T extends ast.Expression>(node: T, tok: IToken): T;
}

/** Precedence climbing over one flat `operand (operator operand)*` sequence. */
export class ExpressionBuilder {
  private next = 0;
  /** Operands whose `not` prefixes have already been applied. */
  private readonly notsDone = new Set<number>();

  constructor(
    private readonly b: OperandSource,
    private readonly operands: readonly CstNode[],
    private readonly operators: readonly IToken[],
  ) {}

  build(): ast.Expression {
    return this.climb(0);
  }

  private climb(minPrecedence: number): ast.Expression {
    let left = this.operand(minPrecedence);
    let comparedAt: IToken | undefined;
    while (this.next <= this.operators.length && this.next >= 1) {
      const op = at(this.operators, this.next - 1);
      const p = binaryPrecedence(op.image as ast.BinaryOperator | "when");
      if (p < minPrecedence) break;
      if (p === precedence.comparison) {
        if (comparedAt)
          this.b.syntaxError(op, "comparisons cannot be chained", "combine them with 'and': a < b and b < c");
        comparedAt = op;
      }
      const right = this.climb(p + 1);
      const range = this.b.rangeOf(left.range.start.offset, right.range.end.offset);
      left = this.b.anchor(
        op.image === "when"
          ? { kind: "When", value: left, condition: right, range }
          : { kind: "Binary", operator: op.image as ast.BinaryOperator, left, right, range },
        op,
      );
    }
    return left;
  }

  /** The operand at the cursor; `not` prefixes take the whole comparison that follows. */
  private operand(minPrecedence: number): ast.Expression {
    const index = this.next;
    const node = at(this.operands, index);
    const nots = this.notsDone.has(index) ? [] : this.b.notTokens(node);
    if (nots.length > 0) {
      if (minPrecedence > precedence.not) {
        this.b.syntaxError(
          at(nots, 0),
          "'not' cannot follow this operator without parentheses",
          "write the negation in parentheses: a == (not b)",
        );
      }
      this.notsDone.add(index);
      let result = this.climb(precedence.comparison);
      for (let i = nots.length - 1; i >= 0; i--) {
        const tok = at(nots, i);
        result = {
          kind: "Unary",
          operator: "not",
          operand: result,
          range: this.b.rangeOf(tok.startOffset, result.range.end.offset),
        };
      }
      return result;
    }
    this.next = index + 1;
    return this.b.operandValue(node);
  }
}
