// `arl submit --scheduler ray`, `arl status`, `arl cancel` on a real Ray cluster: a one-node head
// started here from .venv-ray (npm run setup:ray), its dashboard on loopback, its files in a temp
// dir of its own, 2 CPUs; ended (its process group) after the suite. A sweep of builtin:tiny
// variants runs to the end with the metrics of `arl run` on this machine; a stopped job is
// resubmitted as a resume; a second submit submits nothing. Without .venv-ray the cluster's tests
// are skipped with a hint, except under CI, where they fail.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jobResources, rayAddress, rayPhase } from "../../src/cluster/ray.js";
import { resolveRendezvous } from "../../src/trainer/rendezvous.js";
import { skipTitle } from "../helpers/skip-reporter.js";
import { runArl } from "../helpers/cli.js";
import { committedIterations, sweepStatus, variantResults, waitForStatus } from "../helpers/cluster-sweep.js";
import { countingExperiment } from "../helpers/plans.js";

// Two seeds of a small model, 3 iterations (room to stop one after its first); brevity gives every
// group differing rewards, so a resume that lost the weights would not reproduce the metrics.
const ITERATIONS = 3;
const spec = countingExperiment({
  name: "counting",
  seed: 3,
  rollout: `iterations: ${ITERATIONS}`,
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

const root = fileURLToPath(new URL("../..", import.meta.url));
const ray = path.join(root, ".venv-ray", "bin", "ray");
const installed = existsSync(ray);
const required = Boolean(process.env.CI);
const NEED = "needs .venv-ray: npm run setup:ray";

/** The built embedded trainer, as the job's `arl run` (bin/arl.js, dist/) starts it for backend local. */
const embedded = [
  "--trainer-command",
  `${process.execPath} ${path.join(root, "dist", "trainer", "embedded", "main.js")}`,
];

const env = { ...process.env } as Record<string, string>;
delete env.RAY_ADDRESS;

/** A port free on loopback now. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** A one-node Ray head: dashboard on 127.0.0.1, 2 CPUs, no GPU, its own temp dir and ports; `ray start --block` in a process group of its own. */
class RayHead {
  private constructor(
    readonly address: string,
    readonly dir: string,
    private readonly child: ChildProcess,
  ) {}

  static async start(): Promise<RayHead> {
    // Short: Ray's socket paths live under it and must stay under 108 bytes.
    const dir = mkdtempSync(path.join("/tmp", "arlray-"));
    const [dashboard, client, agent, autoscalerMetrics, dashboardMetrics] = await Promise.all([
      freePort(),
      freePort(),
      freePort(),
      freePort(),
      freePort(),
    ]);
    const log = openSync(path.join(dir, "ray-start.log"), "a");
    const args = [
      "start",
      "--head",
      "--block",
      "--node-ip-address",
      "127.0.0.1",
      "--port",
      "0",
      "--num-cpus",
      "2",
      "--num-gpus",
      "0",
    ];
    args.push(
      "--include-dashboard",
      "true",
      "--dashboard-host",
      "127.0.0.1",
      "--dashboard-port",
      String(dashboard),
      "--ray-client-server-port",
      String(client),
      "--dashboard-agent-listen-port",
      String(agent),
    );
    args.push("--temp-dir", dir, "--disable-usage-stats");
    const child = spawn(ray, args, {
      detached: true,
      stdio: ["ignore", log, log],
      env: {
        ...env,
        RAY_USAGE_STATS_ENABLED: "0",
        AUTOSCALER_METRIC_PORT: String(autoscalerMetrics),
        DASHBOARD_METRIC_PORT: String(dashboardMetrics),
      },
    });
    const head = new RayHead(`http://127.0.0.1:${dashboard}`, dir, child);
    for (const deadline = Date.now() + 120_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 500))) {
      if (child.exitCode !== null) break;
      try {
        const version = await fetch(`${head.address}/api/version`, { signal: AbortSignal.timeout(2000) });
        const nodes = await fetch(`${head.address}/api/v0/nodes?detail=1`, { signal: AbortSignal.timeout(5000) });
        const alive = (
          (await nodes.json()) as { data: { result: { result: { state: string }[] } } }
        ).data.result.result.some((n) => n.state === "ALIVE");
        if (version.ok && alive) return head;
      } catch {
        // not up yet
      }
    }
    await head.stop();
    throw new Error(
      `the Ray head did not come up in 2 minutes: ${readFileSync(path.join(dir, "ray-start.log"), "utf8").slice(-2000)}`,
    );
  }

  /** SIGTERM to `ray start --block`'s process group (it stops what it started), SIGKILL after 20 s; never `ray stop`, which ends every Ray on the machine. */
  async stop(): Promise<void> {
    const group = this.child.pid;
    if (group === undefined) return;
    const alive = () => {
      try {
        process.kill(-group, 0);
        return true;
      } catch {
        return false;
      }
    };
    if (alive()) process.kill(-group, "SIGTERM");
    for (const deadline = Date.now() + 20_000; alive() && Date.now() < deadline;)
      await new Promise((r) => setTimeout(r, 250));
    if (alive()) process.kill(-group, "SIGKILL");
    rmSync(this.dir, { recursive: true, force: true });
  }
}

