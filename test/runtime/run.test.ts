// End to end: a plan through the protocol (scripted trainer double, subprocess env), the run
// directory it writes, and a run killed with SIGKILL then resumed, which must end with the
// same metrics as one that never stopped.
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { readBuffer } from "../../src/episode/buffer.js";
import { envKinds } from "../../src/envs/registry.js";
import { executePlan, RunError } from "../../src/runtime/orchestrator.js";
import { RunDirectory } from "../../src/runtime/run-dir.js";
import { killThenResume } from "../helpers/kill-resume.js";
import { compilePlans, countingExperiment, scriptedTrainerScript } from "../helpers/plans.js";

const trainerScript = scriptedTrainerScript;
const trainer = { file: process.execPath, args: [trainerScript] };

const spec = (iterations: number) =>
  countingExperiment({
    name: "counting",
    seed: 3,
    rollout: `iterations: ${iterations}`,
    evaluation: "eval { every: 2, tasks: 4, k: [1, 2] }",
  });

function withoutTimes(lines: Record<string, unknown>[]): unknown[] {
  return lines.map(({ time: _time, ...rest }) => rest);
}

function writeSpec(iterations: number): { dir: string; file: string } {
  const dir = mkdtempSync(path.join(tmpdir(), "arl-run-"));
  const file = path.join(dir, "counting.arl");
  writeFileSync(file, spec(iterations));
  return { dir, file };
}

describe("arl run", () => {
  it("executes a plan through the trainer protocol and writes the run directory", async () => {
    const [plan] = compilePlans(spec(4));
    const out = mkdtempSync(path.join(tmpdir(), "arl-runs-"));
    const runDir = RunDirectory.create(out, plan!);
    const logs: string[] = [];
    const summary = await executePlan({ plan: plan!, runDir, trainer, envs: envKinds, log: (l) => logs.push(l) });
    expect(summary.iterations).toBe(4);
    expect(path.relative(out, runDir.dir)).toMatch(/^counting\/default\/[0-9a-f]{12}-\d{8}T\d{6}Z$/);
    for (const f of ["plan.json", "manifest.json", "metrics.jsonl", "buffer.arlbuf", "state.json"])
      expect(existsSync(path.join(runDir.dir, f)), f).toBe(true);
    const metrics = runDir.readMetrics();
    expect(metrics.map((m) => m.iteration)).toEqual([1, 2, 3, 4]);
    for (const m of metrics) {
      expect(m).toMatchObject({ env_errors: 0, lag_drops: 0 });
      for (const key of [
        "success",
        "reward",
        "reward_terms",
        "effective_group_ratio",
        "acceptance_rate",
        "generated_length",
        "entropy",
        "clip_fraction",
        "kl",
        "grad_norm",
        "tokens",
        "tool_calls",
        "time",
      ])
        expect(m, key).toHaveProperty(key);
    }
    expect(metrics[1]).toHaveProperty("eval");
    // The starting policy's evaluation rides with iteration 1, equal to what its eval file says.
    const start = readFileSync(path.join(runDir.dir, "eval", "iteration-00000.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, number>);
    const startPass = start.reduce((s, r) => s + r["pass@1"]!, 0) / start.length;
    expect((metrics[0]!.eval_before_training as Record<string, number>)["pass@1"]).toBeCloseTo(startPass, 12);
    expect(metrics.slice(1).some((m) => "eval_before_training" in m)).toBe(false);
    expect(readdirSync(path.join(runDir.dir, "eval")).sort()).toEqual([
      "iteration-00000.jsonl",
      "iteration-00002.jsonl",
      "iteration-00004.jsonl",
    ]);
    const manifest = JSON.parse(readFileSync(runDir.manifestPath, "utf8"));
    expect(manifest).toMatchObject({ plan_hash: plan!.hash, trainer: { name: "scripted-double" }, seed: 3 });
    // The buffer holds every trajectory with its rewards and end reason.
    const { records } = readBuffer(runDir.bufferPath);
    expect(records.length).toBe(4 * 3 * 4);
    expect(records.every((r) => r.end === "finished" || r.end === "truncated")).toBe(true);
    expect(records[0]!.rewards).toHaveProperty("success");
    // The scripted policy learns to call `step`: success rises.
    expect(metrics[3]!.success as number).toBeGreaterThan(metrics[0]!.success as number);
  });

  it("reports a dead trainer with the last lines of its stderr, keeping what was committed", async () => {
    const [plan] = compilePlans(spec(2));
    const runDir = RunDirectory.create(mkdtempSync(path.join(tmpdir(), "arl-runs-")), plan!);
    const dying = {
      file: process.execPath,
      args: ["-e", "process.stderr.write('CUDA out of memory (simulated)\\n'); process.exit(7)"],
    };
    const error = (await executePlan({
      plan: plan!,
      runDir,
      trainer: dying,
      envs: envKinds,
      log: () => undefined,
    }).catch((e: unknown) => e)) as RunError;
    expect(error).toBeInstanceOf(RunError);
    expect(error.message).toContain("could not start the trainer");
    expect(error.stderrTail).toContain("CUDA out of memory (simulated)");
    expect(existsSync(path.join(runDir.dir, "plan.json"))).toBe(true);
  });

  it("after kill -9 mid-run, --resume ends with metrics identical to an uninterrupted run", async () => {
    const iterations = 6;
    // The uninterrupted reference.
    const [plan] = compilePlans(spec(iterations));
    const reference = RunDirectory.create(mkdtempSync(path.join(tmpdir(), "arl-runs-")), plan!);
    await executePlan({ plan: plan!, runDir: reference, trainer, envs: envKinds, log: () => undefined });

    // The same spec through the CLI in a child process, killed with SIGKILL after iteration 3.
    const { dir, file } = writeSpec(iterations);
    const { runDir, killedAt, resumed } = await killThenResume(
      file,
      path.join(dir, "runs"),
      "counting",
      `${process.execPath} ${trainerScript}`,
      3,
    );
    expect(killedAt).toBeGreaterThanOrEqual(3);
    expect(killedAt).toBeLessThan(iterations);
    expect(resumed.stderr).toBe("");
    expect(resumed.exitCode).toBe(0);
    expect(resumed.stdout).toContain(`resumed after iteration ${killedAt}`);
    const after = RunDirectory.open(runDir);
    expect(withoutTimes(after.readMetrics())).toEqual(withoutTimes(reference.readMetrics()));
    expect(readBuffer(after.bufferPath).records.length).toBe(readBuffer(reference.bufferPath).records.length);
    expect(readBuffer(after.bufferPath).partialBytes).toBe(0);
  });
});
