// `arl run --out DIR` where DIR cannot be made: a file in its way, or a folder that takes no new
// entries (/proc). Each fails at once with the path named, exit 2, and writes nothing (arl submit's
// are in test/cluster/slurm.test.ts: it asks the scheduler first).
import { mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runArl } from "../helpers/cli.js";
import { countingExperiment } from "../helpers/plans.js";

const spec = countingExperiment({
  name: "counting",
  seed: 3,
  rollout: "iterations: 1",
  evaluation: "eval { every: 2, tasks: 3, k: [1] }",
});

function workspace(): string {
  const cwd = mkdtempSync(path.join(tmpdir(), "arl-run-out-"));
  writeFileSync(path.join(cwd, "spec.arl"), spec);
  writeFileSync(path.join(cwd, "FILE"), "a file, not a folder\n");
  return cwd;
}

describe("--out that cannot be made", () => {
  it("arl run --out FILE/runs names the file in the way", async () => {
    const cwd = workspace();
    const r = await runArl(["run", "spec.arl", "--out", "FILE/runs"], { cwd });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      `arl run: --out FILE/runs: cannot make the folder '${path.join(cwd, "FILE/runs")}': '${path.join(cwd, "FILE")}' is a file, not a folder; give a path below a folder\n`,
    );
    expect(readdirSync(cwd).sort()).toEqual(["FILE", "spec.arl"]);
  });

  it.skipIf(process.platform !== "linux")(
    "arl run --out /proc/x fails at once, naming the folder",
    async () => {
      const cwd = workspace();
      const r = await runArl(["run", "spec.arl", "--out", "/proc/x"], { cwd });
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(
        /^arl run: --out \/proc\/x: cannot make the folder '\/proc\/x' \(ENOENT\): \/proc does not take new folders; give a path on a file system arl can write to\n$/,
      );
    },
    20_000,
  );
});
