// The subprocess env kind's protocol limits: an answer line past MAX_ANSWER_LINE_BYTES and a
// signal that is not a finite number are protocol errors, never buffered or passed on.
import { describe, expect, it } from "vitest";
import { EnvError } from "../../src/contracts/env.js";
import { MAX_ANSWER_LINE_BYTES, subprocessEnv } from "../../src/envs/subprocess.js";
import type { PlanEnv } from "../../src/plan/schema.js";

type SubprocessEnv = Extract<PlanEnv, { kind: "subprocess" }>;

/** An env process running `script` with node; one try per reset. */
function env(script: string): SubprocessEnv {
  return {
    kind: "subprocess",
    description: null,
    version: "1",
    tasks: 1,
    split: { train: 1, valid: 0, test: 0 },
    weight: 1,
    signals: {},
    optimal_steps: null,
    budget_is_task_rule: false,
    reward_range: [0, 1],
    timeout_s: 30,
    retries: 0,
    task: null,
    command: [process.execPath, "-e", script],
  };
}

async function resetFailure(script: string): Promise<EnvError> {
  const instance = await subprocessEnv.create(env(script), 0, 1);
  const error = await instance.reset().then(
    () => undefined,
    (e: unknown) => e,
  );
  await instance.close().catch(() => undefined);
  expect(error).toBeInstanceOf(EnvError);
  return error as EnvError;
}

describe("subprocess env limits", () => {
  it("an answer line longer than the limit is a protocol error and the process is stopped", async () => {
    const script = `const chunk = "x".repeat(1 << 20); const more = () => { while (process.stdout.write(chunk)); process.stdout.once("drain", more); }; more();`;
    const e = await resetFailure(script);
    expect(e.kind).toBe("protocol");
    expect(e.message).toContain(`a line longer than ${MAX_ANSWER_LINE_BYTES} bytes`);
  });

  it("a signal of 1e400 (Infinity once parsed) is a protocol error", async () => {
    const e = await resetFailure(`process.stdin.once("data", () => process.stdout.write('{"observation": "o", "signals": {"progress": 1e400}}\\n')); setInterval(() => undefined, 1000);`);
    expect(e.kind).toBe("protocol");
    expect(e.message).toContain('signal "progress" = Infinity');
  });
});
