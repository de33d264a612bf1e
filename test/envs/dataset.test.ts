// The `dataset` env kind: rows read and checked (a bad row is file:line), the built-in text
// scorers, one answer an episode, isolation, and the Python scorers in the env host against the
// real math-verify and real user files: a verifier that raises or hangs is an env error for its
// episode and the host goes on serving the next.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { skipTitle } from "../helpers/skip-reporter.js";
import { datasetRows } from "../../src/contracts/dataset-rows.js";
import { EnvError, type EnvKind } from "../../src/contracts/env.js";
import { pythonCandidates } from "../../src/contracts/python.js";
import { createDatasetEnv, type DatasetEnv } from "../../src/envs/adapters/dataset/index.js";
import { lastBoxed, normaliseAnswer, scoreText } from "../../src/envs/adapters/dataset/scorers.js";
import { verifyPlanDataFiles } from "../../src/envs/data-files.js";
import { Compiler } from "../../src/compiler.js";

const sha = (text: string) => createHash("sha256").update(text).digest("hex");
const python = process.env.ARL_PYTHON ?? pythonCandidates()[0] ?? "python3";
const hasMathVerify = spawnSync(python, ["-c", "import math_verify"], { stdio: "ignore" }).status === 0;
// CI installs runtime-gpu/requirements.txt (math-verify among them): there the tests must run.
const skipHost = !hasMathVerify && !process.env.CI;

const columns = { prompt: "prompt", answer: "answer", split: null, answerIsText: true };

describe("dataset rows", () => {
  it("reads text and chat-message prompts, nested columns and each row's line", () => {
    const text =
      '{"prompt": "2+2?", "answer": "4"}\n\n{"prompt": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "3+3?"}], "answer": 6}\n';
    const read = datasetRows(text, columns);
    expect("rows" in read && read.rows.map((r) => [r.line, r.answer])).toEqual([
      [1, "4"],
      [3, 6],
    ]);
    const nested = datasetRows('{"prompt": "q", "reward_model": {"ground_truth": "7"}}', {
      ...columns,
      answer: "reward_model.ground_truth",
    });
    expect("rows" in nested && nested.rows[0]?.answer).toBe("7");
  });

  it("reports every kind of bad row as its line: not JSON, a missing column, a prompt that is not text, a bad split", () => {
    const text = [
      '{"prompt": "ok", "answer": "1", "split": "train"}',
      "{not json",
      '{"prompt": "no answer"}',
      '{"prompt": 5, "answer": "1"}',
      '{"prompt": [{"role": "user"}], "answer": "1"}',
      '{"prompt": "q", "answer": "1", "split": "dev"}',
    ].join("\n");
    const read = datasetRows(text, { ...columns, split: "split" });
    expect("problems" in read && read.problems.map((p) => p.line)).toEqual([2, 3, 4, 5, 6]);
    if (!("problems" in read)) return;
    expect(read.problems[0]?.problem).toBe("the line is not JSON");
    expect(read.problems[1]?.problem).toContain("column 'answer' is missing");
    expect(read.problems[2]?.problem).toContain("column 'prompt' is a number, not a prompt");
    expect(read.problems[3]?.problem).toContain("has a message 0 that is not");
    expect(read.problems[4]?.problem).toContain("column 'split' is \"dev\"");
  });
});

