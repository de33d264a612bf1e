// What the sql env's tests (test/envs/sql.test.ts, sql-data.test.ts) share: the shipped shaping
// example's bank env (useBankEnv), instances started and closed around a test, and tool calls.
import { readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeAll } from "vitest";
import { sqlEnv, type SqlEnv } from "../../src/envs/worlds/sql/index.js";
import { type EnvInstance } from "../../src/contracts/env.js";
import type { Plan } from "../../src/plan/schema.js";
import { type ToolCall } from "../../src/contracts/tool-calls.js";
import { compilePlans } from "./plans.js";
import { examplesDir } from "../plan/support.js";

/** The shipped shaping example's plan and its bank env (useBankEnv), read through these live bindings. */
export let plan: Plan;
export let bank: SqlEnv;

/** Instances the file's tests started, closed after each test. */
export const open: EnvInstance[] = [];

/** Compiles the shaping example before the file's tests; closes the instances started after each. */
export function useBankEnv(): void {
  beforeAll(() => {
    [plan] = compilePlans(readFileSync(path.join(examplesDir, "shaping.arl"), "utf8")) as [Plan];
    bank = plan.envs.bank as SqlEnv;
  });

  afterEach(async () => {
    await Promise.all(open.splice(0).map((e) => e.close()));
  });
}

/** An instance of `env`'s task, reset, and closed after the test. */
export async function start(env: SqlEnv, task = 0, kind = sqlEnv): Promise<EnvInstance> {
  const instance = await kind.create(env, task, 0);
  open.push(instance);
  await instance.reset();
  return instance;
}

export const call = (name: string, args: Record<string, unknown> = {}): ToolCall => ({ name, arguments: args });
