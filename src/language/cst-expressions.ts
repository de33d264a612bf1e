// CST -> AST for expressions (operands, operators, postfix chains, literals), and the range and
// report helpers that the declarations (cst-to-ast.ts) share.
import type { CstElement, CstNode, IToken } from "chevrotain";
import type { Diagnostic } from "../diagnostics/diagnostic.js";
import type * as ast from "./ast.js";
import { type Children, firstOffset, isToken, nodes, tokens } from "./cst-children.js";
import { at } from "../contracts/checked.js";
import { ExpressionBuilder } from "./expression-builder.js";
import { tokenEndOffset } from "./lexer.js";
import type { LineIndex, Range } from "../contracts/source-range.js";
import { dedent, unescape } from "./string-literals.js";
import * as t from "./tokens.js";

const OPERATOR_KEYS = [t.When.name, t.Or.name, t.And.name, "ComparisonOp", "AdditiveOp", "MultiplicativeOp"];

/** Builds expressions; the AST builder of cst-to-ast.ts extends it with the declarations. */
export abstract class ExpressionAstBuilder {
  readonly diagnostics: Diagnostic[] = [];
  /** Where a compound expression's own syntax is (its operator, `(` or bracket), for reports. */
  protected readonly anchors = new WeakMap<object, Range>();

  constructor(
    readonly file: string,
    protected readonly lines: LineIndex,
  ) {}

  /** The entries of a block body or record (declarations, built by the subclass). */
  protected abstract body(n: CstNode): ast.Entry[];

  protected range(start: number, end: number): Range {
    if (!Number.isFinite(start)) start = Number.isFinite(end) ? end : 0;
    if (!Number.isFinite(end) || end < start) end = start;
    return this.lines.range(start, end);
  }

  protected tokenRange(tok: IToken): Range {
    return this.range(tok.startOffset, tokenEndOffset(tok));
  }

  protected nodeRange(node: CstNode): Range {
    const loc = node.location;
    if (!loc) return this.range(0, 0);
    return this.range(loc.startOffset, loc.endOffset === undefined ? Number.NaN : loc.endOffset + 1);
  }

  protected invalid(range: Range): ast.InvalidExpression {
    return { kind: "Invalid", range };
  }

  protected identifier(tok: IToken): ast.Identifier {
    return { kind: "Identifier", name: tok.image, range: this.tokenRange(tok) };
  }

  /** Remembers where `node`'s own syntax is, for the depth report. */
  anchor<T extends ast.Expression>(node: T, tok: IToken): T {
    this.anchors.set(node, this.tokenRange(tok));
    return node;
  }

  /**
   * expression = operand { operator operand }, grouped by precedence climbing: binary
   * operators are left-associative, `not` applies to a whole comparison, and a comparison takes
   * one operator. Recursion depth is bounded by the number of precedence levels.
   */
  expression(n: CstNode): ast.Expression {
    const c = n.children as Children;
    const operands = nodes(c, "operand");
    if (operands.length === 0) return this.invalid(this.nodeRange(n));
    const operators: IToken[] = [];
    // One token at a time: a chain can hold more operators than a call takes arguments.
    for (const key of OPERATOR_KEYS) for (const tok of tokens(c, key)) operators.push(tok);
    operators.sort((a, b) => a.startOffset - b.startOffset);
    // Recovery may leave an operator without its right operand: build what is complete.
    const count = Math.min(operands.length, operators.length + 1);
    return new ExpressionBuilder(this, operands.slice(0, count), operators.slice(0, count - 1)).build();
  }

  /** An operand without its `not` prefixes: signs, then the postfix expression. */
  operandValue(n: CstNode): ast.Expression {
    const c = n.children as Children;
    const inner = nodes(c, "postfix")[0];
    let result: ast.Expression = inner ? this.postfix(inner) : this.invalid(this.nodeRange(n));
    const signs = tokens(c, "AdditiveOp");
    for (let i = signs.length - 1; i >= 0; i--) {
      const op = at(signs, i);
      result = {
        kind: "Unary",
        operator: op.image as ast.UnaryOperator,
        operand: result,
        range: this.range(op.startOffset, result.range.end.offset),
      };
    }
    return result;
  }

  notTokens(n: CstNode): IToken[] {
    return tokens(n.children, t.Not.name);
  }

