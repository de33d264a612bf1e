// The typed syntax tree: readonly nodes, each with a `kind` tag and its source range.
// Built from the CST by cst-to-ast.ts; consumed by the printer, the semantic model and the editor.
import type { Range } from "../contracts/source-range.js";

interface NodeBase {
  readonly range: Range;
}

export interface Document extends NodeBase {
  readonly kind: "Document";
  readonly file: string;
  readonly imports: readonly ImportDecl[];
  readonly blocks: readonly Block[];
}

export interface ImportDecl extends NodeBase {
  readonly kind: "Import";
  readonly path: StringLiteral;
  readonly alias?: Identifier;
  readonly doc?: string;
}

export interface Identifier extends NodeBase {
  readonly kind: "Identifier";
  readonly name: string;
}

/** `type [name] [extends ref] { entries }`; top level or nested in a block or record. */
export interface Block extends NodeBase {
  readonly kind: "Block";
  readonly type: Identifier;
  readonly name?: Identifier;
  readonly extends?: Reference;
  readonly entries: readonly Entry[];
  /** Text of the `///` comments directly above, lines joined with "\n". */
  readonly doc?: string;
}

/** `a.b.c: value`: a dotted path sets one nested field. */
export interface Field extends NodeBase {
  readonly kind: "Field";
  readonly path: readonly Key[];
  readonly value: Expression;
  readonly doc?: string;
}

/** One segment of a field path: an identifier, a kebab-case name or a quoted string. */
export interface Key extends NodeBase {
  readonly kind: "Key";
  readonly name: string;
  readonly quoted: boolean;
}

export type Entry = Field | Block;

/** `a.b.c` in an `extends` clause. */
export interface Reference extends NodeBase {
  readonly kind: "Reference";
  readonly parts: readonly Identifier[];
}

export type Expression =
  | NumberLiteral
  | StringLiteral
  | BooleanLiteral
  | NoneLiteral
  | Identifier
  | MemberExpression
  | CallExpression
  | ListExpression
  | RecordExpression
  | UnaryExpression
  | BinaryExpression
  | WhenExpression
  | InvalidExpression;

export interface NumberLiteral extends NodeBase {
  readonly kind: "Number";
  readonly value: number;
  /** Source spelling (`1_000`, `5e-7`), kept for the formatter. */
  readonly raw: string;
}

export interface StringLiteral extends NodeBase {
  readonly kind: "String";
  readonly value: string;
  /** Written as `"""` … `"""`. */
  readonly multiline: boolean;
}

export interface BooleanLiteral extends NodeBase {
  readonly kind: "Boolean";
  readonly value: boolean;
}

/** `none`: a value meaning "not set". */
export interface NoneLiteral extends NodeBase {
  readonly kind: "None";
}

export interface MemberExpression extends NodeBase {
  readonly kind: "Member";
  readonly object: Expression;
  readonly property: Identifier;
}

export interface CallExpression extends NodeBase {
  readonly kind: "Call";
  readonly callee: Expression;
  readonly args: readonly Argument[];
}

export interface Argument extends NodeBase {
  readonly kind: "Argument";
  readonly name?: Identifier;
  readonly value: Expression;
}

export interface ListExpression extends NodeBase {
  readonly kind: "List";
  readonly items: readonly Expression[];
}

export interface RecordExpression extends NodeBase {
  readonly kind: "Record";
  readonly entries: readonly Entry[];
}

export type UnaryOperator = "-" | "+" | "not";

export interface UnaryExpression extends NodeBase {
  readonly kind: "Unary";
  readonly operator: UnaryOperator;
  readonly operand: Expression;
}

export type BinaryOperator = "or" | "and" | "==" | "!=" | "<" | "<=" | ">" | ">=" | "+" | "-" | "*" | "/" | "%";

export interface BinaryExpression extends NodeBase {
  readonly kind: "Binary";
  readonly operator: BinaryOperator;
  readonly left: Expression;
  readonly right: Expression;
}

/** `value when condition`: `value` when the condition holds, 0 otherwise. */
export interface WhenExpression extends NodeBase {
  readonly kind: "When";
  readonly value: Expression;
  readonly condition: Expression;
}

/** Stands where the parser recovered from a syntax error; already reported. */
export interface InvalidExpression extends NodeBase {
  readonly kind: "Invalid";
}

export type Node = Document | ImportDecl | Block | Field | Key | Reference | Argument | Expression;

/** Binding strength, loosest first: used by the printer to place parentheses. */
export const precedence = {
  when: 1,
  or: 2,
  and: 3,
  not: 4,
  comparison: 5,
  additive: 6,
  multiplicative: 7,
  unary: 8,
  postfix: 9,
  primary: 10,
} as const;

/** Binding strength of a binary operator, `when` included (written as in the source). */
export function binaryPrecedence(operator: BinaryOperator | "when"): number {
  switch (operator) {
    case "when":
      return precedence.when;
    case "or":
      return precedence.or;
    case "and":
      return precedence.and;
    case "+":
    case "-":
      return precedence.additive;
    case "*":
    case "/":
    case "%":
      return precedence.multiplicative;
    default:
      return precedence.comparison;
  }
}

export function expressionPrecedence(e: Expression): number {
  switch (e.kind) {
    case "When":
      return precedence.when;
    case "Binary":
      return binaryPrecedence(e.operator);
    case "Unary":
      return e.operator === "not" ? precedence.not : precedence.unary;
    case "Member":
    case "Call":
      return precedence.postfix;
    default:
      return precedence.primary;
  }
}

/** The dotted name of an identifier/member chain (`algo.grpo`), or undefined for other expressions. */
export function dottedName(e: Expression): string | undefined {
  if (e.kind === "Identifier") return e.name;
  if (e.kind === "Member") {
    const head = dottedName(e.object);
    return head === undefined ? undefined : `${head}.${e.property.name}`;
  }
  return undefined;
}