describe("built-in scorers", () => {
  it("exact: equal after normalisation (case, spaces, $, \\text{}, a final full stop), with a pattern's last match", () => {
    expect(normaliseAnswer("  The  Answer. ")).toBe("the answer");
    expect(scoreText("exact", "$\\text{Paris}$", "paris", null)).toMatchObject({
      correct: true,
      score: 1,
      answered: true,
    });
    expect(scoreText("exact", "Paris, France", "paris", null)).toMatchObject({ correct: false, score: 0 });
    expect(scoreText("exact", "Answer: Rome ... Answer: Paris", "Paris", /Answer: (\w+)/)).toMatchObject({
      correct: true,
    });
    expect(scoreText("exact", "no marker", "Paris", /Answer: (\w+)/)).toMatchObject({
      correct: false,
      answered: false,
    });
  });

  it("number: the last number, or the pattern's; thousands separators and decimals; close is not equal", () => {
    expect(scoreText("number", "3 + 4 makes 7", "7", null)).toMatchObject({ correct: true });
    expect(scoreText("number", "so 1,234.50 dollars", "1234.5", null)).toMatchObject({ correct: true });
    expect(scoreText("number", "#### 72\nthen 5", "72", /#### (-?[0-9.,]+)/)).toMatchObject({ correct: true });
    expect(scoreText("number", "7.01", "7", null)).toMatchObject({ correct: false, answered: true });
    expect(scoreText("number", "seven", "7", null)).toMatchObject({ correct: false, answered: false });
  });

  it("boxed: the last \\boxed{} with nested braces, compared as text or as numbers", () => {
    expect(lastBoxed("\\boxed{1} then \\boxed{\\frac{1}{2}}")).toBe("\\frac{1}{2}");
    expect(scoreText("boxed", "so \\boxed{\\frac{1}{2}}", "\\frac{1}{2}", null)).toMatchObject({ correct: true });
    expect(scoreText("boxed", "\\boxed{12.0}", "12", null)).toMatchObject({ correct: true });
    expect(scoreText("boxed", "\\boxed{\\frac{1}{3}}", "\\frac{1}{2}", null)).toMatchObject({
      correct: false,
      answered: true,
    });
    expect(scoreText("boxed", "the answer is 12", "12", null)).toMatchObject({ correct: false, answered: false });
  });
});

/** A dataset env over `rows` (and `files`) in a folder of its own. */
function datasetEnv(
  rows: readonly object[],
  fields: Partial<DatasetEnv> = {},
  files: Record<string, string> = {},
): { kind: EnvKind<DatasetEnv>; env: DatasetEnv; dir: string } {
  const dir = mkdtempSync(path.join(tmpdir(), "arl-dataset-"));
  const data = rows.map((r) => JSON.stringify(r)).join("\n");
  writeFileSync(path.join(dir, "rows.jsonl"), data);
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
  const verifier =
    files["reward.py"] === undefined
      ? null
      : { path: "reward.py", sha256: sha(readFileSync(path.join(dir, "reward.py"), "utf8")) };
  const env: DatasetEnv = {
    kind: "dataset",
    description: null,
    version: "1",
    tasks: rows.length,
    split: { train: 0.8, valid: 0, test: 0.2 },
    weight: 1,
    signals: {},
    optimal_steps: null,
    budget_is_task_rule: false,
    reward_range: [0, 1],
    data: { path: "rows.jsonl", sha256: sha(data) },
    prompt_column: "prompt",
    answer_column: "answer",
    split_column: null,
    scorer: "exact",
    pattern: null,
    verifier,
    function: "compute_score",
    timeout_s: 10,
    lookup_column: null,
    max_data_bytes: 1 << 20,
    max_row_bytes: 4096,
    ...fields,
  };
  return { kind: createDatasetEnv({ root: dir, python }), env, dir };
}

const kinds: EnvKind<DatasetEnv>[] = [];
afterEach(async () => {
  for (const k of kinds.splice(0)) await k.shutdown?.();
});

async function answer(kind: EnvKind<DatasetEnv>, env: DatasetEnv, task: number, text: string) {
  const instance = await kind.create(env, task, 0);
  await instance.reset();
  const signals = await instance.finalAnswer!(text);
  return { signals, outcome: await instance.outcome() };
}

describe("the dataset env", () => {
  it("resets to the row's prompt (chat messages as messages), scores one answer, and keeps episodes apart", async () => {
    const { kind, env } = datasetEnv(
      [
        { prompt: "2+2?", answer: "4" },
        { prompt: [{ role: "user", content: "3+3?" }], answer: "6" },
      ],
      { scorer: "number" },
    );
    const a = await kind.create(env, 0, 0);
    const b = await kind.create(env, 0, 0);
    expect(await a.reset()).toEqual({ text: "2+2?", signals: {} });
    expect((await (await kind.create(env, 1, 0)).reset()).messages).toEqual([{ role: "user", content: "3+3?" }]);
    await b.reset();
    await a.finalAnswer!("it is 4");
    await b.finalAnswer!("it is 5");
    expect(await a.outcome()).toEqual({ correct: true, score: 1, answered: true, success: true });
    expect(await b.outcome()).toEqual({ correct: false, score: 0, answered: true, success: false });
    // No answer (the turn was never finished): the episode is not correct.
    expect(await (await kind.create(env, 0, 0)).outcome()).toEqual({
      correct: false,
      score: 0,
      answered: false,
      success: false,
    });
    expect(kind.vocabulary(env)).toEqual(expect.arrayContaining(["2", "+", "?", "4", "6"]));
  });

  it("refuses a data file whose bytes differ from the plan's, and bad rows as file:line", async () => {
    const { kind, env } = datasetEnv([{ prompt: "q", answer: "1" }]);
    await expect(kind.create({ ...env, data: { ...env.data, sha256: "0".repeat(64) } }, 0, 0)).rejects.toThrow(
      /sha256/,
    );
    const bad = datasetEnv([{ prompt: "q", answer: "1" }, { prompt: "q" }]);
    await expect(
      bad.kind.provision!(bad.env, { name: "t", tools: [], runDir: bad.dir, log: () => undefined }),
    ).rejects.toThrow("rows.jsonl:2: column 'answer' is missing");
  });
});

describe.skipIf(skipHost)(
  skipTitle("Python scorers in the env host", skipHost, "needs math-verify in .venv: npm run setup:python"),
  () => {
    const provision = (kind: EnvKind<DatasetEnv>, env: DatasetEnv, dir: string) => {
      kinds.push(kind);
      return kind.provision!(env, { name: "t", tools: [], runDir: dir, log: () => undefined });
    };

    it("math_verify agrees with math-verify itself: fractions, \\boxed{}, units, and close wrong answers", async () => {
      const cases: [string, string][] = [
        ["The answer is $\\frac{1}{2}$", "0.5"],
        ["so \\boxed{\\frac{3}{4}}", "\\frac{3}{4}"],
        ["\\boxed{\\dfrac{6}{8}}", "3/4"],
        ["The length is $5\\text{ cm}$", "5"],
        ["\\boxed{10\\%}", "10"],
        ["\\boxed{0.333}", "\\frac{1}{3}"],
        ["\\boxed{\\frac{1}{3}}", "\\frac{1}{3}"],
        ["$x = 2$ or so, \\boxed{2.0001}", "2"],
        ["\\boxed{\\sqrt{2}}", "\\sqrt{2}"],
        ["\\boxed{1.414}", "\\sqrt{2}"],
        ["no answer here", "7"],
      ];
      const { kind, env, dir } = datasetEnv(
        cases.map(([, gold], i) => ({ prompt: `q${i}`, answer: gold })),
        { scorer: "math_verify" },
      );
      await provision(kind, env, dir);
      const ours = [];
      for (const [i, [text]] of cases.entries()) ours.push((await answer(kind, env, i, text)).signals.correct);
      // The same pairs through math-verify's own parse and verify, in a Python of its own.
      const script = `import json, sys\nfrom math_verify import parse, verify\nout = []\nfor text, gold in json.load(sys.stdin):\n    g = parse(gold) or parse("$" + gold + "$")\n    out.append(bool(verify(g, parse(text))))\nprint(json.dumps(out))`;
      const theirs = JSON.parse(
        spawnSync(python, ["-c", script], { input: JSON.stringify(cases), encoding: "utf8" }).stdout,
      ) as boolean[];
      expect(ours).toEqual(theirs);
      // The cases mean what they say: the close wrong answers are wrong (and to math-verify 10% is 0.1, not 10).
      expect(theirs).toEqual([true, true, true, true, false, false, true, false, true, false, false]);
    }, 120_000);

    it("calls a veRL compute_score unchanged: a float, a dict with acc and extra signals", async () => {
      const reward = `def compute_score(data_source, solution_str, ground_truth, extra_info=None):\n    ok = solution_str.strip() == str(ground_truth)\n    if data_source == "dict":\n        return {"score": 0.5 if ok else -1.0, "acc": ok, "length": len(solution_str), "pred": solution_str}\n    return 1.0 if ok else 0.0\n`;
      const { kind, env, dir } = datasetEnv(
        [
          { prompt: "a", answer: "4", data_source: "float" },
          { prompt: "b", answer: "4", data_source: "dict", extra_info: { k: 1 } },
        ],
        { scorer: "verl" },
        { "reward.py": reward },
      );
      await provision(kind, env, dir);
      expect((await answer(kind, env, 0, "4")).signals).toEqual({
        score: 1,
        correct: true,
        answered: true,
        success: true,
      });
      expect((await answer(kind, env, 1, "4")).signals).toEqual({
        score: 0.5,
        acc: true,
        length: 1,
        correct: true,
        answered: true,
        success: true,
      });
      expect((await answer(kind, env, 1, "5")).signals).toMatchObject({ score: -1, correct: false });
    }, 60_000);

    it("calls a TRL reward function unchanged, with the row's columns as lists", async () => {
      const reward = `def reward_len(completions, solution, **kwargs):\n    return [1.0 if c == s else 0.0 for c, s in zip(completions, solution)]\n`;
      const { kind, env, dir } = datasetEnv(
        [{ prompt: "a", answer: "x", solution: "yes" }],
        { scorer: "trl", function: "reward_len" },
        { "reward.py": reward },
      );
      await provision(kind, env, dir);
      expect((await answer(kind, env, 0, "yes")).signals).toMatchObject({ score: 1, correct: true });
      expect((await answer(kind, env, 0, "no")).signals).toMatchObject({ score: 0, correct: false });
    }, 60_000);

    it("a verifier that raises or hangs is an env error for that episode (traceback in env-host.log); the host serves the next", async () => {
      const reward = `import time\n\ndef compute_score(data_source, solution_str, ground_truth, extra_info=None):\n    if solution_str == "raise":\n        raise ValueError("cannot score this")\n    if solution_str == "hang":\n        while True:\n            time.sleep(0.01)\n    if solution_str == "text":\n        return "high"\n    return 1.0\n`;
      const { kind, env, dir } = datasetEnv(
        [{ prompt: "a", answer: "1" }],
        { scorer: "verl", timeout_s: 1 },
        { "reward.py": reward },
      );
      await provision(kind, env, dir);
      const raised = answer(kind, env, 0, "raise");
      await expect(raised).rejects.toThrow(EnvError);
      await expect(raised).rejects.toThrow(
        "the verifier 'compute_score' (reward.py) raised on row 0 (rows.jsonl:1): ValueError: cannot score this (traceback in env-host.log)",
      );
      expect(readFileSync(path.join(dir, "env-host.log"), "utf8")).toContain('raise ValueError("cannot score this")');
      const hung = answer(kind, env, 0, "hang");
      await expect(hung).rejects.toThrow(/timed out on row 0.*limit of 1 s/);
      await expect(hung).rejects.toMatchObject({ kind: "timeout" });
      await expect(answer(kind, env, 0, "text")).rejects.toThrow("compute_score's result is a str, not a number");
      expect((await answer(kind, env, 0, "fine")).signals).toMatchObject({ score: 1 });
    }, 60_000);

    it("a verifier file that does not define the function refuses at provision, naming the file", async () => {
      const { kind, env, dir } = datasetEnv(
        [{ prompt: "a", answer: "1" }],
        { scorer: "verl", function: "score_it" },
        { "reward.py": "def compute_score(*a):\n    return 1.0\n" },
      );
      await expect(provision(kind, env, dir)).rejects.toThrow(
        /^dataset env 't': cannot load the verifier 'score_it' from 'reward.py': \/.*\/reward\.py does not define 'score_it'$/,
      );
      const broken = datasetEnv(
        [{ prompt: "a", answer: "1" }],
        { scorer: "verl" },
        { "reward.py": "import not_a_module_arl\n" },
      );
      await expect(provision(broken.kind, broken.env, broken.dir)).rejects.toThrow(
        /cannot load the verifier 'compute_score' from 'reward.py': ModuleNotFoundError: No module named 'not_a_module_arl'/,
      );
    }, 60_000);
  },
);

describe("dataset data files", () => {
  const spec = (fields: string) => `import "std/envs/dataset" as dataset
experiment e {
  policy { model: "builtin:tiny" }
  rollout { iterations: 1, tasks_per_batch: 1 }
  algorithm { group_size: 2 }
  env q extends dataset.task {
${fields}
  }
}
`;

  it("confines the rows and the verifier to the experiment's folder: refused at lowering and, in a plan, at run time, never read", async () => {
    const outside = mkdtempSync(path.join(tmpdir(), "arl-dataset-outside-"));
    writeFileSync(path.join(outside, "secret.jsonl"), '{"prompt": "secret", "answer": "do not read"}\n');
    writeFileSync(path.join(outside, "secret.py"), "def compute_score(*a):\n    return 1.0\n");
    const { env, dir } = datasetEnv([{ prompt: "1+1?", answer: "2" }]);
    writeFileSync(
      path.join(dir, "reward.py"),
      "def compute_score(data_source, solution_str, ground_truth, extra_info=None):\n    return 1.0\n",
    );
    const rel = (name: string) => JSON.stringify(path.relative(dir, path.join(outside, name)));
    const cases = [
      { fields: `    data: ${rel("secret.jsonl")}`, line: 7 },
      { fields: `    data: "./rows.jsonl"\n    scorer: verl\n    verifier: ${rel("secret.py")}`, line: 9 },
    ];
    for (const { fields, line } of cases) {
      writeFileSync(path.join(dir, "spec.arl"), spec(fields));
      const result = new Compiler().check(path.join(dir, "spec.arl"));
      expect(result.diagnostics.filter((d) => d.severity === "error").map((d) => [d.code, d.range.start.line])).toEqual(
        [["data-file-outside-root", line]],
      );
    }
    // A plan naming them (written by hand, or lowered elsewhere) is refused at run time.
    const rows = {
      ...env,
      data: { path: path.relative(dir, path.join(outside, "secret.jsonl")), sha256: "0".repeat(64) },
    };
    await expect(createDatasetEnv({ root: dir, python }).create(rows, 0, 0)).rejects.toThrow(
      /is refused: .* it was not read/,
    );
    expect(() =>
      verifyPlanDataFiles(
        {
          q: {
            ...env,
            verifier: { path: path.relative(dir, path.join(outside, "secret.py")), sha256: "0".repeat(64) },
          },
        },
        dir,
      ),
    ).toThrow(/verifier file .* is refused: .* it was not read/);
  });
});