  rangeOf(start: number, end: number): Range {
    return this.range(start, end);
  }

  syntaxError(tok: IToken, message: string, hint: string): void {
    this.diagnostics.push({
      code: "syntax-error",
      severity: "error",
      message,
      file: this.file,
      range: this.tokenRange(tok),
      hint,
    });
  }

  private postfix(n: CstNode): ast.Expression {
    const c = n.children as Children;
    const primary = nodes(c, "primary")[0];
    let result = primary ? this.primary(primary) : this.invalid(this.nodeRange(n));
    const suffixes: CstElement[] = [...tokens(c, "Identifier"), ...nodes(c, "callArguments")].sort(
      (a, b) => firstOffset(a) - firstOffset(b),
    );
    for (const s of suffixes) {
      if (isToken(s)) {
        const property = this.identifier(s);
        result = {
          kind: "Member",
          object: result,
          property,
          range: this.range(result.range.start.offset, property.range.end.offset),
        };
      } else {
        const args = nodes(s.children as Children, "argument").map((a) => this.argument(a));
        const end = this.nodeRange(s).end.offset;
        result = { kind: "Call", callee: result, args, range: this.range(result.range.start.offset, end) };
        const open = tokens(s.children, t.LParen.name)[0];
        if (open) this.anchor(result, open);
      }
    }
    return result;
  }

  private argument(n: CstNode): ast.Argument {
    const c = n.children as Children;
    const name = tokens(c, "name")[0];
    const e = nodes(c, "expression")[0];
    const range = this.nodeRange(n);
    const value = e ? this.expression(e) : this.invalid(range);
    return { kind: "Argument", ...(name ? { name: this.identifier(name) } : {}), value, range };
  }

  private primary(n: CstNode): ast.Expression {
    const c = n.children as Children;
    const range = this.nodeRange(n);
    const num = tokens(c, "NumberToken")[0];
    if (num) return this.number(num);
    const str = tokens(c, "StringToken")[0];
    if (str) return this.string(str);
    if (tokens(c, t.True.name)[0]) return { kind: "Boolean", value: true, range };
    if (tokens(c, t.False.name)[0]) return { kind: "Boolean", value: false, range };
    if (tokens(c, t.None.name)[0]) return { kind: "None", range };
    const id = tokens(c, "Identifier")[0];
    if (id) return this.identifier(id);
    const list = nodes(c, "list")[0];
    if (list) {
      const items = nodes(list.children as Children, "expression").map((e) => this.expression(e));
      return { kind: "List", items, range: this.nodeRange(list) };
    }
    const record = nodes(c, "record")[0];
    if (record) {
      const body = nodes(record.children, "body")[0];
      return { kind: "Record", entries: body ? this.body(body) : [], range: this.nodeRange(record) };
    }
    const paren = nodes(c, "parenthesized")[0];
    if (paren) {
      const e = nodes(paren.children, "expression")[0];
      return e ? this.expression(e) : this.invalid(this.nodeRange(paren));
    }
    return this.invalid(range);
  }

  private number(tok: IToken): ast.Expression {
    const range = this.tokenRange(tok);
    if (tok.tokenType === t.MalformedNumber) return this.invalid(range);
    const value = Number(tok.image.replace(/_/g, ""));
    if (!Number.isFinite(value)) {
      this.diagnostics.push({
        code: "invalid-token",
        severity: "error",
        message: `number ${tok.image} is too large to represent`,
        file: this.file,
        range,
        hint: "numbers must fit a 64-bit float (at most about 1.8e308)",
      });
      return this.invalid(range);
    }
    return { kind: "Number", value, raw: tok.image, range };
  }

  protected string(tok: IToken): ast.StringLiteral {
    const range = this.tokenRange(tok);
    const image = tok.image;
    const multiline = tok.tokenType === t.TripleString || tok.tokenType === t.UnterminatedTripleString;
    let body: string;
    if (tok.tokenType === t.TripleString) body = dedent(image.slice(3, -3));
    else if (tok.tokenType === t.UnterminatedTripleString) body = dedent(image.slice(3));
    else if (tok.tokenType === t.UnterminatedString) body = image.slice(1);
    else body = image.slice(1, -1);
    return { kind: "String", value: unescape(body, tok, this), multiline, range };
  }
}
