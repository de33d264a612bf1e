// Building blocks of the block schemas, over the primitives of src/contracts/schema-primitives.ts
// (the plain form of values, enums, documented fields), which the env libraries share.
import * as z from "zod";
import { closest } from "../../contracts/suggest.js";
import {
  isPlainCall,
  isPlainExpression,
  isPlainName,
  reportDiagnostic as reportAny,
  type PlainCall,
  type PlainExpression,
  type PlainName,
  type SchemaDiagnostic as AnySchemaDiagnostic,
} from "../../contracts/schema-primitives.js";
import { isCompilerCode, type CompilerCode } from "../../diagnostics/codes/index.js";

export {
  doc,
  enumOf,
  isPlainCall,
  isPlainExpression,
  isPlainName,
  nonNegativeInt,
  positiveInt,
  probability,
  type PlainCall,
  type PlainExpression,
  type PlainName,
} from "../../contracts/schema-primitives.js";

/** A schema's problem as a diagnostic of the compiler (a code of src/diagnostics/codes/). */
export type SchemaDiagnostic = AnySchemaDiagnostic<CompilerCode>;

export function isSchemaDiagnostic(v: unknown): v is SchemaDiagnostic {
  return (
    typeof v === "object" &&
    v !== null &&
    typeof (v as SchemaDiagnostic).code === "string" &&
    isCompilerCode((v as SchemaDiagnostic).code) &&
    typeof (v as SchemaDiagnostic).message === "string"
  );
}

/** Reports `d` at the value being parsed, or at `path` below it (e.g. [0]: a call's first argument). */
export function reportDiagnostic(ctx: z.core.$RefinementCtx, d: SchemaDiagnostic, path: PropertyKey[] = []): void {
  reportAny(ctx, d, path);
}

export const reference = z.preprocess((v, ctx) => {
  if (isPlainName(v)) return v;
  const message = "{where} expects the name of a tool (env.tool, env.tools or a declared tool), found {found}";
  reportDiagnostic(ctx, {
    code: "type-mismatch",
    message,
    ...(typeof v === "string" ? { hint: `names are written without quotes: ${v}` } : {}),
  });
  return v;
}, z.custom<PlainName>(isPlainName));

/** Something a reward term may be: a number, a signal, an expression, or potential(...). */
export const rewardExpression = z.custom<number | PlainName | PlainCall | PlainExpression>(
  (v) => typeof v === "number" || isPlainName(v) || isPlainCall(v) || isPlainExpression(v),
  {
    message: "expected a reward expression (a number, a signal such as outcome.success, or an expression over signals)",
  },
);

/** A call form of a shorthand field: `constant(N)`, `refresh(N)`. */
export interface ShorthandCall {
  /** How the call is written in messages, e.g. `constant(N)`. */
  readonly form: string;
  /** The schema of its one argument, and what that argument must be, in words. */
  readonly arg: z.ZodType;
  readonly argText: string;
  /** The plan's form of the call. */
  readonly build: (arg: unknown) => unknown;
}

/**
 * A field written in the spec as one of a few names (`token_mean`) or one-argument calls
 * (`constant(1024)`) and held in the plan as a block (`{ mode, constant }`), checked here in the
 * terms the spec uses: a misspelt name is an invalid-enum at the value with a suggestion, never a
 * missing field of the plan's form. A block written out in the plan's form is checked by `block`
 * (its `discriminator`, when written as a name, is read as a string, as enums are).
 */
export function shorthand<T extends z.ZodType>(
  names: Readonly<Record<string, unknown>>,
  calls: Readonly<Record<string, ShorthandCall>>,
  block: T,
  discriminator: string,
) {
  const nameList = Object.keys(names);
  const callList = Object.keys(calls);
  const choices = [...nameList, ...Object.values(calls).map((c) => c.form)].join(", ");
  const expected = `expected one of ${choices}`;
  /** The choice closest to a misspelt name or callee, as it would be written. */
  const suggest = (word: string): string | undefined => {
    const c = closest(word, [...nameList, ...callList]);
    return c === undefined ? undefined : `did you mean '${calls[c] ? calls[c].form : c}'?`;
  };
  let nullable: boolean | undefined;
  const acceptsNull = () => (nullable ??= block.safeParse(null).success);
  return z.preprocess((v, ctx) => {
    const fail = (d: SchemaDiagnostic, path: PropertyKey[] = []) => {
      reportDiagnostic(ctx, d, path);
      return v;
    };
    if (v === undefined || (v === null && acceptsNull())) return v;
    if (v === null) return fail({ code: "type-mismatch", message: `{where} expects one of ${choices}, found none` });
    if (typeof v === "string" || isPlainName(v)) {
      const written = typeof v === "string" ? v : v.$name.join(".");
      if (Object.hasOwn(names, written)) return names[written];
      const call = Object.hasOwn(calls, written) ? calls[written] : undefined;
      if (call)
        return fail({
          code: "invalid-value",
          message: `'${written}' needs its argument in {where}: write ${call.form}`,
          hint: `${call.form}: N is ${call.argText}`,
        });
      const hint = suggest(written);
      return fail({
        code: "invalid-enum",
        message: `'${written}' is not a valid value for {where}; ${expected}`,
        ...(hint ? { hint } : {}),
      });
    }
    if (isPlainCall(v)) {
      const call = Object.hasOwn(calls, v.$call) ? calls[v.$call] : undefined;
      if (!call) {
        const hint = Object.hasOwn(names, v.$call)
          ? `'${v.$call}' takes no arguments: write '${v.$call}'`
          : suggest(v.$call);
        return fail({
          code: "invalid-enum",
          message: `'${v.$call}(...)' is not a valid value for {where}; ${expected}`,
          ...(hint ? { hint } : {}),
        });
      }
      if (v.args.length !== 1 || Object.keys(v.named).length > 0)
        return fail({ code: "invalid-call", message: `${call.form} takes one argument: N, ${call.argText}` });
      const arg = call.arg.safeParse(v.args[0]);
      if (!arg.success)
        return fail(
          { code: "invalid-value", message: `the argument of ${call.form} must be ${call.argText}, found {found}` },
          [0],
        );
      return call.build(arg.data);
    }
    if (typeof v === "object" && !Array.isArray(v) && !isPlainExpression(v)) {
      const tag = (v as Record<string, unknown>)[discriminator];
      return isPlainName(tag) && tag.$name.length === 1 ? { ...v, [discriminator]: tag.$name[0] } : v;
    }
    return fail({ code: "type-mismatch", message: `{where} expects one of ${choices}, found {found}` });
  }, block);
}
