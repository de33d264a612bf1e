// The smallest building blocks of schemas over spec values, shared by the block schemas
// (src/semantics/schema/) and the env libraries' declarations (src/contracts/libraries/). Values reach
// zod in a "plain" form (src/semantics/plain.ts): names are `{ $name: [...] }`, typed constructor
// calls are `{ $call, args, named }`, expressions over signals are `{ $expr }`.
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

/**
 * A problem a schema reports as the diagnostic it should be (src/semantics/validate.ts renders it):
 * in `message` and `hint`, `{where}` becomes the field's dotted path and `{found}` a description
 * of the value written there.
 */
export interface SchemaDiagnostic<C extends string = string> {
  readonly code: C;
  readonly message: string;
  readonly hint?: string;
}

/** Reports `d` at the value being parsed, or at `path` below it (e.g. [0]: a call's first argument). */
export function reportDiagnostic(ctx: z.core.$RefinementCtx, d: SchemaDiagnostic, path: PropertyKey[] = []): void {
  ctx.addIssue({ code: "custom", message: d.message, path, params: { diagnostic: d } });
}

/**
 * An enum; where it has a member `none`, the keyword `none` selects it. `aliases` are names people
 * write for a member in other languages (`int` for `integer`): still errors, with that member
 * suggested where edit distance would not find it.
 */
export function enumOf<const T extends readonly [string, ...string[]]>(
  values: T,
  aliases: Readonly<Record<string, T[number]>> = {},
) {
  const hasNone = values.includes("none");
  return z.preprocess((v, ctx) => {
    const s = v === null && hasNone ? "none" : nameToString(v);
    if (typeof s === "string" && Object.hasOwn(aliases, s)) {
      reportDiagnostic(ctx, {
        code: "invalid-enum",
        message: `'${s}' is not a valid value for {where}; expected one of ${values.join(", ")}`,
        hint: `did you mean '${aliases[s]}'?`,
      });
    }
    return s;
  }, z.enum(values));
}

export const positiveInt = z.number().int().positive();
export const nonNegativeInt = z.number().int().nonnegative();
export const probability = z.number().min(0).max(1);

/** A reference to a tool (`code.run_tests`, `bank.tools`, `my_tool`). */
/** Adds the field's documentation (shown on hover and in the published plan schema). */
export function doc<T extends z.ZodType>(schema: T, text: string): T {
  return schema.describe(text);
}
