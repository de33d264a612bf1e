// `arl run` of dataset tasks on builtin:tiny with the embedded trainer: the shipped arithmetic
// rows scored by a veRL compute_score and a TRL reward function, each file used unmodified; bad
// rows stopped at check time as file:line; a resumed run draws the same tasks as an
// uninterrupted one (the file's own split, in the same order).
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { skipTitle } from "../helpers/skip-reporter.js";
import { pythonCandidates } from "../../src/contracts/python.js";
import { readBuffer } from "../../src/episode/buffer.js";
import { runArl } from "../helpers/cli.js";
import { killThenResume } from "../helpers/kill-resume.js";
import { embeddedTrainerFlag, embeddedTrainerCommand } from "../helpers/plans.js";

const shipped = fileURLToPath(new URL("../../experiments/rlvr/", import.meta.url));
const python = process.env.ARL_PYTHON ?? pythonCandidates()[0] ?? "python3";
const hasPython = spawnSync(python, ["-c", "import json"], { stdio: "ignore" }).status === 0;

/** The shipped rows and veRL reward module, a TRL reward function and `spec`, in a folder of their own. */
function workspace(spec: string, rows?: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), "arl-dataset-run-"));
  mkdirSync(path.join(dir, "data"));
  copyFileSync(path.join(shipped, "reward.py"), path.join(dir, "reward.py"));
  if (rows === undefined)
    copyFileSync(path.join(shipped, "data/arithmetic.jsonl"), path.join(dir, "data/arithmetic.jsonl"));
  else writeFileSync(path.join(dir, "data/arithmetic.jsonl"), rows);
  // A TRL reward function as TRL's docs write them: completions and a dataset column, by keyword.
  writeFileSync(
    path.join(dir, "trl_reward.py"),
    "def exact_answer(completions, answer, **kwargs):\n    return [1.0 if c.strip() == a else 0.0 for c, a in zip(completions, answer)]\n",
  );
  writeFileSync(path.join(dir, "spec.arl"), spec);
  return dir;
}

const spec = (env: string, iterations = 1) => `import "std/algorithms" as algo
import "std/envs/dataset" as dataset
experiment sums {
  seed: 3
  policy { model: "builtin:tiny?hidden=24&embed=16&heads=2&key=8", sampling { max_new_tokens: 3 } }
  env sums extends dataset.task {
    data: "./data/arithmetic.jsonl"
    split_column: "split"
    ${env}
  }
  harness { max_turns: 1, max_response_tokens: 3 }
  reward { correct: outcome.correct }
  algorithm extends algo.grpo { group_size: 4 }
  rollout { tasks_per_batch: 4, iterations: ${iterations}, concurrency: 8 }
  eval { split: test, every: 1, before_training: false, tasks: 4, k: [1] }
  resources { backend: local }
}
`;

function runDirOf(dir: string): string {
  const base = path.join(dir, "runs", "sums", "default");
  return path.join(base, readdirSync(base)[0]!);
}

describe.skipIf(!hasPython && !process.env.CI)(
  skipTitle(
    "arl run of a dataset task",
    !hasPython && !process.env.CI,
    "needs Python 3: apt-get install python3, or npm run setup:python for .venv",
  ),
  () => {
    for (const [name, env] of [
      ["a veRL compute_score", 'scorer: verl\n    verifier: "./reward.py"'],
      ["a TRL reward function", 'scorer: trl\n    verifier: "./trl_reward.py"\n    function: "exact_answer"'],
    ] as const) {
      it(`trains on the rows scored by ${name}, unmodified, in the env host`, async () => {
        const dir = workspace(spec(env));
        const run = await runArl(["run", "spec.arl", "--out", "runs", ...embeddedTrainerFlag], {
          cwd: dir,
          env: { ARL_PYTHON: python },
        });
        expect(run.code, run.stderr).toBe(0);
        const runDir = runDirOf(dir);
        const metrics = JSON.parse(readFileSync(path.join(runDir, "metrics.jsonl"), "utf8").trim()) as {
          end_reasons: Record<string, number>;
        };
        expect(metrics.end_reasons).toMatchObject({ env_error: 0 });
        const { records } = readBuffer(path.join(runDir, "buffer.arlbuf"));
        // 4 tasks x 4 samples, every one the row's prompt and one answer, scored.
        expect(records.length).toBe(16);
        const train = new Set(
          readFileSync(path.join(dir, "data/arithmetic.jsonl"), "utf8")
            .trim()
            .split("\n")
            .flatMap((l, i) => ((JSON.parse(l) as { split: string }).split === "train" ? [i] : [])),
        );
        for (const r of records) expect(train.has(r.task), `task ${r.task} is a train row`).toBe(true);
      }, 120_000);
    }

    it("a verifier that raises is an env error in the iteration's line, never a zero; the traceback is in the run directory", async () => {
      const dir = workspace(spec('scorer: verl\n    verifier: "./reward.py"'));
      writeFileSync(
        path.join(dir, "reward.py"),
        "def compute_score(data_source, solution_str, ground_truth, extra_info=None):\n    raise KeyError('no scorer for ' + data_source)\n",
      );
      const run = await runArl(["run", "spec.arl", "--out", "runs", ...embeddedTrainerFlag], {
        cwd: dir,
        env: { ARL_PYTHON: python },
      });
      expect(`${run.stdout}${run.stderr}`).toContain("the verifier 'compute_score' (reward.py) raised on row");
      expect(`${run.stdout}${run.stderr}`).toContain("KeyError: 'no scorer for arithmetic'");
      expect(readFileSync(path.join(runDirOf(dir), "env-host.log"), "utf8")).toContain("raise KeyError");
    }, 120_000);
  },
);

