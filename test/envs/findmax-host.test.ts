// The findmax env's host check (EnvKind.hostCheck): where the sandbox has no mount and PID
// namespaces (here switched off with ARL_SANDBOX_WITHOUT, as on a machine without bubblewrap or
// user namespaces), `arl run` refuses a findmax spec before anything starts, saying why and how to
// fix it, unless the env sets require_namespaces: false; then the run goes on, warned at its start.
import { existsSync, mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runArl } from "../helpers/cli.js";
import { embeddedTrainerFlag } from "../helpers/plans.js";

const spec = (envBody: string) => `import "std/algorithms" as algo
import "std/envs/findmax" as findmax
experiment host {
  policy { model: "builtin:tiny?hidden=24&embed=16&heads=2&key=8", sampling { max_new_tokens: 8 } }
  env code extends findmax.task {
    tasks: 10
    ${envBody}
  }
  harness { max_turns: 2, max_response_tokens: 16 }
  reward { success: outcome.tests_passed }
  algorithm extends algo.rloo { group_size: 2 }
  rollout { tasks_per_batch: 1, iterations: 1 }
  eval { every: 1, before_training: false, tasks: 1, k: [1] }
  resources { backend: local }
}
`;

function workspace(envBody: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), "arl-findmax-host-"));
  writeFileSync(path.join(dir, "spec.arl"), spec(envBody));
  return dir;
}

describe("findmax without the namespace layer", () => {
  let saved: string | undefined;
  beforeEach(() => {
    saved = process.env.ARL_SANDBOX_WITHOUT;
    process.env.ARL_SANDBOX_WITHOUT = "namespaces";
  });
  afterEach(() => {
    if (saved === undefined) delete process.env.ARL_SANDBOX_WITHOUT;
    else process.env.ARL_SANDBOX_WITHOUT = saved;
  });

  it("is refused at run start, naming the risk and bubblewrap, before any iteration", async () => {
    const dir = workspace("");
    const run = await runArl(["run", "spec.arl", "--out", "runs", ...embeddedTrainerFlag], { cwd: dir });
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain(
      "env 'code' (findmax): the sandbox for the policy's code has no mount and PID namespaces",
    );
    expect(run.stderr).toContain("install bubblewrap (Debian/Ubuntu: apt install bubblewrap");
    expect(run.stderr).toContain("set require_namespaces: false in the env");
    expect(run.stderr).not.toMatch(/\n\s+at /);
    const runDir = path.join(
      dir,
      "runs",
      "host",
      "default",
      readdirSync(path.join(dir, "runs", "host", "default"))[0]!,
    );
    expect(existsSync(path.join(runDir, "metrics.jsonl"))).toBe(false);
    expect(readdirSync(path.join(runDir, "checkpoints"))).toEqual([]);
  });

  it("runs when the spec allows it (require_namespaces: false), with a warning at its start", async () => {
    const dir = workspace("require_namespaces: false");
    const run = await runArl(["run", "spec.arl", "--out", "runs", ...embeddedTrainerFlag], { cwd: dir });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout + run.stderr).toContain(
      "WARNING: env 'code' (findmax): the sandbox for the policy's code has no mount and PID namespaces",
    );
  }, 120_000);
});
