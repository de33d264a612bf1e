// `arl submit`, `arl status`, `arl cancel` on a real SLURM cluster: the one-node cluster of
// scripts/slurm-local.sh (which .ci/run starts). A sweep of builtin:tiny variants runs to the end
// with the metrics of `arl run` on this machine; a cancelled job is resubmitted as a resume and
// ends with an uninterrupted run's metrics; a second submit submits nothing. Without a cluster
// the suite is skipped with a hint, except under CI, where it fails.
import { execa } from "execa";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { skipTitle } from "../helpers/skip-reporter.js";
import { runArl } from "../helpers/cli.js";
import { committedIterations, sweepStatus, variantResults, waitForStatus } from "../helpers/cluster-sweep.js";
import { countingExperiment, embeddedTrainerFlag } from "../helpers/plans.js";

// Two seeds of a small model; brevity gives every group differing rewards, so every update moves
// the weights and a resume that lost them would not reproduce the metrics.
const spec = countingExperiment({
  name: "counting",
  seed: 3,
  rollout: "iterations: 5",
  evaluation: "eval { every: 2, tasks: 3, k: [1] }",
  extra: "sweep { seed: [3, 4] }",
})
  .replace(
    'policy { model: "builtin:tiny" }',
    'policy { model: "builtin:tiny?hidden=16&embed=8&key=8", sampling { max_new_tokens: 8 } }',
  )
  .replace(
    "reward { success: outcome.success }",
    "reward {\n    success: outcome.success\n    brevity: -0.01 * episode.tokens\n  }",
  );
const VARIANTS = ["seed=3", "seed=4"];

/** Whether a SLURM controller answers here and its node takes jobs (a missing config makes SLURM retry for a minute: bounded). */
async function clusterAnswers(): Promise<{ up: boolean; why: string }> {
  const sinfo = await execa("sinfo", ["--noheader", "--format=%T"], { reject: false, timeout: 15_000 });
  if ((sinfo.cause as { code?: string } | undefined)?.code === "ENOENT")
    return { up: false, why: "SLURM is not installed (no sinfo on PATH)" };
  if (sinfo.timedOut)
    return { up: false, why: `sinfo did not answer in 15 s (${sinfo.stderr.trim().split("\n")[0] ?? ""})` };
  if (sinfo.exitCode !== 0) return { up: false, why: sinfo.stderr.trim().split("\n").pop() ?? "sinfo failed" };
  const states = sinfo.stdout.trim().split("\n");
  return states.some((s) => /^(idle|mixed|allocated)/.test(s))
    ? { up: true, why: "" }
    : { up: false, why: `no node takes jobs (sinfo: ${states.join(", ")})` };
}

const cluster = await clusterAnswers();
const required = Boolean(process.env.CI);
if (!cluster.up && !required)
  console.warn(
    `test/cluster/slurm.test.ts: skipped: ${cluster.why}; start a local cluster with 'sudo scripts/slurm-local.sh'`,
  );

const env = { ...process.env } as Record<string, string>;

