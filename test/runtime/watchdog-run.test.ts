// The watchdog through `arl run` on the embedded trainer (builtin:tiny, dist/): a deliberately
// signal-free spec (a constant reward) warns from its Nth iteration with the cause read from its
// episodes; under on_no_signal: stop the run ends there, committed and complete, exit status 4;
// every episode cut at its first turn and env errors above the threshold are warnings with counts.
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { envKinds } from "../../src/envs/registry.js";
import { readBuffer } from "../../src/episode/buffer.js";
import { executePlan } from "../../src/runtime/orchestrator.js";
import { RunDirectory } from "../../src/runtime/run-dir.js";
import { runArl } from "../helpers/cli.js";
import { compilePlans, COUNTER_SIGNALS_AND_TOOLS, counterEnvScript } from "../helpers/plans.js";

const repo = fileURLToPath(new URL("../..", import.meta.url));
const embedded = path.join(repo, "dist", "trainer", "embedded", "main.js");
const trainerFlag = ["--trainer-command", `${process.execPath} ${embedded}`];

interface Spec {
  readonly reward?: string;
  readonly harness?: string;
  readonly command?: readonly string[];
  readonly iterations: number;
  readonly watchdog: string;
}

/** A counter experiment on a small builtin:tiny; the caller picks the reward, harness, env command and watchdog. */
function spec(o: Spec): string {
  const command = o.command ?? [process.execPath, counterEnvScript];
  return `
experiment flat {
  seed: 4
  policy { model: "builtin:tiny?hidden=16&embed=8&key=8", sampling { max_new_tokens: 12 } }
  env counter {
    kind: subprocess
    command: ${JSON.stringify(command)}
    tasks: 30${COUNTER_SIGNALS_AND_TOOLS}
  }
  harness { ${o.harness ?? "max_turns: 2"} }
  reward { ${o.reward ?? "flat: 0.5"} }
  algorithm { group_size: 4 }
  rollout { tasks_per_batch: 2, concurrency: 4, iterations: ${o.iterations}, watchdog { ${o.watchdog} } }
  eval { every: 100, tasks: 2, k: [1] }
}
`;
}

async function run(o: Spec) {
  const cwd = mkdtempSync(path.join(tmpdir(), "arl-watchdog-"));
  writeFileSync(path.join(cwd, "flat.arl"), spec(o));
  const result = await runArl(["run", "flat.arl", "--out", "runs", ...trainerFlag], { cwd });
  const dir = /run directory(?: is complete \([^)]*\))?: (\S+)/.exec(result.stdout)?.[1];
  if (!dir) throw new Error(`no run directory in:\n${result.stdout}\n${result.stderr}`);
  const lines = readFileSync(path.join(dir, "metrics.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map(
      (l) =>
        JSON.parse(l) as {
          iteration: number;
          warnings?: { code: string; message: string }[];
          end_reasons: Record<string, number>;
          varied_group_ratio: number;
        },
    );
  return { ...result, dir, lines, codes: lines.map((l) => (l.warnings ?? []).map((w) => w.code)) };
}

