// The tools a dataset task can offer its model before it answers (docs/datasets.md, "Tools"):
// `calculator`, arithmetic on numbers, and `lookup`, an entry of the row's own lookup column.
// Both run here, without Python or a network. A call the tool cannot serve (a malformed
// expression, a key the row lacks) is an observation saying so, the model's to correct; a call of
// a tool the env does not serve is an env error (lowering refuses such a spec).
import { EnvError } from "../../../contracts/env.js";
import { columnValue, DATASET_TOOLS, isDatasetTool, type DatasetRow } from "../../../contracts/dataset-rows.js";
import type { ToolCall } from "../../../contracts/tool-calls.js";

/** A malformed expression, said to the model. */
class ExpressionError extends Error {}

const TOKEN = /\s*(?:(\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|(\*\*|[-+*/%^()]))/y;
/** Longer expressions are refused: a call's cost stays bounded. */
const MAX_EXPRESSION = 1000;

/** The value of an arithmetic expression: numbers, + - * / %, ^ or ** (right-associative), parentheses, unary signs. */
export function evaluateArithmetic(expression: string): number {
  if (expression.length > MAX_EXPRESSION)
    throw new ExpressionError(`the expression is longer than ${MAX_EXPRESSION} characters`);
  const tokens: string[] = [];
  TOKEN.lastIndex = 0;
  const text = expression.replace(/,(?=\d{3}\b)/g, "").trimEnd();
  while (TOKEN.lastIndex < text.length) {
    const at = TOKEN.lastIndex;
    const m = TOKEN.exec(text);
    if (!m) {
      const where = at + (text.slice(at).length - text.slice(at).trimStart().length);
      throw new ExpressionError(
        `unexpected '${text[where]}' at character ${where + 1}; use numbers, + - * / % ^ and parentheses`,
      );
    }
    tokens.push(m[0].trim());
  }
  let i = 0;
  const peek = () => tokens[i];
  const expect = (t: string) => {
    if (tokens[i] !== t)
      throw new ExpressionError(`expected '${t}'${tokens[i] === undefined ? " at the end" : ` before '${tokens[i]}'`}`);
    i++;
  };
  // sum := product (('+'|'-') product)*; product := unary (('*'|'/'|'%') unary)*; unary := ('+'|'-') unary | power; power := atom (('^'|'**') unary)?
  const atom = (): number => {
    const t = tokens[i++];
    if (t === "(") {
      const v = sum();
      expect(")");
      return v;
    }
    if (t === undefined || !/^[\d.]/.test(t))
      throw new ExpressionError(t === undefined ? "the expression ends too early" : `unexpected '${t}'`);
    return Number(t);
  };
  const power = (): number => {
    const base = atom();
    if (peek() === "^" || peek() === "**") {
      i++;
      return base ** unary();
    }
    return base;
  };
  const unary = (): number => {
    if (peek() === "-" || peek() === "+") return tokens[i++] === "-" ? -unary() : unary();
    return power();
  };
  const product = (): number => {
    let v = unary();
    for (let op = peek(); op === "*" || op === "/" || op === "%"; op = peek()) {
      i++;
      const r = unary();
      if (op !== "*" && r === 0) throw new ExpressionError("division by zero");
      v = op === "*" ? v * r : op === "/" ? v / r : v % r;
    }
    return v;
  };
  const sum = (): number => {
    let v = product();
    for (let op = peek(); op === "+" || op === "-"; op = peek()) {
      i++;
      v = op === "+" ? v + product() : v - product();
    }
    return v;
  };
  if (tokens.length === 0) throw new ExpressionError("the expression is empty");
  const value = sum();
  if (i < tokens.length) throw new ExpressionError(`unexpected '${tokens[i]}'`);
  if (!Number.isFinite(value)) throw new ExpressionError("the result is not a finite number");
  return value;
}

/** A number as the model reads it: integers exactly, others to 12 significant digits. */
function showNumber(value: number): string {
  return Number.isInteger(value) ? String(value) : String(Number(value.toPrecision(12)));
}

/** The observation of one call of a built-in tool on `row`. */
export function runDatasetTool(call: ToolCall, row: DatasetRow, lookupColumn: string | null): string {
  if (!isDatasetTool(call.name))
    throw new EnvError(`dataset env: there is no built-in tool '${call.name}' (calculator, lookup)`, "protocol");
  const argument = call.arguments[DATASET_TOOLS[call.name]];
  if (typeof argument !== "string") return `Error: '${call.name}' takes a string '${DATASET_TOOLS[call.name]}'.`;
  if (call.name === "calculator") {
    try {
      return showNumber(evaluateArithmetic(argument));
    } catch (error) {
      if (error instanceof ExpressionError) return `Error: ${error.message}.`;
      throw error;
    }
  }
  const entries =
    lookupColumn === null ? undefined : (columnValue(row.columns, lookupColumn) as Record<string, unknown> | undefined);
  if (entries === undefined)
    throw new EnvError("dataset env: the lookup tool is offered, but the env names no lookup_column", "protocol");
  if (!Object.hasOwn(entries, argument)) {
    const keys = Object.keys(entries);
    return `No entry '${argument}'. Keys: ${keys.slice(0, 50).join(", ")}${keys.length > 50 ? ", ..." : ""}.`;
  }
  const value = entries[argument];
  return typeof value === "string" ? value : JSON.stringify(value);
}