const submissions = (cwd: string) =>
  readFileSync(path.join(cwd, "cluster", "counting", "jobs", "submissions.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map(
      (l) =>
        JSON.parse(l) as {
          job_id: string;
          script: string;
          tasks: { variant: string; run_dir: string; resume: boolean }[];
        },
    );

describe.runIf(cluster.up || required)(
  skipTitle(
    "arl submit on a SLURM cluster",
    !(cluster.up || required),
    "needs a SLURM cluster that takes jobs: sudo scripts/slurm-local.sh starts one on this machine",
  ),
  () => {
    it("has a cluster to submit to (CI starts one with scripts/slurm-local.sh)", () => {
      expect(cluster.up, cluster.why).toBe(true);
    });

    it(
      "runs every variant to the end with the local metrics, resumes a cancelled job, submits nothing twice",
      { timeout: 600_000 },
      async () => {
        const cwd = mkdtempSync(path.join(tmpdir(), "arl-submit-"));
        writeFileSync(path.join(cwd, "spec.arl"), spec);

        const first = await runArl(["submit", "spec.arl", "--out", "cluster"], { cwd, env });
        expect(first.code, first.stderr).toBe(0);
        expect(first.stdout).toMatch(
          /submitted job \d+ \(2 tasks\), script cluster\/counting\/jobs\/slurm-\w+\.sbatch/,
        );
        for (const variant of VARIANTS)
          expect(first.stdout).toContain(`counting/${variant}  starts cluster/counting/${variant}/`);
        const [submitted] = submissions(cwd);
        const script = readFileSync(path.join(cwd, "cluster", "counting", "jobs", submitted!.script), "utf8");
        expect(script).toContain("#SBATCH --array=0-1");
        expect(script).toContain("#SBATCH --cpus-per-task=1");
        for (const task of submitted!.tasks) expect(script).toContain(task.run_dir);

        // Submitted again at once: both jobs wait or run, so nothing is submitted.
        const twice = await runArl(["submit", "spec.arl", "--out", "cluster"], { cwd, env });
        expect(twice.code, twice.stderr).toBe(0);
        expect(twice.stdout).toContain("nothing to submit");
        expect(submissions(cwd)).toHaveLength(1);

        // Waiting or running, each under its own array task; then seed=4 is cancelled mid-run.
        const started = await sweepStatus(cwd, env);
        for (const variant of VARIANTS) {
          expect(["pending", "running", "finished"], variant).toContain(started.get(variant)!.phase);
          expect(started.get(variant)!.job).toMatch(new RegExp(`^${submitted!.job_id}_[01]$`));
        }
        const running = await waitForStatus(
          cwd,
          env,
          "seed=4 to commit an iteration",
          () => committedIterations(path.join(cwd, "cluster"), "seed=4") >= 1,
        );
        expect(running.get("seed=4")!.phase).toBe("running");
        const cancel = await runArl(["cancel", "spec.arl#counting/seed=4", "--runs", "cluster"], { cwd, env });
        expect(cancel.code, cancel.stderr).toBe(0);
        expect(cancel.stdout).toMatch(
          /^cancelled counting\/seed=4: job \d+_1 \(was RUNNING, \d\/5 iterations committed\)\n$/,
        );

        const stopped = await waitForStatus(
          cwd,
          env,
          "seed=4's job to end and seed=3 to finish",
          (s) => s.get("seed=4")!.phase === "cancelled" && s.get("seed=3")!.phase === "finished",
        );
        const cancelled = stopped.get("seed=4")!;
        expect(cancelled.iteration).toBeGreaterThanOrEqual(1);
        expect(cancelled.iteration).toBeLessThan(5);
        expect(cancelled.job_state).toBe("CANCELLED");
        expect(cancelled.submittable).toBe(true);
        expect(cancelled.log_tail.join("\n")).toContain("CANCELLED AT");
        expect(stopped.get("seed=3")!.submittable).toBe(false);

        // Submitted again: only the cancelled variant, resuming its own run directory.
        const again = await runArl(["submit", "spec.arl", "--out", "cluster"], { cwd, env });
        expect(again.code, again.stderr).toBe(0);
        expect(again.stdout).toMatch(/counting\/seed=3: finished \(job \d+_0\); not submitted/);
        expect(again.stdout).toMatch(/submitted job \d+ \(1 task\)/);
        const resubmitted = submissions(cwd)[1]!;
        expect(resubmitted.tasks).toEqual([
          { task: 0, variant: "seed=4", hash: expect.any(String) as string, run_dir: cancelled.run_dir, resume: true },
        ]);

        const finished = await waitForStatus(cwd, env, "every variant to finish", (s) =>
          VARIANTS.every((v) => s.get(v)!.phase === "finished"),
        );
        for (const variant of VARIANTS) expect(finished.get(variant)!.iteration).toBe(5);

        // Nothing left to submit: no new job, no new run directory.
        const third = await runArl(["submit", "spec.arl", "--out", "cluster"], { cwd, env });
        expect(third.code, third.stderr).toBe(0);
        expect(third.stdout).toContain("nothing to submit");
        expect(submissions(cwd)).toHaveLength(2);

        // The same variants on this machine, uninterrupted: the same metrics and evaluations.
        const local = await runArl(["run", "spec.arl", "--out", "local", "--jobs", "2", ...embeddedTrainerFlag], {
          cwd,
          env,
        });
        expect(local.code, local.stderr).toBe(0);
        const onCluster = variantResults(path.join(cwd, "cluster"), VARIANTS);
        expect(onCluster).toEqual(variantResults(path.join(cwd, "local"), VARIANTS));
        expect(onCluster["seed=3"]!.evals).not.toEqual(onCluster["seed=4"]!.evals);

        const report = await runArl(["report", "spec.arl", "--runs", "cluster"], { cwd, env });
        expect(report.code, report.stderr).toBe(0);
        expect(report.stdout).toContain("cluster/counting/report.html");
      },
    );

    it("refuses a machine without sbatch (squeue there) before writing anything", async () => {
      const cwd = mkdtempSync(path.join(tmpdir(), "arl-submit-"));
      writeFileSync(path.join(cwd, "spec.arl"), spec);
      // Every command of the PATH's folders but sbatch, as links in a folder of their own.
      const bin = path.join(cwd, "bin");
      mkdirSync(bin);
      for (const dir of (env.PATH ?? "").split(path.delimiter).filter((d) => existsSync(d))) {
        for (const name of readdirSync(dir))
          if (name !== "sbatch" && !existsSync(path.join(bin, name)))
            symlinkSync(path.join(dir, name), path.join(bin, name));
      }
      const r = await runArl(["submit", "spec.arl", "--out", "cluster"], { cwd, env: { ...env, PATH: bin } });
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/^arl submit: SLURM is not installed here \('sbatch' is not on PATH\); [^\n]*\n$/);
      expect(readdirSync(cwd).sort()).toEqual(["bin", "spec.arl"]);
    });

    it("names a file in the way of --out, writing nothing; --out /proc/x fails at once", async () => {
      const cwd = mkdtempSync(path.join(tmpdir(), "arl-submit-"));
      writeFileSync(path.join(cwd, "spec.arl"), spec);
      writeFileSync(path.join(cwd, "FILE"), "a file\n");
      const r = await runArl(["submit", "spec.arl", "--out", "FILE/runs"], { cwd, env });
      expect(r.code).toBe(2);
      expect(r.stderr).toBe(
        `arl submit: --out FILE/runs: cannot make the folder '${path.join(cwd, "FILE/runs")}': '${path.join(cwd, "FILE")}' is a file, not a folder; give a path below a folder\n`,
      );
      expect(readdirSync(cwd).sort()).toEqual(["FILE", "spec.arl"]);
      const proc = await runArl(["submit", "spec.arl", "--out", "/proc/x"], { cwd, env });
      expect(proc.code).toBe(2);
      expect(proc.stderr).toMatch(/^arl submit: --out \/proc\/x: cannot make the folder '\/proc\/x' \(ENOENT\)/);
    }, 30_000);

    it("names the variants of an array job the scheduler refuses, with its message, and submits nothing", async () => {
      const cwd = mkdtempSync(path.join(tmpdir(), "arl-submit-"));
      writeFileSync(path.join(cwd, "spec.arl"), spec);
      const refused = await runArl(["submit", "spec.arl", "--out", "cluster", "--partition", "no-such-partition"], {
        cwd,
        env,
      });
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain("SLURM refused the array job of counting (seed=3, seed=4;");
      expect(refused.stderr).toMatch(/invalid partition/i);
      expect(refused.stderr).toContain("not submitted: counting/seed=3, counting/seed=4");
      expect(existsSync(path.join(cwd, "cluster", "counting", "jobs", "submissions.jsonl"))).toBe(false);
      const shown = await sweepStatus(cwd, env);
      for (const variant of VARIANTS) expect(shown.get(variant)!.phase).toBe("not submitted");
    });
  },
);

describe("arl submit without a scheduler", () => {
  it("says in one line that SLURM is not installed, and writes nothing", async () => {
    const cwd = mkdtempSync(path.join(tmpdir(), "arl-submit-"));
    writeFileSync(path.join(cwd, "spec.arl"), spec);
    const bin = path.join(cwd, "empty-bin");
    mkdirSync(bin);
    for (const command of [
      ["submit", "spec.arl"],
      ["status", "spec.arl"],
      ["cancel", "spec.arl"],
    ]) {
      const run = await runArl(command, { cwd, env: { PATH: bin } });
      expect(run.code, command[0]).toBe(1);
      expect(run.stderr).toMatch(
        new RegExp(
          `^arl ${command[0]}: SLURM is not installed here \\('(sbatch|squeue)' is not on PATH\\); [^\\n]*\\n$`,
        ),
      );
    }
    expect(readdirSync(cwd).sort()).toEqual(["empty-bin", "spec.arl"]);
  });
});