describe("dataset rows checked before anything trains", () => {
  it("reports bad rows (not JSON, a missing column, a prompt that is not text) as file:line and starts nothing", async () => {
    const rows = [
      '{"prompt": "What is 1 + 1 ?", "answer": "2", "split": "train"}',
      "{oops",
      '{"prompt": "What is 2 + 2 ?", "split": "train"}',
      '{"prompt": {"text": "x"}, "answer": "1", "split": "test"}',
    ].join("\n");
    const dir = workspace(spec("scorer: number"), rows);
    const run = await runArl(["run", "spec.arl", "--out", "runs", ...embeddedTrainerFlag], { cwd: dir });
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain("dataset-row-invalid");
    expect(run.stderr).toContain("data/arithmetic.jsonl:2: the line is not JSON");
    expect(run.stderr).toContain("data/arithmetic.jsonl:3: column 'answer' is missing");
    expect(run.stderr).toContain("data/arithmetic.jsonl:4: column 'prompt' is a object, not a prompt");
    expect(readdirSync(dir)).not.toContain("runs");
  }, 60_000);

  it("reports a pattern that does not compile and a verifier file without the function, at check time", async () => {
    const dir = workspace(spec('scorer: number\n    pattern: "#### ([0-9"'));
    const check = await runArl(["check", "spec.arl"], { cwd: dir });
    expect(check.stdout + check.stderr).toContain("dataset-pattern-invalid");
    writeFileSync(path.join(dir, "spec.arl"), spec('scorer: verl\n    verifier: "./reward.py"\n    function: "score"'));
    const missing = await runArl(["check", "spec.arl"], { cwd: dir });
    expect(missing.stdout + missing.stderr).toContain(
      "the verifier file './reward.py' does not define 'score' at its top level",
    );
  }, 60_000);
});

describe("resume", () => {
  it("a run killed after iteration 1 and resumed draws the same tasks, in the same order, from the file's train split", async () => {
    const dir = workspace(spec("scorer: number", 3));
    const straight = await runArl(["run", "spec.arl", "--out", "straight", ...embeddedTrainerFlag], {
      cwd: dir,
    });
    expect(straight.code, straight.stderr).toBe(0);
    const tasks = (runDir: string) =>
      readBuffer(path.join(runDir, "buffer.arlbuf")).records.map((r) => `${r.iteration}:${r.task}`);
    const base = path.join(dir, "straight", "sums", "default");
    const expected = tasks(path.join(base, readdirSync(base)[0]!));
    const { runDir, resumed } = await killThenResume(
      path.join(dir, "spec.arl"),
      path.join(dir, "killed"),
      "sums",
      embeddedTrainerCommand,
      1,
    );
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    expect(tasks(runDir)).toEqual(expected);
    const testRows = new Set(
      readFileSync(path.join(dir, "data/arithmetic.jsonl"), "utf8")
        .trim()
        .split("\n")
        .flatMap((l, i) => ((JSON.parse(l) as { split: string }).split === "test" ? [i] : [])),
    );
    expect(expected.some((t) => testRows.has(Number(t.split(":")[1])))).toBe(false);
  }, 300_000);
});