const submissions = (cwd: string) =>
  readFileSync(path.join(cwd, "cluster", "counting", "jobs", "submissions.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map(
      (l) =>
        JSON.parse(l) as {
          scheduler: string;
          address: string;
          job_id: string;
          script: string;
          log: string;
          tasks: { task: number; variant: string; run_dir: string; resume: boolean }[];
        },
    );

describe.runIf(installed || required)(skipTitle("arl submit on a Ray cluster", !(installed || required), NEED), () => {
  let head: RayHead | undefined;
  beforeAll(async () => {
    if (installed) head = await RayHead.start();
  }, 150_000);
  afterAll(async () => {
    await head?.stop();
  }, 60_000);

  it("has Ray to start a head from (CI makes .venv-ray with npm run setup:ray)", () => {
    expect(installed, NEED).toBe(true);
  });

  it(
    "runs every variant to the end with the local metrics, resumes a stopped job, submits nothing twice, and reports the sweep",
    { timeout: 900_000 },
    async () => {
      const address = head!.address;
      const cwd = mkdtempSync(path.join(tmpdir(), "arl-ray-submit-"));
      writeFileSync(path.join(cwd, "spec.arl"), spec);

      const submitStarted = Date.now();
      const first = await runArl(
        ["submit", "spec.arl", "--scheduler", "ray", "--address", address, "--out", "cluster"],
        { cwd, env },
      );
      expect(first.code, first.stderr).toBe(0);
      for (const variant of VARIANTS)
        expect(first.stdout).toMatch(
          new RegExp(
            `submitted Ray job arl-counting-\\w+-\\w+-\\w+  counting/${variant}  starts cluster/counting/${variant}/\\S+, script cluster/counting/jobs/ray-\\w+\\.sh [01]\\n`,
          ),
        );
      const recorded = submissions(cwd);
      expect(recorded).toHaveLength(2);
      for (const s of recorded) {
        expect(s.scheduler).toBe("ray");
        expect(s.address).toBe(address);
        expect(s.log).toBe("ray-%A.out");
      }
      const script = readFileSync(path.join(cwd, "cluster", "counting", "jobs", recorded[0]!.script), "utf8");
      for (const s of recorded) expect(script).toContain(s.tasks[0]!.run_dir);
      // What Ray holds of the job: the entrypoint (the script, the task, the job's id) and the variant.
      const details = (await (await fetch(`${address}/api/jobs/${recorded[0]!.job_id}`)).json()) as {
        entrypoint: string;
        metadata: Record<string, string>;
      };
      expect(details.entrypoint).toBe(
        `bash ${path.join(cwd, "cluster", "counting", "jobs", recorded[0]!.script)} 0 ${recorded[0]!.job_id}`,
      );
      expect(details.metadata.arl_variant).toBe("seed=3");

      // Submitted again at once: both jobs wait or run, so nothing is submitted.
      const twice = await runArl(
        ["submit", "spec.arl", "--scheduler", "ray", "--address", address, "--out", "cluster"],
        { cwd, env },
      );
      expect(twice.code, twice.stderr).toBe(0);
      expect(twice.stdout).toContain("nothing to submit");
      expect(submissions(cwd)).toHaveLength(2);

      // Waiting or running, each its own Ray job; then seed=4 is stopped after its first iteration.
      const started = await sweepStatus(cwd, env);
      for (const [i, variant] of VARIANTS.entries()) {
        expect(["pending", "running", "finished"], variant).toContain(started.get(variant)!.phase);
        expect(started.get(variant)!.job).toBe(recorded[i]!.job_id);
      }
      for (
        const deadline = Date.now() + 300_000;
        committedIterations(path.join(cwd, "cluster"), "seed=4") < 1 && Date.now() < deadline;
      )
        await new Promise((r) => setTimeout(r, 100));
      const firstCommit = (Date.now() - submitStarted) / 1000;
      const cancel = await runArl(["cancel", "spec.arl#counting/seed=4", "--runs", "cluster"], { cwd, env });
      expect(cancel.code, cancel.stderr).toBe(0);
      expect(cancel.stdout).toMatch(
        new RegExp(
          `^cancelled counting/seed=4: job ${recorded[1]!.job_id} \\(was RUNNING, [12]/${ITERATIONS} iterations committed\\)\\n$`,
        ),
      );

      const stopped = await waitForStatus(
        cwd,
        env,
        "seed=4's job to stop and seed=3 to finish",
        (s) => s.get("seed=4")!.phase === "cancelled" && s.get("seed=3")!.phase === "finished",
      );
      const cancelled = stopped.get("seed=4")!;
      expect(cancelled.iteration).toBeGreaterThanOrEqual(1);
      expect(cancelled.iteration).toBeLessThan(ITERATIONS);
      expect(cancelled.job_state).toBe("STOPPED");
      expect(cancelled.submittable).toBe(true);
      // The job's output is in the jobs folder too, which the log tail comes from.
      const log = readFileSync(path.join(cwd, "cluster", "counting", "jobs", `ray-${recorded[1]!.job_id}.out`), "utf8");
      expect(log).toMatch(
        new RegExp(
          `^arl submit: task 1 of job ${recorded[1]!.job_id} on \\S+ at \\S+, run directory ${cancelled.run_dir}\n`,
        ),
      );
      expect(cancelled.log_tail.length).toBeGreaterThan(0);
      expect(log.trimEnd().endsWith(cancelled.log_tail.at(-1)!)).toBe(true);
      expect(stopped.get("seed=3")!.submittable).toBe(false);

      // Submitted again: only the stopped variant, resuming its own run directory.
      const again = await runArl(
        ["submit", "spec.arl", "--scheduler", "ray", "--address", address, "--out", "cluster"],
        { cwd, env },
      );
      expect(again.code, again.stderr).toBe(0);
      expect(again.stdout).toContain(`counting/seed=3: finished (job ${recorded[0]!.job_id}); not submitted`);
      expect(again.stdout).toMatch(/submitted Ray job \S+ {2}counting\/seed=4 {2}resumes /);
      const resubmitted = submissions(cwd)[2]!;
      expect(resubmitted.tasks).toEqual([
        { task: 0, variant: "seed=4", hash: expect.any(String) as string, run_dir: cancelled.run_dir, resume: true },
      ]);

      const finished = await waitForStatus(cwd, env, "every variant to finish", (s) =>
        VARIANTS.every((v) => s.get(v)!.phase === "finished"),
      );
      for (const variant of VARIANTS) expect(finished.get(variant)!.iteration).toBe(ITERATIONS);
      const allDone = (Date.now() - submitStarted) / 1000;

      const third = await runArl(
        ["submit", "spec.arl", "--scheduler", "ray", "--address", address, "--out", "cluster"],
        { cwd, env },
      );
      expect(third.code, third.stderr).toBe(0);
      expect(third.stdout).toContain("nothing to submit");
      expect(submissions(cwd)).toHaveLength(3);

      // The same variants on this machine, uninterrupted: the same metrics and evaluations.
      const localStarted = Date.now();
      const local = await runArl(["run", "spec.arl", "--out", "local", "--jobs", "2", ...embedded], { cwd, env });
      expect(local.code, local.stderr).toBe(0);
      const localSeconds = (Date.now() - localStarted) / 1000;
      const onCluster = variantResults(path.join(cwd, "cluster"), VARIANTS);
      expect(onCluster).toEqual(variantResults(path.join(cwd, "local"), VARIANTS));
      expect(onCluster["seed=3"]!.evals).not.toEqual(onCluster["seed=4"]!.evals);

      const report = await runArl(["report", "spec.arl", "--runs", "cluster"], { cwd, env });
      expect(report.code, report.stderr).toBe(0);
      expect(report.stdout).toContain("cluster/counting/report.html");
      // Timings for docs/distributed.md, never asserted.
      console.info(
        `ray.test.ts timings: seed=4's first commit ${firstCommit.toFixed(1)} s after arl submit began; the sweep (with a stop and a resume) ${allDone.toFixed(1)} s; the local --jobs 2 run ${localSeconds.toFixed(1)} s`,
      );
    },
  );

  it("refuses a plan the cluster's nodes could never run, before writing anything", async () => {
    const cwd = mkdtempSync(path.join(tmpdir(), "arl-ray-submit-"));
    writeFileSync(path.join(cwd, "spec.arl"), spec);
    // 3 CPUs for each entrypoint, on a head of 2.
    const r = await runArl(
      [
        "submit",
        "spec.arl",
        "--scheduler",
        "ray",
        "--address",
        head!.address,
        "--out",
        "cluster",
        "--cpus-per-task",
        "3",
      ],
      { cwd, env },
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /^arl submit: Ray cannot run counting\/seed=3: it asks 1 node with 0 GPUs and 3 CPUs each, and the 1 alive node at http:\/\/127\.0\.0\.1:\d+ has 0 such \(at most 0 GPUs and 2 CPUs on a node\); nothing was submitted/,
    );
    expect(readdirSync(cwd).sort()).toEqual(["spec.arl"]);
  });
});

describe("arl submit --scheduler ray without a cluster", () => {
  it("says in one line that no Ray answers, how to get one, and writes nothing", async () => {
    const cwd = mkdtempSync(path.join(tmpdir(), "arl-ray-submit-"));
    writeFileSync(path.join(cwd, "spec.arl"), spec);
    const port = await freePort();
    const r = await runArl(["submit", "spec.arl", "--scheduler", "ray", "--address", `127.0.0.1:${port}`], {
      cwd,
      env,
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      `arl submit: no Ray cluster answers at http://127.0.0.1:${port} (ECONNREFUSED); check the address (the dashboard's, port 8265 by default), or start a head with 'ray start --head' (Ray with its dashboard: pip install 'ray[default]', or 'npm run setup:ray' in ARL's checkout, which makes .venv-ray)\n`,
    );
    const unnamed = await runArl(["submit", "spec.arl", "--scheduler", "ray"], { cwd, env });
    expect(unnamed.code).toBe(1);
    expect(unnamed.stderr).toMatch(
      /^arl submit: no Ray cluster named: give its dashboard's address with --address http:\/\/HEAD:8265 or set RAY_ADDRESS; [^\n]*npm run setup:ray[^\n]*\n$/,
    );
    const slurmOption = await runArl(["submit", "spec.arl", "--scheduler", "ray", "--partition", "gpu"], { cwd, env });
    expect(slurmOption.code).toBe(2);
    expect(slurmOption.stderr).toContain("--partition is SLURM's");
    expect(readdirSync(cwd)).toEqual(["spec.arl"]);
  });

  it("reads the dashboard's address and Ray's job states", () => {
    expect(rayAddress(undefined, { RAY_ADDRESS: "http://head:8265/" })).toBe("http://head:8265");
    expect(rayAddress("10.0.0.1:8265", { RAY_ADDRESS: "http://head:8265" })).toBe("http://10.0.0.1:8265");
    expect(() => rayAddress("ray://head:10001", {})).toThrow(/Ray Client's address/);
    expect(rayPhase({ status: "PENDING" })).toBe("pending");
    expect(rayPhase({ status: "STOPPED" })).toBe("cancelled");
    expect(rayPhase({ status: "SUCCEEDED" })).toBe("completed");
    // arl run failed on its own: an exit status. Killed by a signal, or Ray lost its supervisor (a node died): the cluster's doing, resumable.
    expect(rayPhase({ status: "FAILED", error_type: "JOB_ENTRYPOINT_COMMAND_ERROR", driver_exit_code: 1 })).toBe(
      "failed",
    );
    expect(rayPhase({ status: "FAILED", error_type: "JOB_ENTRYPOINT_COMMAND_ERROR", driver_exit_code: 137 })).toBe(
      "preempted",
    );
    expect(rayPhase({ status: "FAILED", error_type: "JOB_SUPERVISOR_ACTOR_DIED" })).toBe("preempted");
    expect(
      jobResources({ backend: "local", gpus: 0, nodes: 1, rollout: { engine: "trainer" } } as never, undefined),
    ).toEqual({ nodes: 1, cpus: 1, gpus: 0 });
  });

  it("takes a plan on several nodes' rendezvous from the Ray launcher's variables (runtime-gpu/ray_nodes.py)", () => {
    const launched = {
      ARL_RAY_NODE_RANK: "1",
      ARL_RAY_NNODES: "2",
      MASTER_ADDR: "10.0.0.7",
      MASTER_PORT: "41234",
      ARL_RAY_JOB_ID: "arl-counting-0123456789ab-20260301T101500Z-9f2c",
    };
    expect(resolveRendezvous(2, {}, launched, "arl-x")).toEqual({
      nodeRank: 1,
      nodes: 2,
      endpoint: "10.0.0.7:41234",
      id: "ray-arl-counting-0123456789ab-20260301T101500Z-9f2c",
      source: "Ray",
    });
    expect(resolveRendezvous(1, {}, launched, "arl-x")).toBeUndefined();
    expect(() => resolveRendezvous(4, {}, launched, "arl-x")).toThrow(
      /the Ray job has 2 nodes \(ARL_RAY_NNODES\) but the plan's resources.nodes is 4/,
    );
    expect(() => resolveRendezvous(2, {}, { ARL_RAY_NODE_RANK: "0" }, "arl-x")).toThrow(/MASTER_ADDR is not/);
  });
});
