// The conformance vector file: {"cases": [{"name", "op", "input", "expected", "tol"?}]}, tol an
// absolute tolerance (default 1e-6). Parsing never throws: every problem comes back located
// (file, case index and name, field path) so a malformed file reads as a list of fixes.
import * as z from "zod";
import { isOpName, opNames, opSchemas, type OpName } from "../contracts/conformance-ops.js";

const DEFAULT_TOLERANCE = 1e-6;

export interface VectorCase {
  readonly name: string;
  readonly op: OpName;
  readonly input: unknown;
  readonly expected: unknown;
  readonly tol: number;
  /** Position in the file's `cases`, from 0. */
  readonly index: number;
}

export interface VectorFile {
  readonly file: string;
  readonly cases: readonly VectorCase[];
}

export type ParseResult =
  { readonly ok: true; readonly vectors: VectorFile } | { readonly ok: false; readonly problems: readonly string[] };

const fileSchema = z.strictObject({ cases: z.array(z.unknown()) });

const caseSchema = z.strictObject({
  name: z.string().min(1, "a case needs a non-empty name"),
  op: z.string(),
  input: z.unknown(),
  expected: z.unknown(),
  tol: z.number().min(0, "tol is an absolute tolerance: >= 0").optional(),
});

/** `cases[3].input.rewards[0]` style paths. */
function formatPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const key of path) out += typeof key === "number" ? `[${key}]` : out === "" ? String(key) : `.${String(key)}`;
  return out;
}

function located(issues: readonly z.core.$ZodIssue[], prefix: readonly PropertyKey[]): string[] {
  return issues.map((issue) => {
    const where = formatPath([...prefix, ...issue.path]);
    return where === "" ? issue.message : `${where}: ${issue.message}`;
  });
}

/** 1-based line and column of a character offset. */
function lineColumn(text: string, offset: number): string {
  const before = text.slice(0, offset);
  const line = before.split("\n").length;
  const column = offset - before.lastIndexOf("\n");
  return `${line}:${column}`;
}

export function parseVectorFile(file: string, text: string): ParseResult {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    const message = (error as Error).message;
    const at = /position (\d+)/.exec(message);
    return {
      ok: false,
      problems: [`${file}${at ? `:${lineColumn(text, Number(at[1]))}` : ""}: invalid JSON: ${message}`],
    };
  }
  const top = fileSchema.safeParse(json);
  if (!top.success) return { ok: false, problems: located(top.error.issues, []).map((p) => `${file}: ${p}`) };
  const problems: string[] = [];
  const cases: VectorCase[] = [];
  const names = new Map<string, number>();
  top.data.cases.forEach((raw, index) => {
    const name = (raw as { name?: unknown } | null)?.name;
    const here = `${file}: case ${index}${typeof name === "string" ? ` '${name}'` : ""}`;
    const missing = ["input", "expected"].filter((key) => raw !== null && typeof raw === "object" && !(key in raw));
    for (const key of missing) problems.push(`${here}: ${key}: missing`);
    const parsed = caseSchema.safeParse(raw);
    if (!parsed.success) {
      const rest = parsed.error.issues.filter((issue) => !missing.includes(String(issue.path[0])));
      for (const p of located(rest, [])) problems.push(`${here}: ${p}`);
      return;
    }
    if (missing.length > 0) return;
    const c = parsed.data;
    const previous = names.get(c.name);
    if (previous !== undefined) problems.push(`${here}: duplicate name (also case ${previous})`);
    else names.set(c.name, index);
    if (!isOpName(c.op)) {
      problems.push(`${here}: op: unknown op '${c.op}' (known: ${opNames.join(", ")})`);
      return;
    }
    const definition = opSchemas[c.op];
    const input = definition.input.safeParse(c.input);
    if (!input.success)
      for (const p of located(input.error.issues, ["input"])) problems.push(`${here} (${c.op}): ${p}`);
    const expected = definition.expected.safeParse(c.expected);
    if (!expected.success)
      for (const p of located(expected.error.issues, ["expected"])) problems.push(`${here} (${c.op}): ${p}`);
    cases.push({
      name: c.name,
      op: c.op,
      input: c.input,
      expected: c.expected,
      tol: c.tol ?? DEFAULT_TOLERANCE,
      index,
    });
  });
  if (problems.length > 0) return { ok: false, problems };
  return { ok: true, vectors: { file, cases } };
}
