// Isolation of `kind: subprocess` envs (docs/envs.md#what-an-episode-can-reach), through a real
// `arl run` (bin/arl.js, started in the spec's folder as a user would) of a small builtin:tiny
// experiment whose env process is hostile (test/fixtures/subprocess-probe.py): four episodes at
// once, each looking for its neighbours' processes, marks and keys, and for the repository, the
// home, the run's folder and other episodes' files. Without the sandbox it finds them; in the
// sandbox it finds nothing but its own process.
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { sandboxSupport } from "../../src/contracts/sandbox.js";
import { readBuffer } from "../../src/episode/buffer.js";
import { skipTitle } from "../helpers/skip-reporter.js";
import { embeddedTrainerFlag } from "../helpers/plans.js";

const repo = fileURLToPath(new URL("../../", import.meta.url));
const arl = fileURLToPath(new URL("../../bin/arl.js", import.meta.url));
const probe = fileURLToPath(new URL("../fixtures/subprocess-probe.py", import.meta.url));
const sandboxed = "bwrap" in sandboxSupport();

function workspace(sandbox: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), "arl-subprocess-sandbox-"));
  copyFileSync(probe, path.join(dir, "probe.py"));
  writeFileSync(
    path.join(dir, "targets.json"),
    JSON.stringify({ home: homedir(), repo, runs: path.join(dir, "runs") }),
  );
  writeFileSync(
    path.join(dir, "spec.arl"),
    `import "std/algorithms" as algo
experiment probe {
  seed: 3
  policy { model: "builtin:tiny?hidden=24&embed=16&heads=2&key=8", sampling { max_new_tokens: 2 } }
  env probe {
    kind: subprocess
    command: ["python3", "probe.py"]
    tasks: 4
    split { train: 0.5, test: 0.5 }
    timeout_s: 60
    sandbox { ${sandbox} }
    signals {
      ok { scope: outcome, type: bool }
      neighbours { scope: outcome, type: count }
      leaks { scope: outcome, type: count }
      procs { scope: outcome, type: count }
    }
    tool finish { description: "end the episode" }
  }
  harness { max_turns: 1, max_response_tokens: 4 }
  reward { ok: probe.ok, neighbours: probe.neighbours, leaks: probe.leaks, procs: probe.procs }
  algorithm extends algo.rloo { group_size: 2 }
  rollout { tasks_per_batch: 2, iterations: 1, concurrency: 4 }
  eval { split: test, success: probe.ok, every: 100, before_training: false, tasks: 1, k: [1] }
  resources { backend: local }
}
`,
  );
  return dir;
}

/** Runs the experiment with the CLI from the spec's folder; the buffer's records. */
function run(dir: string) {
  const cli = spawnSync(process.execPath, [arl, "run", "spec.arl", "--out", "runs", ...embeddedTrainerFlag], {
    cwd: dir,
    encoding: "utf8",
    timeout: 180_000,
  });
  expect(cli.status, cli.stderr).toBe(0);
  const variants = path.join(dir, "runs", "probe", "default");
  const runDir = path.join(variants, readdirSync(variants)[0] ?? "");
  return readBuffer(path.join(runDir, "buffer.arlbuf")).records;
}

describe.skipIf(!sandboxed)(
  skipTitle(
    "subprocess envs in the sandbox",
    !sandboxed,
    "needs bubblewrap that can make namespaces: apt-get install bubblewrap",
  ),
  () => {
    it("without the sandbox the probe sees its neighbours and the run's files (the attack works)", () => {
      const records = run(workspace("mode: off"));
      expect(records.length).toBe(4);
      for (const r of records) {
        expect(r.rewards.neighbours ?? 0).toBeGreaterThan(0);
        expect(r.rewards.leaks ?? 0).toBeGreaterThan(0);
      }
    }, 200_000);

    it("in the sandbox it finds no other process, mark, key or file of the run, the repository or the home", () => {
      const records = run(workspace("mode: required"));
      expect(records.length).toBe(4);
      for (const r of records) {
        expect(r.rewards, `episode ${r.group}/${r.sample}`).toMatchObject({ ok: 0, neighbours: 0, leaks: 0 });
        // Its own sandbox only: bubblewrap's init and the env process.
        expect(r.rewards.procs).toBeLessThanOrEqual(2);
        expect(r.rewards.procs).toBeGreaterThan(0);
      }
    }, 200_000);
  },
);