describe("the watchdog in arl run (builtin:tiny)", () => {
  it("warns about a constant reward from the Nth iteration on, with the cause, in the log, metrics.jsonl and the summary", async () => {
    const r = await run({ iterations: 3, watchdog: "no_signal_iterations: 2" });
    expect(r.code).toBe(0);
    expect(r.lines.map((l) => l.varied_group_ratio)).toEqual([0, 0, 0]);
    expect(r.codes).toEqual([[], ["no-signal"], ["no-signal"]]);
    const [second, third] = [r.lines[1]!.warnings![0]!.message, r.lines[2]!.warnings![0]!.message];
    expect(second).toMatch(/^no learning signal for 2 iterations in a row \(groups with differing rewards 0\.000, /);
    expect(third).toMatch(/^no learning signal for 3 iterations in a row/);
    // The random tiny model never makes the counter succeed: the cause says so, and names the constant reward.
    expect(third).toContain(
      "success never fired (0 of 8 episodes) and every episode got the same reward (0.5): the task is too hard",
    );
    expect(r.stdout).toContain(`WARNING [no-signal] iteration 2: ${second}`);
    expect(r.stdout).toContain(`WARNING [no-signal] in iterations 2, 3: ${third}`);
    expect(r.stdout).toContain("finished after 3 iterations");
  });

  it("under on_no_signal: stop ends the run after N committed iterations, complete, with exit status 4 and no resume hint", async () => {
    const r = await run({ iterations: 6, watchdog: "no_signal_iterations: 2, on_no_signal: stop" });
    expect(r.code).toBe(4);
    expect(r.lines.map((l) => l.iteration)).toEqual([1, 2]);
    expect(r.codes).toEqual([[], ["no-signal"]]);
    expect(r.stdout).toMatch(
      /stopped by the watchdog after 2 iterations: no learning signal for 2 iterations in a row .*success never fired/,
    );
    expect(r.stdout).toContain(
      "the run directory is complete (every iteration it ran is committed; nothing to resume)",
    );
    expect(`${r.stdout}${r.stderr}`).not.toContain("resume with");
    // The second iteration is committed: state, checkpoint and buffer say so.
    const state = JSON.parse(readFileSync(path.join(r.dir, "state.json"), "utf8")) as {
      iteration: number;
      checkpoint: string;
    };
    expect(state.iteration).toBe(2);
    expect(existsSync(state.checkpoint)).toBe(true);
    expect(new Set(readBuffer(path.join(r.dir, "buffer.arlbuf")).records.map((x) => x.iteration))).toEqual(
      new Set([1, 2]),
    );
    expect(RunDirectory.open(r.dir).readMetrics()).toHaveLength(2);
  });

  it("reads the streak of a stopped run back from metrics.jsonl when it resumes", async () => {
    const [plan] = compilePlans(spec({ iterations: 2, watchdog: "no_signal_iterations: 2" }));
    const runDir = RunDirectory.create(mkdtempSync(path.join(tmpdir(), "arl-watchdog-resume-")), plan!);
    const stop = new AbortController();
    const trainer = { file: process.execPath, args: [embedded] };
    const logs: string[] = [];
    const first = await executePlan({
      plan: plan!,
      runDir,
      trainer,
      envs: envKinds,
      log: (l) => logs.push(l),
      stop: stop.signal,
      progress: () => stop.abort(),
    });
    expect(first).toMatchObject({ iterations: 1, stopped: true });
    await executePlan({ plan: plan!, runDir, trainer, envs: envKinds, log: (l) => logs.push(l) });
    const lines = runDir.readMetrics() as { warnings?: { code: string; message: string }[] }[];
    expect(lines.map((l) => (l.warnings ?? []).map((w) => w.code))).toEqual([[], ["no-signal"]]);
    expect(lines[1]!.warnings![0]!.message).toMatch(/^no learning signal for 2 iterations in a row/);
    expect(logs.filter((l) => l.startsWith("WARNING [no-signal] iteration 2:"))).toHaveLength(1);
  });

  it("warns, with counts, when every episode is cut at its first turn", async () => {
    // A 1-token response budget cuts every first turn (the end-of-turn token never fits).
    const r = await run({
      iterations: 1,
      reward: "success: outcome.success",
      harness: "max_turns: 2, max_response_tokens: 1",
      watchdog: "no_signal_iterations: 5",
    });
    expect(r.code).toBe(0);
    expect(r.lines[0]!.end_reasons).toMatchObject({ truncated: 8, finished: 0 });
    expect(r.lines[0]!.warnings).toEqual([
      expect.objectContaining({
        code: "truncated-first-turn",
        message: expect.stringMatching(/^every episode \(8\) was truncated at its first turn/),
      }),
    ]);
  });

  it("warns, with counts and the env's own error, when env errors pass the threshold", async () => {
    // Most episodes crash, never a whole batch (a first batch of nothing but env errors fails the run).
    const crashing = ["/usr/bin/env", "CRASH_UNLESS_SEED_MOD=2", process.execPath, counterEnvScript];
    const r = await run({
      iterations: 2,
      command: crashing,
      watchdog: "no_signal_iterations: 5, max_env_error_fraction: 0.25",
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.codes).toEqual([["env-errors"], ["env-errors"]]);
    for (const line of r.lines) {
      const errors = line.end_reasons.env_error!;
      expect(errors).toBeGreaterThan(2);
      expect(errors).toBeLessThan(8);
      expect(line.warnings![0]!.message).toMatch(
        new RegExp(
          `^${errors} of 8 episodes ended in an env error \\(\\d+%, above rollout\\.watchdog\\.max_env_error_fraction 0\\.25\\): .*; the first error: "`,
        ),
      );
    }
  });

  it("fails a run whose first batch is nothing but env errors: exit 1, the error quoted, the state says failed, resumable", async () => {
    const cwd = mkdtempSync(path.join(tmpdir(), "arl-watchdog-"));
    writeFileSync(
      path.join(cwd, "flat.arl"),
      spec({
        iterations: 2,
        command: [process.execPath, "-e", "process.exit(3)"],
        watchdog: "no_signal_iterations: 2",
      }),
    );
    const r = await runArl(["run", "flat.arl", "--out", "runs", ...trainerFlag], { cwd });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      "arl run: every episode of the first batch (8) ended in an env error, so the run stops rather than train on nothing; the error:\n    env process exited",
    );
    const dir = /resume with: arl run --resume (\S+)/.exec(r.stderr)?.[1];
    expect(dir, r.stderr).toBeDefined();
    const state = JSON.parse(readFileSync(path.join(dir!, "state.json"), "utf8")) as {
      iteration: number;
      failed?: string;
    };
    expect(state.iteration).toBe(0);
    expect(state.failed).toMatch(/^every episode of the first batch \(8\) ended in an env error/);
    expect(r.stdout).not.toContain("finished");
  });
});
