// Typing a value against a zod schema, with every problem mapped back to the source text that
// caused it: unknown-field, type-mismatch, invalid-enum, missing-field, invalid-value.
import type * as z from "zod";
import type { Diagnostic } from "../diagnostics/diagnostic.js";
import { didYouMean } from "../contracts/suggest.js";
import { contentKey, toPlain, valueAt, WrittenValues } from "./plain.js";
import { isSchemaDiagnostic } from "./schema/common.js";
import { acceptsNone, fieldDoc, fieldNames } from "./schema/introspect.js";
import { describeValue, type Origin, type RecordValue, type Value } from "./values.js";
import type { CompilerCode } from "../diagnostics/codes/index.js";

export interface ValidationResult<T> {
  readonly data?: T;
  readonly diagnostics: Diagnostic[];
  /** The values written, by their path in `plain` (zod's issue paths). */
  readonly valuesByPath: WrittenValues;
  /**
   * When a memo was given: a short id of the value's content (its contentKey), the same
   * for every value of that content within the memo; what later stages memoise by.
   */
  readonly contentKey?: string;
}

/**
 * Schema results by the content they were computed on (contentKey), shared by
 * the values one check validates against one schema: equal inputs are parsed once. Only the
 * parse is shared; its issues are located per value, in that value's own text. Each distinct
 * content also gets a short id: a content key is a variant's whole text, and the lint and plan
 * memos hashing it again for every variant cost more than the lookups they saved.
 */
export class ParseMemo {
  private readonly byContent = new Map<
    string,
    { readonly id: string; readonly result: z.ZodSafeParseResult<unknown> }
  >();

  /** `schema`'s result on `value`, parsed once per content; and that content's id. */
  parse<S extends z.ZodType>(schema: S, value: Value): { id: string; result: z.ZodSafeParseResult<z.output<S>> } {
    const content = contentKey(value);
    let known = this.byContent.get(content);
    if (!known) {
      known = { id: String(this.byContent.size), result: schema.safeParse(toPlain(value)) };
      this.byContent.set(content, known);
    }
    return known as { id: string; result: z.ZodSafeParseResult<z.output<S>> };
  }
}

/** Where a diagnostic about the whole value (e.g. a missing top-level field) points. */
export interface Subject {
  readonly label: string;
  readonly origin: Origin;
}

function dotted(path: readonly PropertyKey[]): string {
  return path.map(String).join(".");
}

function describeExpected(expected: string): string {
  switch (expected) {
    case "number":
      return "a number";
    case "int":
      return "a whole number";
    case "string":
      return "a string";
    case "boolean":
      return "true or false";
    case "object":
      return "a block { ... }";
    case "array":
      return "a list [ ... ]";
    case "record":
      return "a block { ... }";
    case "null":
      return "none";
    case "tuple":
      return "a list [ ... ]";
    default:
      return expected;
  }
}

export function validate<S extends z.ZodType>(
  value: RecordValue,
  schema: S,
  subject: Subject,
  memo?: ParseMemo,
): ValidationResult<z.output<S>> {
  const valuesByPath = new WrittenValues(value);
  // With a memo, the plain form is built only for a content not parsed before (and for issues).
  const memoised = memo?.parse(schema, value);
  const result = memoised?.result ?? schema.safeParse(toPlain(value));
  const keyed = memoised === undefined ? {} : { contentKey: memoised.id };
  if (result.success) return { data: result.data, diagnostics: [], valuesByPath, ...keyed };
  const plain = toPlain(value);
  const diagnostics: Diagnostic[] = [];
  const seen = new Set<string>();
  const push = (d: Diagnostic) => {
    const key = `${d.range.start.offset}:${d.file}:${d.code}:${d.message}`;
    if (!seen.has(key)) {
      seen.add(key);
      diagnostics.push(d);
    }
  };
  const all = result.error.issues.flatMap((issue) => issueDiagnostics(issue, schema, plain, valuesByPath, subject));
  // A misspelt field that is also required shows up twice: once unknown (did you mean 'policy'?)
  // and once missing; the first says it all.
  const suggested = new Set(
    all.filter((d) => d.code === "unknown-field" && d.hint?.startsWith("did you mean")).map((d) => d.hint),
  );
  for (const d of all) {
    if (d.code === "missing-field" && suggested.has(`did you mean '${/'([^']+)'/.exec(d.message)?.[1]}'?`)) continue;
    push(d);
  }
  return { diagnostics, valuesByPath, ...keyed };
}

