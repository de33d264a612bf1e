// The trackers through `arl run` on the embedded trainer (builtin:tiny, dist/) and the repository's
// Python (.venv): a two-iteration run with TensorBoard, W&B (offline) and MLflow (its file store)
// logs every metrics line, the plan and the eval tables, read back with the libraries' own readers
// (runtime-gpu/tests/tracking_readers.py); a tracker that cannot start is a warning and a count in
// metrics.jsonl, and the run completes.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { skipTitle } from "../helpers/skip-reporter.js";
import { RunTracking } from "../../src/runtime/run/tracking.js";
import { pythonCandidates } from "../../src/contracts/python.js";
import { runArl } from "../helpers/cli.js";
import { compilePlans, COUNTER_SIGNALS_AND_TOOLS, counterEnvScript } from "../helpers/plans.js";

const repo = fileURLToPath(new URL("../..", import.meta.url));
const embedded = path.join(repo, "dist", "trainer", "embedded", "main.js");
const readers = path.join(repo, "runtime-gpu", "tests", "tracking_readers.py");
const python = pythonCandidates()[0] ?? "python3";
// Found without importing them (an import of all three takes seconds).
const findTrackers =
  "import importlib.util as u, sys; sys.exit(0 if all(u.find_spec(m) for m in ('tensorboard', 'wandb', 'mlflow')) else 1)";
const hasTrackers = spawnSync(python, ["-c", findTrackers], { stdio: "ignore" }).status === 0;

function spec(tracking: string, iterations: number): string {
  return `
experiment tracked {
  seed: 2
  policy { model: "builtin:tiny?hidden=16&embed=8&key=8", sampling { max_new_tokens: 8 } }
  env counter {
    kind: subprocess
    command: ${JSON.stringify([process.execPath, counterEnvScript])}
    tasks: 30${COUNTER_SIGNALS_AND_TOOLS}
  }
  harness { max_turns: 2 }
  reward { solved: outcome.success }
  algorithm { group_size: 2 }
  rollout { tasks_per_batch: 1, concurrency: 4, iterations: ${iterations} }
  eval { every: 100, tasks: 1, k: [1], before_training: false }
  tracking { ${tracking} }
}
`;
}

interface Line {
  readonly iteration: number;
  readonly loss: number;
  readonly success: number;
  readonly reward_terms: Record<string, number>;
  readonly eval?: Record<string, number>;
  readonly tracker_errors?: number;
}

