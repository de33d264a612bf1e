// `arl diff A B`: the fields two plans disagree on. A and B are plan files or spec variants.
import { readFileSync } from "node:fs";
import path from "node:path";
import { diffPlans, formatChange } from "../../plan/diff.js";
import type { LoweredPlan } from "../../plan/lower.js";
import { planSchema, type Plan } from "../../plan/schema.js";
import { defineCommand } from "../command.js";
import { ExitCode, UsageError, type CliIO } from "../io.js";
import { compileAndLower } from "./plan.js";
import { at } from "../../contracts/checked.js";

const usage = `Usage: arl diff A B

Compares two plans field by field. A and B are each a plan file (as written by 'arl plan') or
a variant of a spec: spec.arl#experiment/variant. The fragment may be shortened to
spec.arl#experiment when the experiment has one variant, and left out when the spec has one
experiment with one variant.
Prints one line per differing field, 'path: old -> new', with dotted paths (array items by
index) and values as compact JSON ('(absent)' for a missing field). 'hash' and 'provenance'
are not compared.
Exit status: 0 equal, 1 different, 2 usage error, unreadable input, or a spec with errors.`;

export const diffCommand = defineCommand({
  name: "diff",
  summary: "compare two plans (files or spec.arl#experiment/variant)",
  usage,
  options: {},
  async run(parsed, io) {
    if (parsed.positionals.length !== 2) throw new UsageError("give two plans to compare");
    const [left, right] = parsed.positionals as [string, string];
    const a = load(left, io);
    if (typeof a === "number") return a;
    const b = load(right, io);
    if (typeof b === "number") return b;
    const changes = diffPlans(a, b);
    for (const c of changes) io.stdout(`${formatChange(c)}\n`);
    return changes.length === 0 ? ExitCode.ok : ExitCode.errors;
  },
});

function load(operand: string, io: CliIO): Plan | number {
  const hash = operand.indexOf("#");
  const file = hash >= 0 ? operand.slice(0, hash) : operand;
  if (hash >= 0 || file.endsWith(".arl"))
    return fromSpec(file, hash >= 0 ? operand.slice(hash + 1) : undefined, operand, io);
  let text: string;
  try {
    text = readFileSync(path.resolve(io.cwd, file), "utf8");
  } catch {
    io.stderr(`arl diff: cannot read '${operand}'\n`);
    return ExitCode.usage;
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    io.stderr(`arl diff: '${operand}' is not JSON: ${(error as Error).message}\n`);
    return ExitCode.usage;
  }
  const plan = planSchema.safeParse(json);
  if (!plan.success) {
    const issue = plan.error.issues[0];
    io.stderr(`arl diff: '${operand}' is not a plan (${issue?.path.join(".") || "top level"}: ${issue?.message})\n`);
    return ExitCode.usage;
  }
  return plan.data;
}

function fromSpec(file: string, fragment: string | undefined, operand: string, io: CliIO): Plan | number {
  const compiled = compileAndLower(file, io, "diff", io.stderr, { onlyErrors: true });
  if (typeof compiled === "number") return ExitCode.usage;
  const { plans } = compiled;
  const slash = fragment?.indexOf("/") ?? -1;
  const experiment =
    fragment === undefined || fragment === "" ? undefined : slash >= 0 ? fragment.slice(0, slash) : fragment;
  const variant = fragment !== undefined && slash >= 0 ? fragment.slice(slash + 1) : undefined;
  const candidates = plans.filter(
    (p) =>
      (experiment === undefined || p.experiment === experiment) && (variant === undefined || p.variant === variant),
  );
  if (candidates.length === 1) return at(candidates, 0).plan;
  const names = (ps: readonly LoweredPlan[]) => ps.map((p) => `${file}#${p.experiment}/${p.variant}`).join(", ");
  if (candidates.length === 0)
    io.stderr(`arl diff: '${operand}' names no variant; the spec has: ${names(plans) || "no experiments"}\n`);
  else io.stderr(`arl diff: '${operand}' is ambiguous; name one of: ${names(candidates)}\n`);
  return ExitCode.usage;
}