/** A choice written as a call (`mean(2)`, `rooms(3)`): the bare name it may have meant. */
function calledChoiceHint(v: Value, choices: readonly string[]): string | undefined {
  if (v.kind !== "call") return undefined;
  return choices.includes(v.callee)
    ? `'${v.callee}' takes no arguments: write '${v.callee}'`
    : didYouMean(v.callee, choices);
}

/** Where the key `path[-1]` was written in its parent record, or the parent block's own name. */
function keyOrigin(valuesByPath: WrittenValues, path: readonly PropertyKey[], subject: Subject): Origin {
  for (let n = path.length; n > 0; n--) {
    const parent = valuesByPath.get(path.slice(0, n - 1));
    if (parent?.kind === "record") {
      const o = parent.keyOrigins.get(String(path[n - 1]));
      if (o) return o;
    }
  }
  return subject.origin;
}

function extendsFailedAbove(valuesByPath: WrittenValues, path: readonly PropertyKey[]): boolean {
  for (let n = path.length; n >= 0; n--) {
    const v = valuesByPath.get(path.slice(0, n));
    if (v?.kind === "record" && v.extendsFailed) return true;
  }
  return false;
}

/** The name under which a missing field's parent block was written (e.g. the `policy` keyword). */
function blockOrigin(valuesByPath: WrittenValues, parentPath: readonly PropertyKey[], subject: Subject): Origin {
  return parentPath.length === 0 ? subject.origin : keyOrigin(valuesByPath, parentPath, subject);
}

