// Writing plan and lock files: atomically (a temporary file in the same folder, then a
// rename), so that a reader never sees half a file and an interrupted run leaves the old one.
// Reading a plan file back: bounded, validated and checked against its own hash.
import { mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { planHash } from "./hash.js";
import { planSchema, type Plan } from "./schema.js";

export function writeFileAtomic(target: string, text: string): void {
  mkdirSync(path.dirname(target), { recursive: true });
  const temp = path.join(
    path.dirname(target),
    `.${path.basename(target)}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`,
  );
  try {
    writeFileSync(temp, text);
    renameSync(temp, target);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
}

/**
 * A variant name as a file name: letters, digits and `._=,+-@` are kept, anything else
 * (`/`, `:`, spaces) is percent-encoded, so that distinct names stay distinct files.
 */
export function variantFileName(variant: string): string {
  let out = "";
  for (const ch of variant) {
    if (/[A-Za-z0-9._=,+@-]/.test(ch)) out += ch;
    else for (const byte of Buffer.from(ch, "utf8")) out += `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out.startsWith(".") ? `%2E${out.slice(1)}` : out;
}

/** A plan file that cannot be used as it is: the message names the file and what is wrong. */
export class PlanFileError extends Error {}

/**
 * The deepest JSON nesting a plan file may have. The front end bounds bracket nesting at 64,
 * and each expression level is two JSON levels ({op, args: [...]}), so a compiled plan stays
 * well below this; deeper input would exhaust the stack of the recursive schema and hash.
 */
const MAX_PLAN_JSON_DEPTH = 256;

/** Where JSON `text` first nests deeper than `limit` (a scan without recursion), or undefined. */
function jsonTooDeep(text: string, limit: number): { line: number; column: number } | undefined {
  let depth = 0;
  let inString = false;
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: the next character is escaped
      else if (c === 0x22) inString = false;
      continue;
    }
    if (c === 0x22) inString = true;
    else if (c === 0x0a) {
      line++;
      lineStart = i + 1;
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > limit) return { line, column: i - lineStart + 1 };
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return undefined;
}

/** Where JSON.parse gave up, as "line L, column C" where Node names an offset, without the text itself. */
function jsonErrorPosition(error: Error, text: string): string {
  const at = /position (\d+)/.exec(error.message);
  if (!at) return /end of (JSON )?input/i.test(error.message) ? "it ends early" : "a syntax error";
  const offset = Number(at[1]);
  const before = text.slice(0, offset);
  const line = before.split("\n").length;
  return `a syntax error at line ${line}, column ${offset - before.lastIndexOf("\n")}`;
}

/**
 * The plan in a plan file's text; `file` is the name its errors give. Its recomputed hash must
 * equal `expectedHash` when given (what a run directory recorded of the plan it wrote), else
 * the file's own `hash`. Throws PlanFileError.
 */
export function parsePlanFile(
  text: string,
  file: string,
  expectedHash?: string,
  remedy = "recompile it with 'arl plan'",
): Plan {
  const deep = jsonTooDeep(text, MAX_PLAN_JSON_DEPTH);
  if (deep) {
    throw new PlanFileError(
      `${file}:${deep.line}:${deep.column}: the plan nests deeper than ${MAX_PLAN_JSON_DEPTH} levels; no compiled plan does (the front end bounds nesting), so the file was generated or edited by hand: ${remedy}`,
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(text) as unknown;
  } catch (error) {
    const hint = text.trim() === "" ? "it is empty" : "it may have been cut short or edited";
    // Node's message quotes the text around the fault: name the position only, so a file that
    // is not a plan (a secret, say) never reaches the terminal.
    throw new PlanFileError(`${file}: not valid JSON (${jsonErrorPosition(error as Error, text)}); ${hint}: ${remedy}`);
  }
  const parsed = planSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new PlanFileError(
      `${file}: not a valid plan: ${issue?.message ?? "schema mismatch"} at ${issue?.path.join(".") || "the top level"} (${remedy})`,
    );
  }
  const hash = planHash(parsed.data);
  if (expectedHash !== undefined && hash !== expectedHash) {
    throw new PlanFileError(
      `${file} was changed after the run started: its content hashes to ${hash.slice(0, 19)}, the run recorded ${expectedHash.slice(0, 19)}; a resumed run must continue the plan it began with (restore the file, or start a new run)`,
    );
  }
  if (expectedHash === undefined && hash !== parsed.data.hash) {
    throw new PlanFileError(
      `${file} was edited after it was written: its hash no longer matches its content (${remedy})`,
    );
  }
  return parsed.data;
}
