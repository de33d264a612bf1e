// Building blocks of the block schemas. Values reach zod in a "plain" form made by
// semantics/plain.ts: names are `{ $name: [...] }`, typed constructor calls are
// `{ $call, args, named }`, expressions over signals are `{ $expr }`.
import * as z from "zod";

export interface PlainName {
  readonly $name: readonly string[];
}

export interface PlainCall {
  readonly $call: string;
  readonly args: readonly unknown[];
  readonly named: Readonly<Record<string, unknown>>;
}

export interface PlainExpression {
  readonly $expr: unknown;
}

export function isPlainName(v: unknown): v is PlainName {
  return typeof v === "object" && v !== null && Array.isArray((v as PlainName).$name);
}

export function isPlainCall(v: unknown): v is PlainCall {
  return typeof v === "object" && v !== null && typeof (v as PlainCall).$call === "string";
}

export function isPlainExpression(v: unknown): v is PlainExpression {
  return typeof v === "object" && v !== null && "$expr" in v;
}

/** A single-segment name used as an enum value (`leave_one_out`); strings are accepted too. */
function nameToString(v: unknown): unknown {
  return isPlainName(v) && v.$name.length === 1 ? v.$name[0] : v;
}

/** An enum; where it has a member `none`, the keyword `none` selects it. */
export function enumOf<const T extends readonly [string, ...string[]]>(values: T) {
  const hasNone = values.includes("none");
  return z.preprocess((v) => (v === null && hasNone ? "none" : nameToString(v)), z.enum(values));
}

/** `none` (null) means "not set": the schema turns it into the field's own "off" value. */
export function orNone<T extends z.ZodType>(schema: T) {
  return schema.nullable();
}

export const positiveInt = z.number().int().positive();
export const nonNegativeInt = z.number().int().nonnegative();
export const probability = z.number().min(0).max(1);

/** A reference to something declared (`code.run_tests`, `bank.tools`, `my_tool`). */
export const reference = z.custom<PlainName>(isPlainName, { message: "expected a name" });

/** Something a reward term may be: a number, a signal, an expression, or potential(...). */
export const rewardExpression = z.custom<number | PlainName | PlainCall | PlainExpression>(
  (v) => typeof v === "number" || isPlainName(v) || isPlainCall(v) || isPlainExpression(v),
  { message: "expected a reward expression (a number, a signal such as outcome.success, or an expression over signals)" },
);

/** Adds the field's documentation (shown on hover and in the published plan schema). */
export function doc<T extends z.ZodType>(schema: T, text: string): T {
  return schema.describe(text);
}
