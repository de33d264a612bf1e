// The subprocess env kind's protocol limits: an answer line past MAX_ANSWER_LINE_BYTES and a
// signal that is not a finite number are protocol errors, never buffered or passed on; children
// an env process started out of its group die with it.
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { EnvError } from "../../src/contracts/env.js";
import { MAX_ANSWER_LINE_BYTES, subprocessEnv } from "../../src/envs/adapters/subprocess.js";
import type { PlanEnv } from "../../src/plan/schema.js";
import { killIfRunning, running } from "../helpers/processes.js";

type SubprocessEnv = Extract<PlanEnv, { kind: "subprocess" }>;

const SANDBOX: SubprocessEnv["sandbox"] = {
  mode: "auto",
  network: false,
  cpu_s: 600,
  memory_mb: 8192,
  processes: 512,
  disk_mb: 1024,
  output_bytes: 64 * 1024 * 1024,
};

/** An env process running `script` with node; one try per reset. */
function env(script: string, sandbox: Partial<SubprocessEnv["sandbox"]> = {}): SubprocessEnv {
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
    sandbox: { ...SANDBOX, ...sandbox },
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
    const e = await resetFailure(
      `process.stdin.once("data", () => process.stdout.write('{"observation": "o", "signals": {"progress": 1e400}}\\n')); setInterval(() => undefined, 1000);`,
    );
    expect(e.kind).toBe("protocol");
    expect(e.message).toContain('signal "progress" = Infinity');
  });
});

describe("subprocess env processes", () => {
  it("children that called setsid do not outlive the env process's close", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "arl-subprocess-setsid-"));
    const pidFile = path.join(dir, "children.pids");
    // Five children in sessions of their own (detached is setsid), out of the env's process group.
    const script = `
      const { spawn } = require("node:child_process");
      const kids = Array.from({ length: 5 }, () => spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { detached: true, stdio: "ignore" }));
      kids.forEach((k) => k.unref());
      require("node:fs").writeFileSync(${JSON.stringify(pidFile)}, kids.map((k) => k.pid).join(" "));
      require("node:readline").createInterface({ input: process.stdin }).on("line", (line) => {
        if (JSON.parse(line).op === "close") process.exit(0);
        process.stdout.write('{"observation": "ready", "signals": {}}\\n');
      });`;
    // Unsandboxed: the children are found by their mark (in the sandbox, its pid namespace ends them).
    const instance = await subprocessEnv.create(env(script, { mode: "off" }), 0, 1);
    let pids: number[] = [];
    try {
      expect((await instance.reset()).text).toBe("ready");
      pids = readFileSync(pidFile, "utf8").split(" ").map(Number);
      expect(pids.filter(running)).toHaveLength(5);
      await instance.close();
      await new Promise((r) => setTimeout(r, 100));
      expect(pids.filter(running)).toEqual([]);
    } finally {
      pids.forEach(killIfRunning);
    }
  });
});