function issueDiagnostics(
  issue: z.core.$ZodIssue,
  schema: z.ZodType,
  plain: unknown,
  valuesByPath: WrittenValues,
  subject: Subject,
): Diagnostic[] {
  const path = issue.path;
  const where = path.length > 0 ? `'${dotted(path)}'` : subject.label;
  const found = valueAt(valuesByPath, path);
  const at = (o: Origin, code: CompilerCode, message: string, hint?: string): Diagnostic => ({
    code,
    severity: "error",
    message,
    file: o.file,
    range: o.range,
    ...(hint ? { hint } : {}),
  });

  /** A required field absent from the block at `parent` (unless that block's extends failed: already reported). */
  const missing = (parent: readonly PropertyKey[], field: string, detail: string): Diagnostic[] =>
    extendsFailedAbove(valuesByPath, parent)
      ? []
      : [
          at(
            blockOrigin(valuesByPath, parent, subject),
            "missing-field",
            `missing field '${field}' in ${parent.length > 0 ? `'${dotted(parent)}'` : subject.label}`,
            `add '${field}: ...'; ${detail}`,
          ),
        ];

  // A schema that reported its own diagnostic (schema/common.ts reportDiagnostic) says it best.
  const own = issue.code === "custom" ? (issue.params as { diagnostic?: unknown } | undefined)?.diagnostic : undefined;
  if (isSchemaDiagnostic(own)) {
    const fill = (text: string) =>
      text.replaceAll("{where}", where).replaceAll("{found}", found ? describeValue(found.value) : "nothing");
    return [
      at(
        found?.value.origin ?? subject.origin,
        own.code,
        fill(own.message),
        own.hint === undefined ? undefined : fill(own.hint),
      ),
    ];
  }

  // A block was expected where a name, a call or an expression was written: zod sees its plain
  // form ({ $name }, { $call, args, named }, { $expr }) and reports unknown fields of that form,
  // or fields of the block missing below it. Either way it is one mismatch, at the value.
  if (
    found &&
    found.value.kind !== "record" &&
    found.value.kind !== "list" &&
    (!found.exact || issue.code === "unrecognized_keys")
  ) {
    const nullable = acceptsNone(schema, found.at, plain);
    const none = nullable && found.value.kind === "name" ? didYouMean(found.value.path.join("."), ["none"]) : undefined;
    const field = found.at.length > 0 ? `'${dotted(found.at)}'` : subject.label;
    return [
      at(
        found.value.origin,
        "type-mismatch",
        `${field} expects a block { ... }${nullable ? " or none" : ""}, found ${describeValue(found.value)}`,
        none,
      ),
    ];
  }

  switch (issue.code) {
    case "unrecognized_keys": {
      const record = found?.exact ? found.value : undefined;
      const candidates = fieldNames(schema, path, plain);
      return issue.keys.map((key) => {
        const origin = record?.kind === "record" ? (record.keyOrigins.get(key) ?? record.origin) : subject.origin;
        const inBlock = path.length > 0 ? ` in '${dotted(path)}'` : "";
        const suggestion = didYouMean(key, candidates);
        return at(
          origin,
          "unknown-field",
          `unknown field '${key}'${inBlock}`,
          suggestion ?? (candidates.length > 0 ? `known fields: ${candidates.sort().join(", ")}` : undefined),
        );
      });
    }
    case "invalid_type": {
      if (!found?.exact) return missing(path.slice(0, -1), String(path[path.length - 1]), "it has no default");
      return [
        at(
          found.value.origin,
          "type-mismatch",
          `${where} expects ${describeExpected(issue.expected)}, found ${describeValue(found.value)}`,
        ),
      ];
    }
    case "invalid_value": {
      const values = issue.values.map(String);
      if (!found?.exact) return [at(subject.origin, "invalid-enum", `${where} must be one of ${values.join(", ")}`)];
      const v = found.value;
      const written = v.kind === "name" ? v.path.join(".") : v.kind === "scalar" ? String(v.value) : undefined;
      if (written === undefined)
        return [
          at(
            v.origin,
            "type-mismatch",
            `${where} expects one of ${values.join(", ")}, found ${describeValue(v)}`,
            calledChoiceHint(v, values),
          ),
        ];
      return [
        at(
          v.origin,
          "invalid-enum",
          `'${written}' is not a valid value for ${where}; expected one of ${values.join(", ")}`,
          didYouMean(written, values),
        ),
      ];
    }
    case "invalid_union": {
      const u = issue as z.core.$ZodIssueInvalidUnion & { discriminator?: string; options?: unknown[] };
      if (u.discriminator && u.options) {
        const options = u.options.map(String);
        if (!found?.exact) return missing(path.slice(0, -1), u.discriminator, `one of ${options.join(", ")}`);
        const v = found.value;
        const written = v.kind === "name" ? v.path.join(".") : v.kind === "scalar" ? String(v.value) : describeValue(v);
        return [
          at(
            v.origin,
            "invalid-enum",
            `'${written}' is not a valid value for ${where}; expected one of ${options.join(", ")}`,
            calledChoiceHint(v, options) ?? didYouMean(written, options),
          ),
        ];
      }
      // The option that got furthest into the value (`[code.run_tests, 5]` is a list, but of
      // names) says what is wrong inside it; when no option got past the value itself, say
      // what the field takes.
      const depth = (issues: readonly z.core.$ZodIssue[]) =>
        issues.reduce((d, i) => Math.min(d, i.path.length), Number.POSITIVE_INFINITY);
      const options = (u.errors ?? []).filter((issues) => issues.length > 0);
      const furthest = options.reduce<readonly z.core.$ZodIssue[] | undefined>(
        (best, issues) => (depth(issues) > (best ? depth(best) : 0) ? issues : best),
        undefined,
      );
      if (furthest)
        return furthest.flatMap((inner) =>
          issueDiagnostics({ ...inner, path: [...path, ...inner.path] }, schema, plain, valuesByPath, subject),
        );
      const origin = found?.value.origin ?? subject.origin;
      return [
        at(
          origin,
          "type-mismatch",
          `${where} has the wrong form${found ? `: found ${describeValue(found.value)}` : ""}`,
          fieldDoc(schema, path, plain),
        ),
      ];
    }
    case "too_small":
    case "too_big": {
      const small = issue.code === "too_small";
      const bound = small ? issue.minimum : issue.maximum;
      const inclusive = (issue as { inclusive?: boolean }).inclusive !== false;
      const what = issue.origin === "array" ? "items" : issue.origin === "string" ? "characters" : "";
      const relation = small ? (inclusive ? "at least" : "more than") : inclusive ? "at most" : "less than";
      // A message the schema wrote itself says more than ours.
      const custom = !/^Too (small|big)/.test(issue.message);
      const message = custom
        ? `${where}: ${issue.message}`
        : issue.origin === "array" || issue.origin === "string"
          ? `${where} needs ${relation} ${String(bound)} ${what}`
          : `${where} must be ${relation} ${String(bound)}${found?.exact ? `, found ${describeValue(found.value)}` : ""}`;
      return [at(found?.value.origin ?? subject.origin, "invalid-value", message)];
    }
    case "invalid_format":
    case "not_multiple_of":
    case "custom":
    default: {
      const origin = found?.value.origin ?? subject.origin;
      const message = issue.message.startsWith("Invalid input: expected int")
        ? `${where} must be a whole number`
        : `${where}: ${issue.message}`;
      return [at(origin, issue.code === "custom" ? "invalid-value" : "type-mismatch", message)];
    }
  }
}
