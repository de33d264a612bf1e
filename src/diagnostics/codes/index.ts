// Every diagnostic code, typed: the compiler's own codes, each beside its explanation (one file
// per stage), and the lint rules' codes, which the rules declare with their own explanations
// (src/lint/rules/). A diagnostic's code is one of these, so a misspelt code does not compile.
import type { CodeExplanation } from "./explanation.js";
import { frontEndCodes } from "./front-end.js";
import { lintDriverCodes } from "./lint.js";
import { planCodes } from "./plan.js";
import { semanticsCodes } from "./semantics.js";

/** The compiler's codes outside the lint rules, for `arl explain` (test/cli/explain.test.ts keeps this complete). */
export const compilerCodes = {
  ...frontEndCodes,
  ...semanticsCodes,
  ...planCodes,
  ...lintDriverCodes,
} as const satisfies Record<string, CodeExplanation>;

/** A code the compiler's stages report outside the lint rules. */
export type CompilerCode = keyof typeof compilerCodes;

declare const lintRuleCode: unique symbol;
/** A lint rule's code: declared by the rule itself (src/lint/rule.ts), so only the lint registry makes one. */
export type LintRuleCode = string & { readonly [lintRuleCode]: true };

/** Every code a diagnostic can carry. */
export type DiagnosticCode = CompilerCode | LintRuleCode;

/** The explanation of a compiler code; undefined for any other string. */
export function compilerCodeExplanation(code: string): CodeExplanation | undefined {
  return Object.hasOwn(compilerCodes, code) ? compilerCodes[code as CompilerCode] : undefined;
}

/** Whether `code` is one of the compiler's own codes. */
export function isCompilerCode(code: string): code is CompilerCode {
  return Object.hasOwn(compilerCodes, code);
}
