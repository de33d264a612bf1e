// Ctrl-C in a real terminal. `arl run` runs under util-linux `script` (a pseudo-terminal whose
// foreground process group is the run's), and the test sends SIGINT to that whole group, as a
// terminal's Ctrl-C does (kill -INT -PGID). The trainer and env processes lead groups of their
// own, so the runtime alone gets it: it commits the iteration in progress, shuts the trainer down
// (which exits with status 0, said in the run's log), prints the resume command, and the resumed
// run ends with the metrics of one that never stopped. A second Ctrl-C stops at once (exit 130),
// and that directory resumes to the same metrics too. A refusal (a model the trainer cannot
// configure) is never told to resume.
import { execa } from "execa";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { envKinds } from "../../src/envs/registry.js";
import { executePlan } from "../../src/runtime/orchestrator.js";
import { RunDirectory } from "../../src/runtime/run-dir.js";
import { planHash } from "../../src/plan/hash.js";
import { compilePlans, countingExperiment, scriptedTrainerScript, embeddedTrainerFlag } from "../helpers/plans.js";

const arl = fileURLToPath(new URL("../../bin/arl.js", import.meta.url));
const trainerCommand = `${process.execPath} ${scriptedTrainerScript}`;
// One task per batch (4 episodes, each its own env process) and one evaluated task: a cheap run.
const spec = countingExperiment({
  name: "interrupted",
  seed: 11,
  rollout: "tasks_per_batch: 1, iterations: 4",
  evaluation: "eval { every: 10, tasks: 1, k: [1] }",
}).replace("tasks_per_batch: 3, ", "");
const withoutTimes = (lines: Record<string, unknown>[]) => lines.map(({ time: _time, ...rest }) => rest);
const quote = (s: string) => `'${s.replace(/'/g, "'\\''")}'`;

/** Polls `condition` every 25 ms until it holds (or the run ended first: false). */
async function until(condition: () => boolean, ended: () => boolean): Promise<boolean> {
  for (const deadline = Date.now() + 120_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 25))) {
    if (condition()) return true;
    if (ended()) return false;
  }
  return false;
}

/**
 * `arl run ARGS` in a pseudo-terminal, in `dir`: once `ready` holds, `interrupt` is called with a
 * function that sends SIGINT to the terminal's foreground process group.
 */
async function runInTerminal(
  dir: string,
  args: string,
  ready: (output: string) => boolean,
  interrupt: (sigint: () => void, output: () => string) => Promise<void>,
) {
  const pidFile = path.join(dir, "pgid");
  // The shell `script` starts leads the terminal's session and foreground group; exec keeps its pid for arl.
  const command = `echo $$ > ${quote(pidFile)}; exec ${quote(process.execPath)} ${quote(arl)} run ${args} --trainer-command ${quote(trainerCommand)}`;
  // Each train step takes 150 ms, so that the run is still training when the signal comes.
  const child = execa("script", ["-qfec", command, "/dev/null"], {
    cwd: dir,
    reject: false,
    env: { DOUBLE_TRAIN_MS: "150" },
  });
  let output = "";
  child.stdout.on("data", (c: Buffer) => (output += c.toString("utf8")));
  let ended = false;
  void child.finally(() => (ended = true));
  expect(
    await until(
      () => ready(output),
      () => ended,
    ),
    `the run ended before it was interrupted:\n${output}`,
  ).toBe(true);
  const pgid = Number(readFileSync(pidFile, "utf8"));
  await interrupt(
    () => process.kill(-pgid, "SIGINT"),
    () => output,
  );
  const result = await child;
  return { exitCode: result.exitCode, output: output.replace(/\r/g, "") };
}

describe("Ctrl-C in a terminal", () => {
  it("reaches the runtime alone: it commits, shuts the trainer down cleanly and says how to resume; twice, it stops at once; the run resumes to an uninterrupted one's metrics", async () => {
    const [plan] = compilePlans(spec);
    const reference = RunDirectory.create(mkdtempSync(path.join(tmpdir(), "arl-int-ref-")), plan!);
    await executePlan({
      plan: plan!,
      runDir: reference,
      trainer: { file: process.execPath, args: [scriptedTrainerScript] },
      envs: envKinds,
      log: () => undefined,
    });
    const expected = withoutTimes(reference.readMetrics());

    const dir = mkdtempSync(path.join(tmpdir(), "arl-int-"));
    writeFileSync(path.join(dir, "spec.arl"), spec);
    const first = await runInTerminal(
      dir,
      "spec.arl --out runs",
      (out) => /iteration 1\/4:/.test(out),
      async (sigint) => sigint(),
    );
    expect(first.exitCode, first.output).toBe(0);
    expect(first.output).toContain("stopping after the current iteration is committed");
    // The trainer never saw the signal: it answered shutdown and exited with status 0, and is gone.
    const trainerPid = Number(/trainer \(pid (\d+)\) shut down: it exited with status 0/.exec(first.output)?.[1]);
    expect(trainerPid, first.output).toBeGreaterThan(0);
    expect(() => process.kill(trainerPid, 0)).toThrow();
    const stoppedAt = Number(/stopped after ([1-3]) iterations/.exec(first.output)?.[1]);
    expect(stoppedAt, first.output).toBeGreaterThan(0);
    const runDir = /resume with: arl run --resume (\S+)/.exec(first.output)?.[1];
    expect(runDir, first.output).toMatch(/^runs\/interrupted\/default\/[0-9a-f]{12}-/);

    // The resumed run, interrupted twice as soon as it trains: it stops at once.
    const second = await runInTerminal(
      dir,
      `--resume ${runDir!}`,
      (out) => out.includes(`resumed after iteration ${stoppedAt}`),
      async (sigint, output) => {
        sigint();
        await until(
          () => output().includes("stopping after the current iteration"),
          () => false,
        );
        sigint();
      },
    );
    expect(second.exitCode, second.output).toBe(130);
    expect(second.output).toContain("stopping at once");
    expect(second.output).toContain("resume with: arl run --resume");
    expect(second.output).not.toContain("internal error");

    const resumed = await execa(
      process.execPath,
      [arl, "run", "--resume", runDir!, "--trainer-command", trainerCommand],
      { cwd: dir, reject: false },
    );
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    expect(withoutTimes(RunDirectory.open(path.join(dir, runDir!)).readMetrics())).toEqual(expected);
  }, 180_000);

  it("a refusal that a resume would meet again (the trainer cannot configure the model) prints no resume command", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "arl-int-refused-"));
    // A plan file skips the linter, which would have refused LoRA on builtin:tiny at compile time.
    const [plan] = compilePlans(spec);
    const lora = {
      ...plan!,
      policy: { ...plan!.policy, lora: { rank: 4, alpha: 8, dropout: 0, targets: ["q_proj"] } },
    };
    writeFileSync(path.join(dir, "plan.json"), JSON.stringify({ ...lora, hash: planHash(lora) }));
    const result = await execa(process.execPath, [arl, "run", "plan.json", "--out", "runs", ...embeddedTrainerFlag], {
      cwd: dir,
      reject: false,
    });
    expect(result.stderr).toContain("the trainer refused the plan's configuration");
    expect(result.stderr).toContain("policy.lora");
    expect(result.stderr).toContain("not resumable");
    expect(`${result.stdout}${result.stderr}`).not.toContain("resume with");
    expect(result.exitCode).toBe(1);
  }, 60_000);
});
