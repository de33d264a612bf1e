// The episode sandbox's limits (docs/envs.md#what-an-episode-can-reach), through a real `arl run`:
// one env whose programs loop, fork without bound, fill their disk or memory, or flood stderr or
// stdout, one task each. Every such episode ends as its own env error naming the limit,
// and the run goes on to its end. And `arl check` warns where bubblewrap is not on PATH.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { sandboxSupport } from "../../src/contracts/sandbox.js";
import { processLimitHolds } from "../../src/contracts/sandbox-cgroup.js";
import { runArl } from "../helpers/cli.js";
import { spawnSync } from "node:child_process";
import { embeddedTrainerFlag } from "../helpers/plans.js";

const arl = fileURLToPath(new URL("../../bin/arl.js", import.meta.url));
const sandboxed = "bwrap" in sandboxSupport();

// Each calls the model once (an episode must), then breaks one limit.
const PROGRAM = `import json, os, sys, urllib.request
task = json.loads(sys.stdin.readline())["task"]
req = urllib.request.Request(os.environ["OPENAI_BASE_URL"] + "/chat/completions", data=json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 2}).encode(), headers={"Authorization": "Bearer " + os.environ["OPENAI_API_KEY"], "Content-Type": "application/json"})
urllib.request.urlopen(req).read()
what = task["what"]
if what == "cpu":
    while True: pass
elif what == "fork":
    import time
    while True:
        if os.fork() == 0:
            time.sleep(30); os._exit(0)
elif what == "disk":
    with open("/tmp/big", "wb") as f:
        while True: f.write(b"x" * (1 << 20))
elif what == "memory":
    hoard = []
    while True: hoard.append(bytearray(1 << 24))
elif what == "output":
    while True: sys.stderr.write("y" * 65536)
elif what == "stdout":
    while True: sys.stdout.write("z" * 65536)
print(json.dumps({"signals": {"ok": True}}))
`;

const spec = (sandbox: string) => `import "std/algorithms" as algo
import "std/envs/agent" as agent
experiment limits {
  seed: 4
  policy { model: "builtin:tiny?hidden=24&embed=16&heads=2&key=8", sampling { max_new_tokens: 2 } }
  env hog extends agent.program {
    command: ["python3", "hog.py"]
    task_file: "./data/tasks.jsonl"
    split { train: 0.9, test: 0.1 }
    timeout_s: 60
    sandbox { ${sandbox} }
    signals { ok { scope: outcome, type: bool } }
  }
  harness { max_turns: 2, max_response_tokens: 8 }
  reward { ok: hog.ok }
  algorithm extends algo.rloo { group_size: 2 }
  rollout { tasks_per_batch: 9, iterations: 1, concurrency: 6 }
  eval { split: test, success: hog.ok, every: 100, before_training: false, tasks: 1, k: [1] }
  resources { backend: local }
}
`;
import { skipTitle } from "../helpers/skip-reporter.js";

function workspace(text: string, whats: readonly string[]): string {
  const dir = mkdtempSync(path.join(tmpdir(), "arl-sandbox-limits-"));
  mkdirSync(path.join(dir, "data"));
  writeFileSync(path.join(dir, "hog.py"), PROGRAM);
  writeFileSync(path.join(dir, "data", "tasks.jsonl"), whats.map((what) => `${JSON.stringify({ what })}\n`).join(""));
  writeFileSync(path.join(dir, "spec.arl"), text);
  return dir;
}

/** The first line (the reason) of each failed episode's log, by the task's index in the task file. */
const reasonsOf = (dir: string): { task: number; reason: string }[] => {
  const variants = path.join(dir, "runs", "limits", "default");
  const logs = path.join(variants, readdirSync(variants)[0] ?? "", "agent-logs");
  // <split>-<iteration>-<env>-<task>-<group>-<sample>.log
  return readdirSync(logs).map((f) => ({
    task: Number(f.split("-")[3]),
    reason: readFileSync(path.join(logs, f), "utf8").split("\n")[0] ?? "",
  }));
};
const logsOf = (dir: string): string[] => reasonsOf(dir).map((r) => r.reason);

describe.skipIf(!sandboxed)(
  skipTitle(
    "the sandbox's limits",
    !sandboxed,
    "needs bubblewrap that can make namespaces: apt-get install bubblewrap",
  ),
  () => {
    it("a program that loops, fills its disk or memory or floods its output ends as its episode's env error; the run goes on", async () => {
      // 9 of the 10 tasks train: at least 4 of the 5 hogs and 4 that behave.
      const whats = ["cpu", "disk", "memory", "output", "stdout", "ok", "ok", "ok", "ok", "ok"];
      const dir = workspace(spec("cpu_s: 2, memory_mb: 256, disk_mb: 8, output_bytes: 1000000, processes: 64"), [
        ...whats,
      ]);
      const run = await runArl(["run", "spec.arl", "--out", "runs", ...embeddedTrainerFlag], { cwd: dir });
      expect(run.code, run.stderr).toBe(0);
      const reasons = reasonsOf(dir);
      expect(reasons.length, run.stderr).toBeGreaterThanOrEqual(8);
      for (const { task, reason } of reasons)
        expect(reason).toMatch(
          {
            cpu: /CPU time limit \(cpu_s 2\)/,
            disk: /disk limit \(disk_mb 8/,
            memory: /memory limit \(memory_mb 256/,
            output: /wrote more than sandbox.output_bytes 1000000 bytes/,
            stdout: /wrote more than sandbox.output_bytes 1000000 bytes/,
          }[whats[task] ?? ""] ?? /no reason expected/,
        );
      // A flood of either stream trains (one of the two at least): it is stopped at output_bytes, never "exited with code 120".
      expect(reasons.some(({ task }) => whats[task] === "output" || whats[task] === "stdout")).toBe(true);
    }, 180_000);

    it.skipIf(!processLimitHolds())(
      skipTitle(
        "a program that forks without bound ends at its process limit",
        !processLimitHolds(),
        "needs a user other than root, or root able to make a pids cgroup: the kernel does not apply RLIMIT_NPROC to root",
      ),
      async () => {
        const dir = workspace(spec("processes: 32, cpu_s: 20"), [
          "fork",
          "fork",
          "fork",
          "fork",
          "fork",
          "fork",
          "fork",
          "fork",
          "fork",
          "fork",
        ]);
        await runArl(["run", "spec.arl", "--out", "runs", ...embeddedTrainerFlag], { cwd: dir });
        const reasons = logsOf(dir);
        expect(reasons.length).toBeGreaterThan(0);
        for (const r of reasons) expect(r).toMatch(/process limit \(processes 32\)/);
      },
      180_000,
    );
  },
);

describe("arl check without bubblewrap", () => {
  it("warns sandbox-unavailable where bwrap is not on PATH, at the env", async () => {
    const dir = workspace(spec("mode: auto"), ["cpu", "cpu"]);
    const bin = mkdtempSync(path.join(tmpdir(), "arl-no-bwrap-"));
    // A real process: detection reads the PATH arl was started with.
    const check = (cwd: string) =>
      spawnSync(process.execPath, [arl, "check", "spec.arl"], { cwd, env: { PATH: bin }, encoding: "utf8" });
    const run = check(dir);
    expect(run.stdout + run.stderr).toContain("spec.arl:11:5: warning[sandbox-unavailable]");
    expect(run.stdout + run.stderr).toContain("bubblewrap (bwrap) is not on PATH");
    const quiet = check(workspace(spec("mode: off"), ["cpu", "cpu"]));
    expect(quiet.stdout + quiet.stderr).not.toContain("sandbox-unavailable");
  }, 60_000);
});
