// What the refusal tables (test/plan/refusals.test.ts, refusals-rollout.test.ts) share: specs
// around findmax and subprocess envs, plans with a fault, the checker's errors, the runtime's
// refusal, and the check of one row: check reports the code on the field's line, and the runtime
// refuses the row's plan file saying what the row says.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect } from "vitest";
import { Compiler } from "../../src/compiler.js";
import { envKinds } from "../../src/envs/registry.js";
import { planHash } from "../../src/plan/hash.js";
import { type Plan } from "../../src/plan/schema.js";
import { executePlan, RunError } from "../../src/runtime/orchestrator.js";
import { RunDirectory } from "../../src/runtime/run-dir.js";
import { scriptedTrainerScript } from "./plans.js";
import { lower, workspace } from "../plan/support.js";

/** A findmax experiment that checks clean; `body` goes inside it, `env` replaces its env. */
export function spec(body: string, env = "env code extends findmax.task {}"): string {
  return `import "std/algorithms" as algo
import "std/envs/findmax" as findmax
experiment e {
  policy { model: "builtin:tiny" }
  ${env}
  reward { success: outcome.tests_passed }
  algorithm extends algo.rloo {}
${body}
}
`;
}

/** A spec around a subprocess env (no walkthroughs), rewarded by its own success signal. */
export const subprocessSpec = (body: string, signals = "    signals { success { scope: outcome, type: bool } }\n") =>
  spec(body, `env w {\n    kind: subprocess\n    command: ["./env"]\n${signals}  }`).replace(
    "outcome.tests_passed",
    "episode.terminated",
  );

/** The one plan of a clean spec, changed by `edit` and hashed again: a plan file with the fault. */
export function faultyPlan(clean: string, edit: (plan: Plan) => void, files: Record<string, string> = {}): Plan {
  const [lowered] = lower(path.join(workspace({ ...files, "spec.arl": clean }), "spec.arl"));
  const plan = JSON.parse(JSON.stringify(lowered!.plan)) as Plan;
  edit(plan);
  return { ...plan, hash: planHash(plan) };
}

export function checkErrors(text: string, files: Record<string, string> = {}): { code: string; line: number }[] {
  const dir = workspace({ ...files, "spec.arl": text });
  return new Compiler()
    .check(path.join(dir, "spec.arl"))
    .diagnostics.filter((d) => d.severity === "error")
    .map((d) => ({ code: d.code, line: d.range.start.line }));
}

/** The line (1-based) of the first line of `text` containing `marker`. */
export function lineOf(text: string, marker: string): number {
  const i = text.split("\n").findIndex((l) => l.includes(marker));
  if (i < 0) throw new Error(`no line with ${marker}`);
  return i + 1;
}

export async function runtimeRefusal(plan: Plan): Promise<string> {
  const runDir = RunDirectory.create(mkdtempSync(path.join(tmpdir(), "arl-refusal-")), plan);
  const error = await executePlan({
    plan,
    runDir,
    trainer: { file: process.execPath, args: [scriptedTrainerScript] },
    envs: envKinds,
    log: () => undefined,
  }).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(RunError);
  return (error as RunError).message;
}

export interface Row {
  readonly refusal: string;
  /** A spec with the fault, and the text of the line check must report it on. */
  readonly spec: string;
  readonly at: string;
  readonly code: string;
  /** The same fault in a plan file, and what the runtime's refusal must say. */
  readonly plan?: () => Plan;
  readonly runtimeSays?: readonly string[];
  /** Data files beside the spec. */
  readonly files?: Record<string, string>;
}

export const cleanSmall = spec("  eval { split: test }");

/** One row of a table: check reports it on the field's line, and the runtime refuses its plan file. */
export async function expectRefusedTwice(row: Row): Promise<void> {
  // Every error is the row's, on the field's line (a fault may show in several fields there).
  const errors = checkErrors(row.spec, row.files);
  expect(errors.length).toBeGreaterThan(0);
  expect(errors).toEqual(errors.map(() => ({ code: row.code, line: lineOf(row.spec, row.at) })));
  if (row.plan) {
    const message = await runtimeRefusal(row.plan());
    for (const part of row.runtimeSays ?? []) expect(message).toContain(part);
  }
}
