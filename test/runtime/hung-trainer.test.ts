// A trainer or env that stops answering, and a run asked to stop: a trainer stopped with SIGSTOP
// is declared dead at its request's deadline with its stderr shown, the run stays resumable and
// resumes; an env that never answers a step ends its episodes as env errors at its timeout_s,
// said in the iteration's line; a run on a huge batch shows progress and stops at once on
// SIGTERM (exit 130), its directory still resumable.
import { execa } from "execa";
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { envKinds } from "../../src/envs/registry.js";
import { executePlan, RunError } from "../../src/runtime/orchestrator.js";
import { RunDirectory } from "../../src/runtime/run-dir.js";
import { trainerDeadlines } from "../../src/trainer/launch.js";
import { compilePlans, countingExperiment, scriptedTrainerScript } from "../helpers/plans.js";

const arl = fileURLToPath(new URL("../../bin/arl.js", import.meta.url));
const spec = (rollout: string) =>
  countingExperiment({ name: "counting", seed: 3, rollout, evaluation: "eval { every: 10, tasks: 2, k: [1] }" });

describe("a hung trainer", () => {
  it("gets deadlines scaled by the training batch, or the --trainer-timeout for every request", () => {
    const [small] = compilePlans(spec("iterations: 2"));
    const [large] = compilePlans(spec("iterations: 2, tasks_per_batch: 1000").replace("tasks_per_batch: 3, ", ""));
    const a = trainerDeadlines(small!);
    const b = trainerDeadlines(large!);
    expect(a("train_step")).toBe((300 + 3 * 4) * 1000);
    expect(b("train_step")).toBe((300 + 1000 * 4) * 1000);
    expect(a("load")).toBe(900_000);
    expect(b("load")).toBe(b("train_step"));
    const fixed = trainerDeadlines(large!, 2.5);
    for (const m of ["handshake", "generate", "train_step", "save"] as const) expect(fixed(m)).toBe(2500);
  });

  it("stopped with SIGSTOP after iteration 1: declared dead at the deadline, the run resumable, and it resumes", async () => {
    const [plan] = compilePlans(spec("iterations: 2"));
    const runDir = RunDirectory.create(mkdtempSync(path.join(tmpdir(), "arl-hung-")), plan!);
    const pidFile = path.join(runDir.dir, "..", "trainer.pid");
    // The trainer writes its pid, so that the test stops this trainer and no other process.
    const trainer = {
      file: "/bin/sh",
      args: ["-c", `echo $$ > '${pidFile}'; exec '${process.execPath}' '${scriptedTrainerScript}'`],
    };
    const begun = Date.now();
    const error = (await executePlan({
      plan: plan!,
      runDir,
      trainer,
      envs: envKinds,
      log: () => undefined,
      trainerTimeoutS: 3,
      progress: (p) => {
        if (p.iteration === 1) process.kill(Number(readFileSync(pidFile, "utf8")), "SIGSTOP");
      },
    }).catch((e: unknown) => e)) as RunError;
    expect(error).toBeInstanceOf(RunError);
    expect(error.message).toMatch(/did not answer '\w+' within 3 s/);
    expect(Date.now() - begun).toBeLessThan(120_000);
    expect(runDir.readState().iteration).toBe(1);
    expect(JSON.parse(readFileSync(runDir.manifestPath, "utf8"))).toMatchObject({
      run_options: { trainer_timeout_s: 3 },
    });

    const resumed = await executePlan({
      plan: plan!,
      runDir,
      trainer: { file: process.execPath, args: [scriptedTrainerScript] },
      envs: envKinds,
      log: () => undefined,
    });
    expect(resumed.iterations).toBe(2);
    expect(runDir.readMetrics().map((m) => m.iteration)).toEqual([1, 2]);
  });
});

describe("a hung env", () => {
  it("ends each episode at the env's timeout_s as an env error; a first batch of nothing else stops the run, saying what the env did not answer", async () => {
    // HANG_ON_STEP is given on the env's command line: its sandbox keeps none of arl's variables.
    const [plan] = compilePlans(
      spec("iterations: 1, tasks_per_batch: 1")
        .replace("tasks_per_batch: 3, ", "")
        .replace("tasks: 30", "tasks: 30\n    timeout_s: 1")
        .replace(
          `command: ["${process.execPath}"`,
          `command: ["/usr/bin/env", "HANG_ON_STEP=1", "${process.execPath}"`,
        ),
    );
    const runDir = RunDirectory.create(mkdtempSync(path.join(tmpdir(), "arl-hung-env-")), plan!);
    const run = executePlan({
      plan: plan!,
      runDir,
      trainer: { file: process.execPath, args: [scriptedTrainerScript] },
      envs: envKinds,
      log: () => undefined,
    });
    // 'reset' only where starting the env process alone took the second (a loaded machine).
    await expect(run).rejects.toThrow(
      /every episode of the first batch \(4\) ended in an env error[^]*env process did not answer '(step|reset)' within 1 s/,
    );
    expect(runDir.readState().failed).toBeTruthy();
  }, 60_000);
});

describe("a run on a huge batch", () => {
  it("shows progress within its first iteration and stops at once on SIGTERM, leaving a resumable directory", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "arl-huge-"));
    writeFileSync(
      path.join(dir, "huge.arl"),
      spec("iterations: 2, tasks_per_batch: 60000").replace("tasks_per_batch: 3, ", ""),
    );
    const child = execa(
      process.execPath,
      [arl, "run", "huge.arl", "--out", "runs", "--trainer-command", `${process.execPath} ${scriptedTrainerScript}`],
      { cwd: dir, reject: false },
    );
    let stdout = "";
    const progressed = new Promise<void>((resolve) => {
      child.stdout.on("data", (chunk: Buffer) => {
        stdout += chunk.toString("utf8");
        if (/rollout \d+ of 240000 episodes played/.test(stdout)) resolve();
      });
    });
    // A run that ends (a refusal, say) before it shows progress fails here, not at the timeout.
    const endedFirst = await Promise.race([progressed.then(() => false), child.then(() => true)]);
    expect(endedFirst, `the run ended before showing progress:\n${stdout}`).toBe(false);
    const signalled = Date.now();
    child.kill("SIGTERM");
    const result = await child;
    // A second or two on an idle machine; the bound leaves room for a loaded one.
    expect(Date.now() - signalled).toBeLessThan(8_000);
    expect(result.exitCode).toBe(130);
    expect(result.stderr).toContain("stopping at once");
    expect(result.stderr).toContain("resume with: arl run --resume");
    expect(result.stderr).not.toContain("internal error");
    const base = path.join(dir, "runs", "counting", "default");
    const runDir = RunDirectory.open(path.join(base, readdirSync(base)[0]!));
    expect(runDir.readState().iteration).toBe(0);
    expect(() => runDir.recover(runDir.readState())).not.toThrow();
  });
});