async function run(tracking: string, iterations = 2) {
  const cwd = mkdtempSync(path.join(tmpdir(), "arl-tracking-"));
  writeFileSync(path.join(cwd, "tracked.arl"), spec(tracking, iterations));
  const result = await runArl(
    ["run", "tracked.arl", "--out", "runs", "--trainer-command", `${process.execPath} ${embedded}`],
    { cwd },
  );
  const dir = /run directory(?: is complete \([^)]*\))?: (\S+)/.exec(result.stdout)?.[1];
  if (!dir) throw new Error(`no run directory in:\n${result.stdout}\n${result.stderr}`);
  const lines = readFileSync(path.join(dir, "metrics.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Line);
  return { ...result, output: `${result.stdout}${result.stderr}`, dir, lines };
}

interface ReadBack {
  ids: Record<string, string>;
  tensorboard: { scalars: Record<string, Record<string, number>>; texts: string[]; hparams: Record<string, unknown> };
  wandb: { folders: number; run_ids: string[]; history: Record<string, unknown>[]; config: Record<string, unknown> };
  mlflow: {
    status: string;
    metrics: Record<string, [number, number][]>;
    params: Record<string, string>;
    artifacts: string[];
  };
}

describe.skipIf(!hasTrackers)(
  skipTitle(
    "tracking in arl run (builtin:tiny)",
    !hasTrackers,
    "needs tensorboard, wandb and mlflow in .venv: npm run setup:python",
  ),
  () => {
    it("copies every metrics line, the plan and the eval tables to TensorBoard, W&B and MLflow, read back with their readers", async () => {
      const r = await run(`tensorboard: true, wandb { project: "arl-test", mode: offline }, mlflow {}`);
      expect(r.code, r.output).toBe(0);
      expect(r.output).toContain("tracking: tensorboard, wandb, mlflow open");
      expect(r.output).not.toContain("warning: tracking");
      expect(r.lines.map((l) => [l.iteration, l.tracker_errors])).toEqual([
        [1, 0],
        [2, 0],
      ]);
      const plan = JSON.parse(readFileSync(path.join(r.dir, "plan.json"), "utf8")) as { hash: string };

      const read = spawnSync(python, [readers, path.join(r.dir, "tracking")], {
        encoding: "utf8",
        env: { ...process.env, WANDB_SILENT: "true" },
      });
      expect(read.status, read.stderr).toBe(0);
      const back = JSON.parse(read.stdout) as ReadBack;
      const [first, second] = r.lines as [Line, Line];

      // TensorBoard: scalars (float32) by tag and step; the plan as text and hparams; the eval tables as text.
      const tb = back.tensorboard;
      for (const line of r.lines) {
        expect(tb.scalars.loss?.[line.iteration]).toBeCloseTo(line.loss, 5);
        expect(tb.scalars.success?.[line.iteration]).toBeCloseTo(line.success, 5);
        expect(tb.scalars["reward_terms/solved"]?.[line.iteration]).toBeCloseTo(
          line.reward_terms.solved ?? Number.NaN,
          5,
        );
      }
      expect(tb.scalars.iteration, "the iteration is the step, not a metric").toBeUndefined();
      expect(tb.scalars["eval/pass@1"]).toEqual({ 2: expect.closeTo(second.eval!["pass@1"]!, 5) });
      expect(tb.texts).toEqual(expect.arrayContaining(["plan", "eval/iteration-00002"]));
      expect(tb.hparams.hash).toBe(plan.hash);

      // W&B: the offline run's transaction log: a history row per iteration, the plan as config, the tables.
      const wb = back.wandb;
      expect(wb.folders).toBe(1);
      expect(wb.run_ids).toEqual([back.ids.wandb]);
      const rows = wb.history.filter((h) => "loss" in h);
      expect(rows.map((h) => [h._step, h.loss, h.tracker_errors])).toEqual([
        [1, first.loss, 0],
        [2, second.loss, 0],
      ]);
      expect(wb.config.hash).toBe(plan.hash);
      expect(wb.history.some((h) => h["eval/iteration-00002/_type"] === "table-file")).toBe(true);

      // MLflow: the file store in the run directory; metric histories by step, the plan as params and artifact.
      const ml = back.mlflow;
      expect(ml.status).toBe("FINISHED");
      expect(ml.metrics.loss).toEqual([
        [1, first.loss],
        [2, second.loss],
      ]);
      expect(ml.metrics["eval/pass_at_1"]).toEqual([[2, second.eval!["pass@1"]]]);
      expect(ml.params.hash).toBe(plan.hash);
      expect(ml.params["rollout.iterations"]).toBe("2");
      expect(ml.artifacts).toEqual(expect.arrayContaining(["plan.json", "eval/iteration-00002.json"]));
    });

    it("warns and counts a tracker that cannot start, and the run completes", async () => {
      const blocker = path.join(mkdtempSync(path.join(tmpdir(), "arl-tracking-blocker-")), "a-file");
      writeFileSync(blocker, "not a folder");
      // The smallest run that commits: one iteration.
      const r = await run(`mlflow { tracking_uri: ${JSON.stringify(path.join(blocker, "mlruns"))} }`, 1);
      expect(r.code, r.output).toBe(0);
      expect(r.output).toMatch(/warning: tracking: mlflow: \w+Error: .*; the run goes on/);
      expect(r.output).toContain("finished after 1 iteration");
      expect(r.lines.map((l) => l.tracker_errors)).toEqual([1]);
    });

    it("counts a sidecar that cannot start once, and never waits on it", async () => {
      const [plan] = compilePlans(spec("tensorboard: true", 1));
      const saved = process.env.ARL_PYTHON;
      process.env.ARL_PYTHON = path.join(tmpdir(), "no-such-python");
      const logs: string[] = [];
      try {
        const tracking = RunTracking.start({
          plan: plan!,
          runDir: mkdtempSync(path.join(tmpdir(), "arl-tracking-nopython-")),
          resumeAfter: 0,
          dataRoot: undefined,
          log: (l) => logs.push(l),
        });
        const line = { iteration: 1, loss: 0.5 };
        tracking.metrics(line);
        expect(await tracking.counts()).toEqual({ tracker_errors: 1 });
        await tracking.finish(tmpdir(), 1);
        expect(await tracking.counts()).toEqual({ tracker_errors: 1 });
      } finally {
        if (saved === undefined) delete process.env.ARL_PYTHON;
        else process.env.ARL_PYTHON = saved;
      }
      expect(logs).toEqual([
        expect.stringMatching(
          /^warning: tracking: could not start the trackers' sidecar \(.*no-such-python -m arl_tracking\): .*ENOENT.*; the run goes on$/,
        ),
      ]);
    });
  },
);

const hasPython = spawnSync(python, ["-c", "pass"], { stdio: "ignore" }).status === 0;

describe.skipIf(!hasPython)(
  skipTitle(
    "a trackers' sidecar that reports its failure",
    !hasPython,
    "needs Python 3: apt-get install python3, or npm run setup:python for .venv",
  ),
  () => {
    it("is not waited for: its report ends the first metrics line's wait (RUN/tracking a regular file)", async () => {
      const [plan] = compilePlans(spec("tensorboard: true", 1));
      const runDir = mkdtempSync(path.join(tmpdir(), "arl-tracking-file-"));
      writeFileSync(path.join(runDir, "tracking"), "a file where the trackers' folder goes");
      const logs: string[] = [];
      const tracking = RunTracking.start({
        plan: plan!,
        runDir,
        resumeAfter: 0,
        dataRoot: undefined,
        log: (l) => logs.push(l),
      });
      let counted: { tracker_errors?: number } | undefined;
      const counting = tracking.counts().then((c) => (counted = c));
      // The sidecar is a Python process: on a loaded machine its report can take seconds to come.
      for (let i = 0; i < 500 && logs.length === 0; i++) await new Promise((r) => setTimeout(r, 50));
      expect(logs).toEqual([
        expect.stringMatching(/^warning: tracking: sidecar: FileExistsError: .*; the run goes on$/),
      ]);
      // Within the same turn of the event loop, not at the wait's 30 s timeout.
      await new Promise((r) => setImmediate(r));
      expect(counted).toEqual({ tracker_errors: 1 });
      await counting;
      await tracking.finish(runDir, 1);
      expect(logs).toHaveLength(1);
    });
  },
);
