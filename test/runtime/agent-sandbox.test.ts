// Episode isolation (docs/envs.md#what-an-episode-can-reach), against a real `arl run` of a small
// builtin:tiny experiment whose agent program is hostile (test/fixtures/agent-probe.py): four
// episodes at once, each looking for its neighbours' processes, keys and files and posting
// ok = true to every outcome URL it finds. Without the sandbox it finds them and forges their
// outcomes; in the sandbox it finds nothing and forges nothing. Programs that loop, fork without
// bound, fill the disk or memory, or flood their output end as their episode's env error while
// the run goes on.
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { skipTitle } from "../helpers/skip-reporter.js";
import { sandboxSupport } from "../../src/contracts/sandbox.js";
import { readBuffer } from "../../src/episode/buffer.js";
import { runArl } from "../helpers/cli.js";
import { embeddedTrainerFlag } from "../helpers/plans.js";

const repo = fileURLToPath(new URL("../../", import.meta.url));
const probe = fileURLToPath(new URL("../fixtures/agent-probe.py", import.meta.url));
const sandboxed = "bwrap" in sandboxSupport();

function workspace(sandbox: string, command = '["python3", "probe.py"]', extra = ""): string {
  const dir = mkdtempSync(path.join(tmpdir(), "arl-agent-sandbox-"));
  mkdirSync(path.join(dir, "data"));
  copyFileSync(probe, path.join(dir, "probe.py"));
  const task = JSON.stringify({ home: homedir(), repo, runs: path.join(dir, "runs") });
  writeFileSync(path.join(dir, "data", "tasks.jsonl"), `${task}\n${task}\n${task}\n${task}\n`);
  writeFileSync(
    path.join(dir, "spec.arl"),
    `import "std/algorithms" as algo
import "std/envs/agent" as agent
experiment probe {
  seed: 3
  policy { model: "builtin:tiny?hidden=24&embed=16&heads=2&key=8", sampling { max_new_tokens: 2 } }
  env probe extends agent.program {
    command: ${command}
    task_file: "./data/tasks.jsonl"
    split { train: 0.5, test: 0.5 }
    timeout_s: 60
    sandbox { ${sandbox} }
    signals {
      ok { scope: outcome, type: bool }
      neighbours { scope: outcome, type: count }
      forged { scope: outcome, type: count }
      leaks { scope: outcome, type: count }
      procs { scope: outcome, type: count }
    }
  }
  harness { max_turns: 4, max_response_tokens: 8 }
  reward { ok: probe.ok, neighbours: probe.neighbours, forged: probe.forged, leaks: probe.leaks, procs: probe.procs }
  algorithm extends algo.rloo { group_size: 2 }
  rollout { tasks_per_batch: 2, iterations: 1, concurrency: 4 }
  eval { split: test, success: probe.ok, every: 100, before_training: false, tasks: 1, k: [1] }
  resources { backend: local }
  ${extra}
}
`,
  );
  return dir;
}

function runDirOf(dir: string): string {
  const variants = path.join(dir, "runs", "probe", "default");
  return path.join(variants, readdirSync(variants)[0] ?? "");
}

describe.skipIf(!sandboxed)(
  skipTitle(
    "agent episodes in the sandbox",
    !sandboxed,
    "needs bubblewrap that can make namespaces: apt-get install bubblewrap",
  ),
  () => {
    it("without the sandbox the probe finds its neighbours and forges their outcomes (the attack works)", async () => {
      const dir = workspace("mode: off");
      const run = await runArl(["run", "spec.arl", "--out", "runs", ...embeddedTrainerFlag], { cwd: dir });
      expect(run.code, run.stderr).toBe(0);
      const { records } = readBuffer(path.join(runDirOf(dir), "buffer.arlbuf"));
      expect(records.length).toBe(4);
      expect(records.some((r) => r.rewards.ok === 1)).toBe(true);
      expect(
        records
          .filter((r) => r.rewards.ok === 0)
          .every((r) => (r.rewards.neighbours ?? 0) > 0 && (r.rewards.leaks ?? 0) > 0),
      ).toBe(true);
    }, 120_000);

    it("in the sandbox the probe finds no other episode's process, key or file and forges no outcome", async () => {
      const dir = workspace("mode: required");
      const run = await runArl(["run", "spec.arl", "--out", "runs", ...embeddedTrainerFlag], { cwd: dir });
      expect(run.code, run.stderr).toBe(0);
      const { records } = readBuffer(path.join(runDirOf(dir), "buffer.arlbuf"));
      expect(records.length).toBe(4);
      for (const r of records) {
        expect(r.rewards, `episode ${r.group}/${r.sample}`).toMatchObject({
          ok: 0,
          neighbours: 0,
          forged: 0,
          leaks: 0,
        });
        // Its own sandbox only: bubblewrap's init, the gateway forwarder, the program.
        expect(r.rewards.procs).toBeLessThanOrEqual(3);
        expect(r.rewards.procs).toBeGreaterThan(0);
      }
    }, 120_000);
  },
);
